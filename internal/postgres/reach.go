package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/failure"
)

// ErrUnreachable is the failure.Unavailable cause of [Acquiring] when no
// connection came in time and the database did not answer a connection of
// its own either: it is silent (a network that drops everything, a server
// that stopped answering), not busy.
var ErrUnreachable = errors.New("the database did not answer")

// UnreachableMessage is the client's message of a failure.Unavailable
// wrapping [ErrUnreachable].
const UnreachableMessage = "Service Unavailable: the database cannot be reached"

// ProbeTimeout bounds the connection [Acquiring] opens to tell a busy pool
// from a silent database.
const ProbeTimeout = 3 * time.Second

// probeFresh is how long one probe's answer stands for every request of
// the pool, so that a storm of waiting requests opens one connection a
// second at most.
const probeFresh = time.Second

// probes holds each pool's last answer, by pool.
var probes sync.Map // *pgxpool.Pool -> *probe

// probe is one pool's last answer to "does the database answer a new
// connection?", and the probe running now, if any.
type probe struct {
	mu      sync.Mutex
	at      time.Time     // when the last probe ended
	err     error         // its answer
	running chan struct{} // closed when the running probe ends; nil if none
}

// reachable reports whether pool's database answers a connection of its
// own, outside the pool, within [ProbeTimeout]: a new connection and a
// round trip, as the pool's connections are made. Concurrent callers share
// one probe, and an answer stands for [probeFresh].
func reachable(ctx context.Context, pool *pgxpool.Pool) error {
	v, _ := probes.LoadOrStore(pool, &probe{})
	pr := v.(*probe)
	for {
		pr.mu.Lock()
		if !pr.at.IsZero() && time.Since(pr.at) < probeFresh {
			err := pr.err
			pr.mu.Unlock()
			return err
		}
		if wait := pr.running; wait != nil {
			pr.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		done := make(chan struct{})
		pr.running = done
		pr.mu.Unlock()

		err := dial(context.WithoutCancel(ctx), pool)
		pr.mu.Lock()
		pr.at, pr.err, pr.running = time.Now(), err, nil
		pr.mu.Unlock()
		close(done)
		return err
	}
}

// dial opens a connection to pool's database as the pool would, pings it
// and closes it, within ProbeTimeout.
func dial(ctx context.Context, pool *pgxpool.Pool) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return conn.Ping(ctx)
}

// waited is the error of a wait for a pool connection that passed its
// bound with the request still live: failure.Busy ([ErrBusy]) when the
// database answers a connection of its own, so that the pool's are all at
// work; failure.Unavailable ([ErrUnreachable]) when it does not, whatever
// the pool's state.
func waited(ctx context.Context, pool *pgxpool.Pool) error {
	if pool == nil {
		return failure.Wrap(failure.Busy, ErrBusy, BusyMessage)
	}
	if err := reachable(ctx, pool); err != nil {
		if ctx.Err() != nil {
			return failure.Classify(ctx, err)
		}
		return failure.Wrap(failure.Unavailable, errors.Join(ErrUnreachable, err), UnreachableMessage)
	}
	return failure.Wrap(failure.Busy, ErrBusy, BusyMessage)
}
