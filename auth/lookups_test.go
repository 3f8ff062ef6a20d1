package auth_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// clock is a time that moves only when told.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// newStore returns a store on a database of its own, reading the time
// from the clock it returns.
func newStore(t testing.TB) (*auth.Store, *pgxpool.Pool, *clock) {
	t.Helper()
	pool := pgtest.New(t)
	c := &clock{t: time.Now()}
	tokens := auth.NewStore(pool)
	tokens.SetClock(c.now)
	return tokens, pool, c
}

// madeUp returns a well-formed token that no store issued, distinct for
// each i.
func madeUp(i int) string { return fmt.Sprintf("informe_%043d", i) }

// lookups is the number of times tokens went to the database.
func lookups(tokens *auth.Store) uint64 {
	st := tokens.Stats()
	return st.KnownLookups + st.UnseenLookups
}

// isInvalid fails t unless err is the API's one refusal.
func isInvalid(t *testing.T, err error) {
	t.Helper()
	if got, want := failure.CodeOf(err), failure.Unauthorized; got != want {
		t.Fatalf("code = %v, want %v (err %v)", got, want, err)
	}
	if got, want := failure.MessageOf(err), auth.InvalidToken; got != want {
		t.Fatalf("message = %q, want %q", got, want)
	}
}

func TestRefusalRemembered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokens, _, c := newStore(t)
	expired, err := tokens.Create(ctx, "expired", nil, c.now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := tokens.Create(ctx, "revoked", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tokens.Revoke(ctx, "revoked"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, secret string
		reason       error
	}{
		{"Unknown", madeUp(1), auth.ErrUnknown},
		{"Expired", expired, auth.ErrExpired},
		{"Revoked", revoked, auth.ErrRevoked},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := lookups(tokens)
			_, err := tokens.Authenticate(ctx, tt.secret)
			isInvalid(t, err)
			if got, want := lookups(tokens), before+1; got != want {
				t.Fatalf("lookups after the first use = %d, want %d", got, want)
			}
			// Within RefusalTTL, from memory, for the API and for signing
			// in, with the reason the database gave.
			c.advance(auth.RefusalTTL - time.Millisecond)
			_, err = tokens.Authenticate(ctx, tt.secret)
			isInvalid(t, err)
			if _, err := tokens.Check(ctx, tt.secret); !errors.Is(err, tt.reason) {
				t.Errorf("Check from memory = %v, want %v", err, tt.reason)
			}
			if got, want := lookups(tokens), before+1; got != want {
				t.Fatalf("lookups within RefusalTTL = %d, want %d", got, want)
			}
			// Past it, the database is asked again.
			c.advance(time.Millisecond)
			_, err = tokens.Authenticate(ctx, tt.secret)
			isInvalid(t, err)
			if got, want := lookups(tokens), before+2; got != want {
				t.Fatalf("lookups past RefusalTTL = %d, want %d", got, want)
			}
		})
	}
	if got, want := tokens.Stats().Remembered, uint64(6); got != want {
		t.Errorf("remembered = %d, want %d", got, want)
	}
}

// A token refused before the database held it (a read replica behind the
// primary) is accepted once RefusalTTL has passed, not later.
func TestCreatedAfterRefusal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokens, pool, c := newStore(t)
	secret := madeUp(7)
	_, err := tokens.Authenticate(ctx, secret)
	isInvalid(t, err)

	// The token appears with that secret: Create, then its hash replaced.
	if _, err := tokens.Create(ctx, "late", nil, time.Time{}); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(secret))
	if _, err := pool.Exec(ctx, "UPDATE api_tokens SET token_hash = $1 WHERE name = 'late'", h[:]); err != nil {
		t.Fatal(err)
	}
	c.advance(auth.RefusalTTL - time.Millisecond)
	_, err = tokens.Authenticate(ctx, secret)
	isInvalid(t, err)
	c.advance(time.Millisecond)
	p, err := tokens.Authenticate(ctx, secret)
	if err != nil {
		t.Fatalf("RefusalTTL after it was refused: %v", err)
	}
	if got, want := p.Name, "late"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
}

// Valid tokens are looked up on every use, so that a revocation takes
// effect at once, and are remembered as known.
func TestRevokedAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokens, _, _ := newStore(t)
	secret, err := tokens.Create(ctx, "a", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := tokens.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	st := tokens.Stats()
	if got, want := [2]uint64{st.UnseenLookups, st.KnownLookups}, [2]uint64{1, 2}; got != want {
		t.Errorf("unseen, known lookups = %v, want %v", got, want)
	}
	if err := tokens.Revoke(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	_, err = tokens.Authenticate(ctx, secret)
	isInvalid(t, err)
	// Signing in says why, from memory.
	if _, err := tokens.Check(ctx, secret); !errors.Is(err, auth.ErrRevoked) {
		t.Errorf("Check = %v, want ErrRevoked", err)
	}
}

func TestMalformedNeverLookedUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokens, _, _ := newStore(t)
	for i, secret := range []string{
		"",
		"hello",
		madeUp(1)[len("informe_"):],
		madeUp(1)[:len(madeUp(1))-1],
		madeUp(1) + "A",
		"informe_" + string(make([]byte, 43)),
		"INFORME_" + madeUp(1)[len("informe_"):],
		"informe_" + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmno+/",
	} {
		_, err := tokens.Authenticate(ctx, secret)
		isInvalid(t, err)
		if got, want := tokens.Stats().Malformed, uint64(i+1); got != want {
			t.Fatalf("case %d: malformed = %d, want %d", i, got, want)
		}
	}
	if got := lookups(tokens); got != 0 {
		t.Errorf("lookups = %d, want none", got)
	}
}

// A flood of distinct made-up tokens never holds more refusals than the
// bound, and the latest are the ones remembered.
func TestRefusalsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokens, _, _ := newStore(t)
	const held, n = 16, 5 * 16
	tokens.SetRefusalsHeld(held)
	tokens.SetTurns(2, 0, 1)
	for i := range n {
		_, err := tokens.Authenticate(ctx, madeUp(i))
		isInvalid(t, err)
		if got := tokens.Stats().Remembering; got > held {
			t.Fatalf("after %d tokens: %d refusals held, want at most %d", i+1, got, held)
		}
	}
	if got, want := tokens.Stats().Remembering, held; got != want {
		t.Errorf("refusals held = %d, want %d", got, want)
	}
	if got, want := lookups(tokens), uint64(n); got != want {
		t.Fatalf("lookups = %d, want %d", got, want)
	}
	for i := n - held; i < n; i++ {
		if _, err := tokens.Authenticate(ctx, madeUp(i)); err == nil {
			t.Fatal("a made-up token was accepted")
		}
	}
	if got, want := lookups(tokens), uint64(n); got != want {
		t.Errorf("lookups of the latest tokens again = %d, want %d (remembered)", got, want)
	}
	if _, err := tokens.Authenticate(ctx, madeUp(0)); err == nil {
		t.Fatal("a made-up token was accepted")
	}
	if got, want := lookups(tokens), uint64(n+1); got != want {
		t.Errorf("lookups of the first token again = %d, want %d (forgotten)", got, want)
	}
}

// While made-up tokens wait for turns that do not come, a known token is
// looked up at once.
func TestKnownTokensSkipTheTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokens, _, _ := newStore(t)
	tokens.SetTurns(1, time.Hour, 1) // one turn, then none for an hour
	secret, err := tokens.Create(ctx, "a", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Authenticate(ctx, secret); err != nil {
		t.Fatal(err) // the one turn
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := tokens.Authenticate(short, madeUp(1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a made-up token without a turn: err = %v, want the context's deadline", err)
	}
	if _, err := tokens.Authenticate(ctx, secret); err != nil {
		t.Fatalf("the known token: %v", err)
	}
	st := tokens.Stats()
	if got, want := [3]uint64{st.UnseenLookups, st.KnownLookups, st.Busy}, [3]uint64{1, 1, 1}; got != want {
		t.Errorf("unseen, known lookups, busy = %v, want %v", got, want)
	}
}
