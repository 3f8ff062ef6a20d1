// Package auth issues and checks API bearer tokens. A token is shown once,
// when it is created; the database keeps only its SHA-256. Tokens carry
// scopes, may expire, and can be revoked by name.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/secret"
)

// Scopes are the scopes a new token gets when none is asked for: the
// data's. The others (schedules:read, which shows where scheduled files
// go; audit:read, which shows who read what) are given only when asked
// for.
var Scopes = []dataset.Scope{dataset.ReportRead, dataset.UsersRead}

// Known are all scopes ([dataset.Scope]) a token may be given: those of
// the datasets, in the order of [dataset.All].
var Known = dataset.Scopes()

// ParseScope returns s as a [dataset.Scope], or an error naming the known scopes.
func ParseScope(s string) (dataset.Scope, error) {
	if slices.Contains(Known, dataset.Scope(s)) {
		return dataset.Scope(s), nil
	}
	known := make([]string, len(Known))
	for i, sc := range Known {
		known[i] = string(sc)
	}
	return "", failure.Errorf(failure.Invalid, "unknown scope %q: known scopes are %s", s, strings.Join(known, ", "))
}

// ParseScopes returns list as Scopes (nil for an empty list), or the error
// of [ParseScope] for the first that is not one.
func ParseScopes(list []string) ([]dataset.Scope, error) {
	var scopes []dataset.Scope
	for _, s := range list {
		sc, err := ParseScope(s)
		if err != nil {
			return nil, err
		}
		scopes = append(scopes, sc)
	}
	return scopes, nil
}

// InvalidToken is the message of every authentication failure, as the API
// spec requires; it never says which check failed.
const InvalidToken = "Invalid Token"

// errInvalid is returned for missing, malformed, unknown, expired and
// revoked tokens alike.
var errInvalid = failure.Errorf(failure.Unauthorized, InvalidToken)

// prefix marks informe tokens, so that secret scanners can recognise them.
const prefix = secret.TokenPrefix

// bodyLen is the length of the base64url text of a token's random bytes.
const bodyLen = secret.TokenBodyLen

// Token describes an issued token; it never holds the secret.
type Token struct {
	Name      string
	Scopes    []dataset.Scope
	CreatedAt time.Time
	ExpiresAt *time.Time
	RevokedAt *time.Time
	// MaxExports is the token's own limit of big responses at once; nil
	// follows the server's default, 0 is no limit of its own.
	MaxExports *int
	// Rules are what it may see besides its scopes; nil for none.
	Rules *dataset.Rules
}

// Principal is who a request acts as: the token's name and scopes, and
// its own limit of big responses at once (nil: the server's default).
type Principal struct {
	Name       string
	Scopes     []dataset.Scope
	MaxExports *int
	// Rules are what it may see besides its scopes (source.Restrict);
	// nil for a token without any, which sees every column and row.
	Rules *dataset.Rules
}

// Allows reports whether p carries scope.
func (p Principal) Allows(scope dataset.Scope) bool { return slices.Contains(p.Scopes, scope) }

// Store keeps tokens in the api_tokens table. It remembers, by hash, the
// tokens the database refused, for [RefusalTTL], and those it found valid,
// whose every use is still looked up (a revocation takes effect at once)
// but never waits behind the lookups of tokens not seen valid, which take
// turns; see [Store.Check].
type Store struct {
	pool    *pgxpool.Pool
	db      postgres.Querier // pool, or the transaction of [Store.Atomic]
	now     func() time.Time
	refused *ring[refusal]
	known   *ring[struct{}]
	unseen  *gate
	counts  counts
}

// NewStore returns a Store on pool.
func NewStore(pool *pgxpool.Pool) *Store {
	return &Store{
		pool:    pool,
		db:      pool,
		now:     time.Now,
		refused: newRing[refusal](refusalsHeld),
		known:   newRing[struct{}](knownHeld),
		unseen:  newGate(unseenAtOnce, unseenEvery, unseenBurst),
	}
}

// Atomic runs change with a Store whose changes ([Store.Create],
// [Store.SetRules], [Store.SetScopes], [Store.SetMaxExports], [Store.Revoke]) are made in one
// transaction, tx, committed when change returns nil and rolled back
// otherwise: what change writes through tx besides (the audit record of
// the change) is committed with the change or not at all. It returns
// change's error, or the transaction's, classified as the database's.
func (s *Store) Atomic(ctx context.Context, change func(tokens *Store, tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return postgres.Classify(fmt.Errorf("auth: begin: %w", err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	in := &Store{pool: s.pool, db: tx, now: s.now, refused: s.refused, known: s.known, unseen: s.unseen}
	if err := change(in, tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return postgres.Classify(fmt.Errorf("auth: commit: %w", err))
	}
	return nil
}

// Option is a setting of a token given to [Store.Create].
type Option func(*settings)

// settings are a token's settings beyond its name, scopes and expiry.
type settings struct {
	maxExports *int
	rules      *dataset.Rules
}

// WithRules gives a token rules of what it may see (nil or empty: none);
// the caller has checked them (source.CheckRules).
func WithRules(r *dataset.Rules) Option { return func(s *settings) { s.rules = r } }

// MaxExports gives a token its own limit of big responses at once (nil:
// the server's default, 0: no limit of its own); see [ParseMaxExports].
func MaxExports(n *int) Option { return func(s *settings) { s.maxExports = n } }

// Create issues a token named name with the given scopes (all scopes when
// none are given) that expires at expires (never when zero), with opts,
// and returns its secret, which is not kept. A name already in use is a
// failure.Conflict.
func (s *Store) Create(ctx context.Context, name string, scopes []dataset.Scope, expires time.Time, opts ...Option) (string, error) {
	var set settings
	for _, o := range opts {
		o(&set)
	}
	if strings.TrimSpace(name) == "" {
		return "", failure.Errorf(failure.Invalid, "token name must not be empty")
	}
	if len(scopes) == 0 {
		scopes = Scopes
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("auth: %w", err)
	}
	secret := prefix + base64.RawURLEncoding.EncodeToString(raw)
	hash := sha256.Sum256([]byte(secret))
	var exp *time.Time
	if !expires.IsZero() {
		exp = &expires
	}
	err := postgres.InsertToken(ctx, s.db, postgres.TokenRow{
		Name: name, Scopes: scopeStrings(scopes), ExpiresAt: exp, MaxExports: set.maxExports, Rules: ruleValues(set.rules),
	}, hash[:])
	if errors.Is(err, postgres.ErrNameTaken) {
		return "", failure.Errorf(failure.Conflict, "a token named %q already exists", name)
	}
	if err != nil {
		return "", postgres.Classify(fmt.Errorf("auth: create: %w", err))
	}
	return secret, nil
}

// List returns all tokens, revoked and expired ones included, by name.
func (s *Store) List(ctx context.Context) ([]Token, error) {
	rows, err := postgres.Tokens(ctx, s.db)
	if err != nil {
		return nil, postgres.Classify(fmt.Errorf("auth: list: %w", err))
	}
	tokens := make([]Token, 0, len(rows))
	for _, r := range rows {
		tokens = append(tokens, token(r))
	}
	return tokens, nil
}

// Get returns the token named name, revoked or expired. An unknown name
// is a failure.NotFound.
func (s *Store) Get(ctx context.Context, name string) (Token, error) {
	return s.get(ctx, name, false)
}

// GetForChange is [Store.Get] that locks the token's row until the
// transaction of [Store.Atomic] ends, so that a change made from what it
// read is never lost to another change of the same token made at once.
func (s *Store) GetForChange(ctx context.Context, name string) (Token, error) {
	return s.get(ctx, name, true)
}

func (s *Store) get(ctx context.Context, name string, forUpdate bool) (Token, error) {
	t, ok, err := postgres.TokenNamed(ctx, s.db, name, forUpdate)
	if err != nil {
		return Token{}, postgres.Classify(fmt.Errorf("auth: get: %w", err))
	}
	if !ok {
		return Token{}, notFound(name)
	}
	return token(t), nil
}

// notFound is the failure.NotFound of an unknown token name.
func notFound(name string) error {
	return failure.Errorf(failure.NotFound, "no token named %q", name)
}

// changed returns the error of a change of the token named name, called
// what, that changed n rows: err, classified; a failure.NotFound when
// no token has that name.
func changed(what, name string, n int64, err error) error {
	if err != nil {
		return postgres.Classify(fmt.Errorf("auth: %s: %w", what, err))
	}
	if n == 0 {
		return notFound(name)
	}
	return nil
}

// token returns the token of row r.
func token(r postgres.TokenRow) Token {
	t := Token{Name: r.Name, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt, MaxExports: r.MaxExports, Rules: rules(r.Rules)}
	for _, sc := range r.Scopes {
		t.Scopes = append(t.Scopes, dataset.Scope(sc))
	}
	return t
}

// SetMaxExports sets the own limit of big responses at once of the token
// named name (nil: the server's default, 0: no limit of its own); a
// server applies it from the token's next request. An unknown name is a
// failure.NotFound.
func (s *Store) SetMaxExports(ctx context.Context, name string, n *int) error {
	rows, err := postgres.SetTokenMaxExports(ctx, s.db, name, n)
	return changed("set max exports", name, rows, err)
}

// SetScopes replaces the scopes of the token named name (none: the
// default [Scopes], as [Store.Create] gives); a server applies them from
// the token's next request. An unknown name is a failure.NotFound.
func (s *Store) SetScopes(ctx context.Context, name string, scopes []dataset.Scope) error {
	if len(scopes) == 0 {
		scopes = Scopes
	}
	rows, err := postgres.SetTokenScopes(ctx, s.db, name, scopeStrings(scopes))
	return changed("set scopes", name, rows, err)
}

// ParseMaxExports reads a token's limit of big responses at once as
// written to informe token: "default" (nil: the server's default) or a
// whole number, 0 for no limit of its own. Anything else is a
// failure.Invalid.
func ParseMaxExports(s string) (*int, error) {
	if s == "default" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxExportsLimit {
		return nil, failure.Errorf(failure.Invalid,
			"max exports must be default or a whole number from 0 (no limit of its own) to %d", maxExportsLimit)
	}
	return &n, nil
}

// maxExportsLimit bounds a token's own limit, far above any --max-exports.
const maxExportsLimit = 1000

// Revoke revokes the token named name. An unknown name, or a token already
// revoked, is a failure.NotFound.
func (s *Store) Revoke(ctx context.Context, name string) error {
	revoked, err := postgres.RevokeToken(ctx, s.db, name)
	if err != nil {
		return postgres.Classify(fmt.Errorf("auth: revoke: %w", err))
	}
	if revoked == 0 {
		return failure.Errorf(failure.NotFound, "no active token named %q", name)
	}
	return nil
}

// Authenticate returns the principal of secret. Missing, malformed, unknown,
// expired and revoked tokens all give a failure.Unauthorized "Invalid Token";
// an unreachable database gives failure.Unavailable; a token not seen valid
// whose turn to be looked up did not come before ctx ended gives ctx's
// error (see [Store.Check]). It only reads, so it works against a read
// replica.
func (s *Store) Authenticate(ctx context.Context, secret string) (Principal, error) {
	p, err := s.Check(ctx, secret)
	if errors.Is(err, ErrUnknown) || errors.Is(err, ErrExpired) || errors.Is(err, ErrRevoked) {
		return Principal{}, errInvalid
	}
	return p, err
}

// Reasons [Store.Check] gives for refusing a token, to test with errors.Is.
// Each is a failure.Unauthorized.
var (
	// ErrUnknown: the text is not an informe token, or no such token was
	// issued (a token pasted in part, or from another installation).
	ErrUnknown = failure.Errorf(failure.Unauthorized, "this is not a token this informe issued")
	// ErrExpired: the token was issued with an expiry that has passed.
	ErrExpired = failure.Errorf(failure.Unauthorized, "this token has expired")
	// ErrRevoked: the token was revoked.
	ErrRevoked = failure.Errorf(failure.Unauthorized, "this token has been revoked")
)

// Check is [Store.Authenticate] for a person signing in, who is better
// served by knowing why a token is refused: it returns [ErrUnknown],
// [ErrExpired] or [ErrRevoked] rather than one message for all. The API
// itself never says which (the spec's "Invalid Token").
//
// A malformed token never reaches the database. A token the database
// refused within [RefusalTTL] is refused again from memory. A token seen
// valid before is looked up at once; any other waits for its turn (two at
// once, a hundred a second with bursts of ten), as long as ctx allows, and
// gets ctx's error if ctx ends first: a flood of made-up tokens takes two
// of the pool's connections at most, and never delays the known tokens.
func (s *Store) Check(ctx context.Context, secret string) (Principal, error) {
	if !wellFormed(secret) {
		s.counts.malformed.Add(1)
		return Principal{}, ErrUnknown
	}
	hash := sha256.Sum256([]byte(secret))
	if r, ok := s.refused.get(hash); ok {
		if age := s.now().Sub(r.at); age >= 0 && age < RefusalTTL {
			s.counts.remembered.Add(1)
			return Principal{}, r.reason
		}
	}
	if _, ok := s.known.get(hash); ok {
		s.counts.known.Add(1)
	} else {
		start := time.Now()
		leave, err := s.unseen.enter(ctx)
		s.counts.waited.Add(int64(time.Since(start)))
		if err != nil {
			s.counts.busy.Add(1)
			return Principal{}, err
		}
		defer leave()
		s.counts.unseen.Add(1)
	}
	p, err := s.lookUp(ctx, hash)
	switch {
	case err == nil:
		s.known.put(hash, struct{}{})
	case errors.Is(err, ErrUnknown) || errors.Is(err, ErrExpired) || errors.Is(err, ErrRevoked):
		s.known.remove(hash)
		s.refused.put(hash, refusal{at: s.now(), reason: err})
	}
	return p, err
}

// lookUp reads the token of hash from the database.
func (s *Store) lookUp(ctx context.Context, hash [32]byte) (Principal, error) {
	t, ok, err := postgres.TokenByHash(ctx, s.db, hash[:])
	if err != nil {
		return Principal{}, postgres.Classify(fmt.Errorf("auth: %w", err))
	}
	if !ok {
		return Principal{}, ErrUnknown
	}
	switch {
	case t.RevokedAt != nil:
		return Principal{}, ErrRevoked
	case t.ExpiresAt != nil && !s.now().Before(*t.ExpiresAt):
		return Principal{}, ErrExpired
	}
	p := Principal{Name: t.Name, MaxExports: t.MaxExports, Rules: rules(t.Rules)}
	for _, sc := range t.Scopes {
		p.Scopes = append(p.Scopes, dataset.Scope(sc))
	}
	return p, nil
}

// MayHoldToken reports whether s may hold an informe token: it holds the
// tokens' prefix, in any case, or something shaped like a token's body
// without it (see [secret.MayHoldToken]), so that logs, messages and links
// can leave it out.
func MayHoldToken(s string) bool { return secret.MayHoldToken(s) }

// wellFormed reports whether secret has the shape of an informe token, so
// that garbage never reaches the database.
func wellFormed(secret string) bool {
	body, ok := strings.CutPrefix(secret, prefix)
	if !ok || len(body) != bodyLen {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(body)
	return err == nil
}

func scopeStrings(scopes []dataset.Scope) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}

// Delete removes the token named name, if there is one.
func (s *Store) Delete(ctx context.Context, name string) error {
	if err := postgres.DeleteToken(ctx, s.db, name); err != nil {
		return postgres.Classify(fmt.Errorf("auth: delete: %w", err))
	}
	return nil
}

// Replace is [Store.Delete] of the token named name, if there is one,
// then [Store.Create] of a new one of that name, whose secret it returns:
// the demo replaces its token so on every start. The two are not one
// transaction: the old secret stops working before the new one exists.
func (s *Store) Replace(ctx context.Context, name string, scopes []dataset.Scope, expires time.Time, opts ...Option) (string, error) {
	if err := s.Delete(ctx, name); err != nil {
		return "", err
	}
	return s.Create(ctx, name, scopes, expires, opts...)
}
