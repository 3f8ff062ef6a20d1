package pgfault_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/informe/informe/internal/pgfault"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// through starts a proxy to a fresh database and returns it with the
// database's URL, direct and through the proxy.
func through(t *testing.T) (p *pgfault.Proxy, direct, proxied string) {
	t.Helper()
	pool := pgtest.New(t)
	cfg := pool.Config().ConnConfig
	p, err := pgfault.Start(net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	direct = pool.Config().ConnString()
	proxied, err = p.URL(direct)
	if err != nil {
		t.Fatal(err)
	}
	return p, direct, proxied
}

func connect(t *testing.T, ctx context.Context, u string) (*pgx.Conn, error) {
	t.Helper()
	c, err := pgx.Connect(ctx, u)
	if err == nil {
		t.Cleanup(func() { c.Close(context.Background()) })
	}
	return c, err
}

// rows reads the rows of a query of many messages, of many sizes, and
// returns their number and the sum of their lengths.
func rows(ctx context.Context, c *pgx.Conn) (n, size int, err error) {
	rs, err := c.Query(ctx, "SELECT i, repeat('x', i % 3000) FROM generate_series(1, 20000) i")
	if err != nil {
		return 0, 0, err
	}
	defer rs.Close()
	for rs.Next() {
		var i int
		var s string
		if err := rs.Scan(&i, &s); err != nil {
			return n, size, err
		}
		n++
		size += len(s)
	}
	return n, size, rs.Err()
}

func TestPass(t *testing.T) {
	_, direct, proxied := through(t)
	ctx := context.Background()
	var want [2]int
	for i, u := range []string{direct, proxied} {
		c, err := connect(t, ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		n, size, err := rows(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			want = [2]int{n, size}
		} else if got := [2]int{n, size}; got != want {
			t.Errorf("through the proxy: %d rows of %d bytes; directly %d of %d", n, size, want[0], want[1])
		}
	}
}

func TestResetAtConnect(t *testing.T) {
	p, _, proxied := through(t)
	ctx := context.Background()
	open, err := connect(t, ctx, proxied)
	if err != nil {
		t.Fatal(err)
	}
	p.Set(pgfault.ResetAtConnect)
	if _, err := open.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a connection open before the fault still answers")
	}
	if _, err := connect(t, ctx, proxied); err == nil {
		t.Error("a new connection was made")
	}
	if got := p.Resets(); got < 2 {
		t.Errorf("Resets() = %d, want at least 2", got)
	}
	p.Set(pgfault.Pass)
	if _, err := connect(t, ctx, proxied); err != nil {
		t.Errorf("after the fault: %v", err)
	}
}

func TestResetAtRow(t *testing.T) {
	p, _, proxied := through(t)
	ctx := context.Background()
	c, err := connect(t, ctx, proxied)
	if err != nil {
		t.Fatal(err)
	}
	p.Arm(pgfault.ResetAtRow, 2)
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatalf("a row of one field was reset: %v", err)
	}
	n, _, err := rows(ctx, c)
	if err == nil || n != 0 {
		t.Errorf("the first row of two fields: read %d rows, error %v; want none and an error", n, err)
	}
	if got := p.Resets(); got != 1 {
		t.Errorf("Resets() = %d, want 1", got)
	}
}

func TestBlackHole(t *testing.T) {
	p, _, proxied := through(t)
	ctx := context.Background()
	open, err := connect(t, ctx, proxied)
	if err != nil {
		t.Fatal(err)
	}
	p.Set(pgfault.BlackHole)
	// Nothing answers: each call ends at its own deadline, whenever that is.
	for _, f := range []func(context.Context) error{
		func(ctx context.Context) error { _, err := open.Exec(ctx, "SELECT 1"); return err },
		func(ctx context.Context) error { _, err := connect(t, ctx, proxied); return err },
	} {
		dctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		err := f(dctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(dctx.Err(), context.DeadlineExceeded) {
			t.Errorf("a black-holed call ended with %v before its deadline", err)
		}
	}
	p.Set(pgfault.Pass)
	if _, err := connect(t, ctx, proxied); err != nil {
		t.Errorf("after the fault: %v", err)
	}
}
