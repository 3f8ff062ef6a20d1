package auth

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestGate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tt := range []struct {
		name         string
		atOnce       int
		every        time.Duration
		burst, taken int // turns taken and kept before the one tried
		ctx          context.Context
		wantErr      error
	}{
		{"OK", 2, time.Hour, 2, 1, ctx, nil},
		{"OKNoRate", 1, 0, 1, 0, ctx, nil},
		{"ErrAllInUse", 2, 0, 1, 2, cancelled, context.Canceled},
		{"ErrBurstSpent", 4, time.Hour, 2, 2, cancelled, context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate(tt.atOnce, tt.every, tt.burst)
			for range tt.taken {
				if _, err := g.enter(ctx); err != nil {
					t.Fatal(err)
				}
			}
			leave, err := g.enter(tt.ctx)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil {
				leave()
			}
		})
	}
}

func TestGateLeave(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGate(1, 0, 1)
	leave, err := g.enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leave()
	if _, err := g.enter(ctx); err != nil {
		t.Fatalf("after leave: %v", err)
	}
}

// A lookup whose turn would come after its context's deadline waits for
// the deadline and takes no turn, so that refused lookups do not push the
// turns of later ones further away.
func TestGatePastDeadline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGate(1, time.Hour, 1)
	if _, err := g.enter(ctx); err != nil {
		t.Fatal(err)
	}
	next := g.tat
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if _, err := g.enter(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if !g.tat.Equal(next) {
		t.Errorf("the next turn moved from %v to %v", next, g.tat)
	}
}
