package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// EnsureDatabase creates the database name on the server whose
// maintenance database url names, unless it exists: a private server's
// first start (the demo's, the benchmark's, a test's).
func EnsureDatabase(ctx context.Context, url, name string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if exists {
		return nil
	}
	if err := CreateDatabase(ctx, conn, name, ""); err != nil {
		return fmt.Errorf("server: create database: %w", err)
	}
	return nil
}

// CreateDatabase creates the database name, a copy of the database
// template when that is not "" (a test's, from its migrated template).
func CreateDatabase(ctx context.Context, q Execer, name, template string) error {
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		sql += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	_, err := q.Exec(ctx, sql)
	return err
}

// DropDatabase drops the database name, if it exists, ending the sessions
// still on it.
func DropDatabase(ctx context.Context, q Execer, name string) error {
	_, err := q.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

// NoRows returns the statement that reads no row of relation (a table or
// a view): its result's fields are the relation's columns, in order.
func NoRows(relation string) string {
	return "SELECT * FROM " + pgx.Identifier{relation}.Sanitize() + " LIMIT 0"
}
