package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

func seeded(tb testing.TB) *pgxpool.Pool { return pgtest.Seeded(tb) }

func queryInt(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) int64 {
	return pgtest.Int(tb, pool, sql, args...)
}

func queryString(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) string {
	return pgtest.String(tb, pool, sql, args...)
}
