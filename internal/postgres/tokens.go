package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ruleColumns are api_tokens' columns of a token's rules, in the order
// of [TokenRules.values] and [TokenRules.dest].
const ruleColumns = "rule_columns, rule_no_personal, rule_mask, rule_rows, rule_max_rows"

// TokenRules are a token's rules as api_tokens holds them: a nil slice or
// pointer is NULL.
type TokenRules struct {
	Columns    []string
	NoPersonal bool
	Mask       []string
	Rows       *string
	MaxRows    *int64
}

// values returns r as the values of ruleColumns, NULLs for nil.
func (r TokenRules) values() []any {
	v := []any{nil, r.NoPersonal, nil, nil, nil}
	if r.Columns != nil {
		v[0] = r.Columns
	}
	if r.Mask != nil {
		v[2] = r.Mask
	}
	if r.Rows != nil {
		v[3] = *r.Rows
	}
	if r.MaxRows != nil {
		v[4] = *r.MaxRows
	}
	return v
}

func (r *TokenRules) dest() []any {
	return []any{&r.Columns, &r.NoPersonal, &r.Mask, &r.Rows, &r.MaxRows}
}

// TokenRow is a row of api_tokens, without its hash.
type TokenRow struct {
	Name       string
	Scopes     []string
	CreatedAt  time.Time // not read by [TokenByHash]
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	MaxExports *int
	Rules      TokenRules
}

// InsertToken inserts the token t (its CreatedAt and RevokedAt are the
// database's) with hash, the SHA-256 of its secret. A name already in use
// is [ErrNameTaken].
func InsertToken(ctx context.Context, q Querier, t TokenRow, hash []byte) error {
	_, err := q.Exec(ctx,
		"INSERT INTO api_tokens (name, token_hash, scopes, expires_at, max_exports, "+ruleColumns+
			") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
		append([]any{t.Name, hash, t.Scopes, t.ExpiresAt, t.MaxExports}, t.Rules.values()...)...)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "api_tokens_name_key" {
		return ErrNameTaken
	}
	return err
}

// Tokens returns every token, by name.
func Tokens(ctx context.Context, q Querier) ([]TokenRow, error) {
	return tokens(ctx, q, "ORDER BY name")
}

// TokenNamed returns the token named name, and false if there is none;
// with forUpdate it locks the token's row until q's transaction ends.
func TokenNamed(ctx context.Context, q Querier, name string, forUpdate bool) (TokenRow, bool, error) {
	lock := ""
	if forUpdate {
		lock = " FOR UPDATE"
	}
	ts, err := tokens(ctx, q, "WHERE name = $1"+lock, name)
	if err != nil || len(ts) == 0 {
		return TokenRow{}, false, err
	}
	return ts[0], true, nil
}

// tokens reads the tokens that the SQL after FROM, where, selects.
func tokens(ctx context.Context, q Querier, where string, args ...any) ([]TokenRow, error) {
	rows, err := q.Query(ctx,
		"SELECT name, scopes, created_at, expires_at, revoked_at, max_exports, "+ruleColumns+" FROM api_tokens "+where, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (TokenRow, error) {
		var t TokenRow
		err := r.Scan(append([]any{&t.Name, &t.Scopes, &t.CreatedAt, &t.ExpiresAt, &t.RevokedAt, &t.MaxExports}, t.Rules.dest()...)...)
		return t, err
	})
}

// TokenByHash returns the token whose secret's SHA-256 is hash, and false
// if there is none.
func TokenByHash(ctx context.Context, q Querier, hash []byte) (TokenRow, bool, error) {
	var t TokenRow
	err := q.QueryRow(ctx,
		"SELECT name, scopes, expires_at, revoked_at, max_exports, "+ruleColumns+" FROM api_tokens WHERE token_hash = $1",
		hash).Scan(append([]any{&t.Name, &t.Scopes, &t.ExpiresAt, &t.RevokedAt, &t.MaxExports}, t.Rules.dest()...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return TokenRow{}, false, nil
	}
	return t, err == nil, err
}

// SetTokenMaxExports sets the own limit of big responses at once of the
// token named name, and returns how many tokens it changed (0 or 1).
func SetTokenMaxExports(ctx context.Context, q Querier, name string, n *int) (int64, error) {
	tag, err := q.Exec(ctx, "UPDATE api_tokens SET max_exports = $2 WHERE name = $1", name, n)
	return tag.RowsAffected(), err
}

// SetTokenScopes replaces the scopes of the token named name, and returns
// how many tokens it changed (0 or 1).
func SetTokenScopes(ctx context.Context, q Querier, name string, scopes []string) (int64, error) {
	tag, err := q.Exec(ctx, "UPDATE api_tokens SET scopes = $2 WHERE name = $1", name, scopes)
	return tag.RowsAffected(), err
}

// SetTokenRules replaces the rules of the token named name, and returns
// how many tokens it changed (0 or 1).
func SetTokenRules(ctx context.Context, q Querier, name string, r TokenRules) (int64, error) {
	tag, err := q.Exec(ctx,
		"UPDATE api_tokens SET ("+ruleColumns+") = ($2, $3, $4, $5, $6) WHERE name = $1", append([]any{name}, r.values()...)...)
	return tag.RowsAffected(), err
}

// RevokeToken revokes the token named name unless it is revoked already,
// and returns how many tokens it revoked (0 or 1).
func RevokeToken(ctx context.Context, q Querier, name string) (int64, error) {
	tag, err := q.Exec(ctx,
		"UPDATE api_tokens SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL", name)
	return tag.RowsAffected(), err
}

// DeleteToken removes the token named name, if there is one.
func DeleteToken(ctx context.Context, q Querier, name string) error {
	_, err := q.Exec(ctx, "DELETE FROM api_tokens WHERE name = $1", name)
	return err
}
