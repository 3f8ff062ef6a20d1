package road

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
)

// Limits bound each read admitted and the big reads admitted at once, so
// that a burst of big requests is refused clearly rather than served
// slowly to everyone. The zero value limits nothing.
type Limits struct {
	// AcquireTimeout is how long a request waits for a pool connection
	// before it is answered 503 with Retry-After; 0 waits as long as the
	// request lasts.
	AcquireTimeout time.Duration
	// StatementTimeout bounds each database statement of a request
	// (PostgreSQL's statement_timeout, set per transaction); 0 leaves the
	// server's setting.
	StatementTimeout time.Duration
	// RequestTimeout bounds the database side of a request, from its
	// arrival to its last row (delivery to a slow client is bounded by the
	// spool's no-progress cut instead); 0 is no bound.
	RequestTimeout time.Duration
	// Exports is how many big responses (whole exports, pages of more than
	// a thousand rows, every XLSX) are produced at once; 0 is no limit.
	// Keep it below the pool size so that small requests (/users, small
	// pages, authentication) always find a connection.
	Exports int
	// TokenExports is how many of the Exports turns one token holds at
	// once, its exports' parts included, unless the token has a limit of
	// its own (auth.Principal.MaxExports); 0 is no limit but Exports.
	// Waiting requests are given turns in turn by token whatever it is.
	TokenExports int
	// ExportQueue is how many big requests may wait for a turn; past it
	// they are answered 503 with Retry-After at once (429 for a token
	// past its own limit), unless the token with the most requests has a
	// request waiting whose place they take (see [turns]).
	ExportQueue int
	// ExportWait is how long a big request waits for its turn at most.
	ExportWait time.Duration
}

// Observer is told how admission goes (package metrics counts it).
type Observer interface {
	// Turn is told of a turn given, after waiting or not, and for how long.
	Turn(waited bool, d time.Duration)
	// Refused is told of a read refused: "exports_busy" or "token_busy".
	Refused(reason string)
	// TurnWaiting is told as a read starts waiting for a turn; the func
	// it returns, as it stops.
	TurnWaiting() func()
	// ShareWaited is told of a big read's wait at a chunk, or before its
	// first statement, and why: "burst", "small" or "turn" (see [share]).
	ShareWaited(reason string, d time.Duration)
}

// Admission admits reads to the database: it bounds each read's waits
// and statements, and gives the turns of big reads by token ([turns]),
// and the machine's cores among them and small reads ([share]). Every
// door's read, whatever its format, is admitted here.
type Admission struct {
	limits   Limits
	observer Observer
	turns    *turns
	share    *share
}

// NewAdmission returns the admission of l, telling o (which may be nil).
// With a limit of big reads, they share the machine's cores, in chunks
// of [ShareChunk] rows.
func NewAdmission(l Limits, o Observer) *Admission {
	a := &Admission{limits: l, observer: o, turns: newTurns(l)}
	if a.turns != nil {
		if o != nil {
			a.turns.queued = o.TurnWaiting
		}
		a.share = newShare(runtime.GOMAXPROCS(0), defaultPauses)
		a.share.queueing = a.turns.queueing
		if o != nil {
			a.share.waited = o.ShareWaited
		}
	}
	return a
}

// Who is whose turns a read takes: its token's name ("" for none) and
// own limit of turns (nil: [Limits].TokenExports).
type Who struct {
	Token string
	Limit *int
}

// Ticket is a read's admission: call Done when its last row has been
// read, and Row after each row written.
type Ticket struct {
	done    func()
	slot    *slot
	burst   bool
	batches bool
}

// Done ends the read's turn; only its first call counts, so a handler may
// both defer it and hand it to the end of the body.
func (t *Ticket) Done() { t.done() }

// Row is told that the read's n-th row was written: at each chunk of
// [ShareChunk] rows, a big read gives its share of the cores to others
// that wait for it. It costs nothing for a small read.
func (t *Ticket) Row(n int64) {
	if t.slot != nil && n%ShareChunk == 0 {
		t.slot.yield()
	}
}

// Burst reports whether the read was admitted as part of a burst, its
// token having more big reads waiting for a turn: it gives way to the big
// reads of tokens with none waiting.
func (t *Ticket) Burst() bool { return t.burst }

// Batches reports whether the read's rows are read from the database
// [BurstBatch] at a time: a burst's, admitted while another token holds
// or waits for a turn, or had a request start or end within the last
// second.
func (t *Ticket) Batches() bool { return t.batches }

// Shares reports whether the read takes turns at the cores, so that
// [Ticket.Row] is worth calling.
func (t *Ticket) Shares() bool { return t.slot != nil }

// Admit prepares ctx for a read of who's (its waits and statements
// bounded), and, for a big read, waits for who's turn. The ticket's Done
// ends the turn. It fails with failure.Busy when too many big reads run
// and wait, failure.TooMany when who's token has as many as it may, and
// with ctx's error when ctx ends first.
func (a *Admission) Admit(ctx context.Context, who Who, big bool) (context.Context, *Ticket, error) {
	if a.limits.AcquireTimeout > 0 {
		ctx = postgres.WithAcquireTimeout(ctx, a.limits.AcquireTimeout)
	}
	if a.limits.StatementTimeout > 0 {
		ctx = postgres.WithStatementTimeout(ctx, a.limits.StatementTimeout)
	}
	// Every request, small or big, is company for other tokens' bursts
	// (see [share.company]), from its arrival to its end.
	a.share.met(who.Token)
	t := &Ticket{done: func() {}}
	if !big {
		t.done = a.share.smallStarts()
	}
	if big && a.turns != nil {
		start := time.Now()
		done, waited, err := a.turns.take(ctx, who.Token, who.Limit)
		if o := a.observer; o != nil {
			switch failure.CodeOf(err) {
			case failure.Internal: // nil, or ctx's error
				if err == nil {
					o.Turn(waited, time.Since(start))
				}
			case failure.Busy:
				o.Refused("exports_busy")
			case failure.TooMany:
				o.Refused("token_busy")
			}
		}
		if err != nil {
			return ctx, nil, err
		}
		t.burst = a.turns.queueing(who.Token)
		if t.batches = t.burst && (a.turns.others(who.Token) || a.share.company(who.Token)); t.batches {
			// A burst gives way at each chunk to other tokens' reads
			// (see [share]); its database waits with it, rather than
			// run ahead into the connection's buffers on cores those
			// want. Alone, it reads as fast as one statement allows.
			ctx = postgres.WithBatches(ctx, BurstBatch)
		}
		sl := a.share.bigStarts(who.Token)
		sl.enter()
		t.slot, t.done = sl, func() { sl.give(); done() }
	}
	ended := t.done
	t.done = func() { ended(); a.share.met(who.Token) }
	if a.limits.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, a.limits.RequestTimeout, failure.ErrRequestTimeout)
		turn := t.done
		t.done = func() { cancel(); turn() }
	}
	t.done = sync.OnceFunc(t.done)
	return ctx, t, nil
}

// BurstBatch is how many rows a burst's read asks its database for at a
// time (see [postgres.WithBatches]): a chunk's, so that the next batch is
// asked for as the read's share of the cores comes back ([Ticket.Row]),
// not while it gives way.
const BurstBatch = ShareChunk

// More takes up to k more turns for the parts of a read of who's that
// holds one: those free now, that no waiting read can take. It returns
// how many it took; [Admission.Fewer] gives them back.
func (a *Admission) More(who Who, k int) int { return a.turns.tryTake(who.Token, who.Limit, k) }

// Fewer gives back k turns of [Admission.More].
func (a *Admission) Fewer(who Who, k int) { a.turns.giveBack(who.Token, k) }
