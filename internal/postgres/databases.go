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
	exists, err := databaseExists(ctx, conn, name)
	if err != nil {
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
// template when that is not "" (a test's, from its migrated template). A
// copy is made file by file where PostgreSQL offers it (version 15 on):
// for the small databases of tests that is several times cheaper than
// writing every block to the WAL.
func CreateDatabase(ctx context.Context, conn *pgx.Conn, name, template string) error {
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		sql += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
		if serverMajor(conn.PgConn()) >= 15 {
			sql += " STRATEGY FILE_COPY"
		}
	}
	_, err := conn.Exec(ctx, sql)
	return err
}

// databaseExists reports whether the server of conn has the database name.
func databaseExists(ctx context.Context, conn *pgx.Conn, name string) (bool, error) {
	var exists bool
	err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	return exists, err
}

// BuildOnce makes the database name with build, once per server however
// many processes ask for it at the same time (tests that share a server):
// the first to come builds it under another name, given to build, and
// renames it when it is complete; the others wait for that and find it
// made. A build that failed or was cut leaves nothing under name.
func BuildOnce(ctx context.Context, conn *pgx.Conn, name string, build func(ctx context.Context, building string) error) error {
	// An advisory lock of the maintenance database, held by this session.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1))", name); err != nil {
		return err
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock(hashtext($1))", name)
	if exists, err := databaseExists(ctx, conn, name); err != nil || exists {
		return err
	}
	building := name + "_building"
	if err := DropDatabase(ctx, conn, building); err != nil {
		return err
	}
	if err := CreateDatabase(ctx, conn, building, ""); err != nil {
		return err
	}
	if err := build(ctx, building); err != nil {
		return err
	}
	_, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{building}.Sanitize()+" RENAME TO "+pgx.Identifier{name}.Sanitize())
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
