package auth_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestCreateAuthenticate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	tokens := auth.NewStore(pool)

	secret, err := tokens.Create(ctx, "finanzas", []dataset.Scope{dataset.ReportRead}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "informe_") || len(secret) != len("informe_")+43 {
		t.Fatalf("secret %q does not have the token shape", secret)
	}
	p, err := tokens.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Name, "finanzas"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	if !p.Allows(dataset.ReportRead) || p.Allows(dataset.UsersRead) {
		t.Errorf("scopes = %v, want only report:read", p.Scopes)
	}

	// Only the SHA-256 is stored, never the secret.
	var hashed, anywhere int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM api_tokens WHERE name = 'finanzas' AND token_hash = sha256(convert_to($1, 'UTF8'))", secret).Scan(&hashed); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM api_tokens t WHERE position($1 IN t::text) > 0 OR position(convert_to($1, 'UTF8') IN token_hash) > 0", secret).Scan(&anywhere); err != nil {
		t.Fatal(err)
	}
	if hashed != 1 || anywhere != 0 {
		t.Errorf("rows holding the hash = %d (want 1), rows holding the secret = %d (want 0)", hashed, anywhere)
	}

	all, err := tokens.Create(ctx, "todo", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	p, err = tokens.Authenticate(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Scopes, auth.Scopes) {
		t.Errorf("default scopes = %v, want %v", p.Scopes, auth.Scopes)
	}
}

func TestAuthenticateRejects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	tokens := auth.NewStore(pool)
	valid, err := tokens.Create(ctx, "valid", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	expired, err := tokens.Create(ctx, "expired", nil, time.Now().Add(-time.Minute))
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
	for _, tt := range []struct{ name, secret string }{
		{"Empty", ""},
		{"Garbage", "hello"},
		{"NoPrefix", strings.TrimPrefix(valid, "informe_")},
		{"Unknown", "informe_" + strings.Repeat("A", 43)},
		{"OneCharOff", valid[:len(valid)-1] + map[bool]string{true: "B", false: "A"}[valid[len(valid)-1] == 'A']},
		{"Truncated", valid[:len(valid)-1]},
		{"Expired", expired},
		{"Revoked", revoked},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tokens.Authenticate(ctx, tt.secret)
			if got, want := failure.CodeOf(err), failure.Unauthorized; got != want {
				t.Fatalf("code = %v, want %v (err %v)", got, want, err)
			}
			if got, want := failure.MessageOf(err), "Invalid Token"; got != want {
				t.Errorf("message = %q, want %q", got, want)
			}
		})
	}
}

func TestCreateListRevoke(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokens := auth.NewStore(pgtest.New(t))

	if _, err := tokens.Create(ctx, "a", nil, time.Time{}); err != nil {
		t.Fatal(err)
	}
	_, err := tokens.Create(ctx, "a", nil, time.Time{})
	if got, want := failure.CodeOf(err), failure.Conflict; got != want {
		t.Errorf("duplicate name: code = %v, want %v (err %v)", got, want, err)
	}
	_, err = tokens.Create(ctx, " ", nil, time.Time{})
	if got, want := failure.CodeOf(err), failure.Invalid; got != want {
		t.Errorf("blank name: code = %v, want %v", got, want)
	}
	exp := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	if _, err := tokens.Create(ctx, "b", []dataset.Scope{dataset.UsersRead}, exp); err != nil {
		t.Fatal(err)
	}
	if err := tokens.Revoke(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	err = tokens.Revoke(ctx, "a")
	if got, want := failure.CodeOf(err), failure.NotFound; got != want {
		t.Errorf("revoke twice: code = %v, want %v", got, want)
	}
	if err := tokens.Revoke(ctx, "nobody"); failure.CodeOf(err) != failure.NotFound {
		t.Errorf("revoke unknown: err = %v, want NotFound", err)
	}

	list, err := tokens.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(list), 2; got != want {
		t.Fatalf("len(list) = %d, want %d", got, want)
	}
	if list[0].Name != "a" || list[0].RevokedAt == nil {
		t.Errorf("token a = %+v, want revoked", list[0])
	}
	if list[1].Name != "b" || list[1].ExpiresAt == nil || !list[1].ExpiresAt.Equal(exp) || !slices.Equal(list[1].Scopes, []dataset.Scope{dataset.UsersRead}) {
		t.Errorf("token b = %+v, want users:read expiring %v", list[1], exp)
	}

	if err := tokens.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Create(ctx, "a", nil, time.Time{}); err != nil {
		t.Errorf("create after delete: %v", err)
	}
}

func TestParseScope(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"report:read", "users:read"} {
		if got, err := auth.ParseScope(s); err != nil || string(got) != s {
			t.Errorf("ParseScope(%q) = %q, %v", s, got, err)
		}
	}
	_, err := auth.ParseScope("admin")
	var fe *failure.Error
	if !errors.As(err, &fe) || !strings.Contains(fe.Message, "report:read") {
		t.Errorf("ParseScope(admin) = %v, want an error naming the known scopes", err)
	}
}

// TestAtomic checks that the changes made through Store.Atomic are
// committed with what else its transaction writes, or not at all, and
// that a token created without scopes gets the data's only: never
// audit:read or schedules:read.
func TestAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	tokens := auth.NewStore(pool)
	errRecord := errors.New("the record could not be written")
	for _, tt := range []struct {
		name   string
		record error // what the change's record gives
		want   error
	}{
		{"Commit", nil, nil},
		{"ErrRollback", errRecord, errRecord},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tokens.Atomic(ctx, func(in *auth.Store, tx pgx.Tx) error {
				if _, err := in.Create(ctx, tt.name, nil, time.Time{}); err != nil {
					return err
				}
				if err := in.Revoke(ctx, tt.name); err != nil {
					return err
				}
				// What the caller writes besides, in the same transaction.
				if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
					return err
				}
				return tt.record
			})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Atomic = %v, want %v", err, tt.want)
			}
			got, err := tokens.Get(ctx, tt.name)
			if tt.want != nil {
				if failure.CodeOf(err) != failure.NotFound {
					t.Errorf("Get after a rolled back change = %+v, %v: want no token", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.RevokedAt == nil {
				t.Error("the revocation made in the transaction was not committed")
			}
			for _, s := range []dataset.Scope{dataset.AuditRead, dataset.SchedulesRead} {
				if slices.Contains(got.Scopes, s) {
					t.Errorf("a token created without scopes has %s: %v", s, got.Scopes)
				}
			}
			if !slices.Equal(got.Scopes, auth.Scopes) {
				t.Errorf("scopes %v, want the default %v", got.Scopes, auth.Scopes)
			}
		})
	}
}

// TestChangeScopesLocked checks that a token's scopes are changed from its
// next request, and that a change reads the token locked (GetForChange):
// a second change of the same token made at once waits for the first and
// starts from what it wrote, so that neither is lost.
func TestChangeScopesLocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	tokens := auth.NewStore(pool)
	secret, err := tokens.Create(ctx, "hoja", []dataset.Scope{dataset.ReportRead}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	err = tokens.Atomic(ctx, func(in *auth.Store, _ pgx.Tx) error {
		return in.SetScopes(ctx, "hoja", []dataset.Scope{dataset.UsersRead})
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := auth.NewStore(pool).Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if p.Allows(dataset.ReportRead) || !p.Allows(dataset.UsersRead) {
		t.Errorf("after the change, scopes = %v, want users:read only", p.Scopes)
	}
	if err := tokens.SetScopes(ctx, "nadie", nil); failure.CodeOf(err) != failure.NotFound {
		t.Errorf("SetScopes of an unknown token: %v, want not found", err)
	}

	// The first change holds the token's row; the second, begun while it
	// does, must wait for it and read its max exports.
	first, firstRead := make(chan struct{}), make(chan struct{})
	goOn := sync.OnceFunc(func() { close(first) })
	defer goOn() // a failure below must not leave the first change waiting
	done := make(chan error, 1)
	go func() {
		done <- tokens.Atomic(ctx, func(in *auth.Store, _ pgx.Tx) error {
			if _, err := in.GetForChange(ctx, "hoja"); err != nil {
				return err
			}
			close(firstRead)
			<-first
			n := 5
			return in.SetMaxExports(ctx, "hoja", &n)
		})
	}()
	<-firstRead
	second := make(chan *int, 1)
	go func() {
		err := tokens.Atomic(ctx, func(in *auth.Store, _ pgx.Tx) error {
			tk, err := in.GetForChange(ctx, "hoja")
			second <- tk.MaxExports
			return err
		})
		if err != nil {
			t.Error(err)
		}
	}()
	// The second change is seen waiting for the row's lock before the
	// first one goes on.
	for waiting := false; !waiting; {
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if !waiting {
			select {
			case n := <-second:
				t.Fatalf("the second change read the token (max exports %v) while the first held it", n)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	goOn()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := <-second; n == nil || *n != 5 {
		t.Errorf("the second change read max exports %v, want the first change's 5", n)
	}
}
