package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/delivery"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/spool"
)

// cancelled returns a context cancelled with cause (context.Canceled when
// nil), as net/http (no cause) or informe (a cause of its own) cancel a
// request's.
func cancelled(cause error) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	return ctx
}

// TestReason checks that every cause of a cut is named for who made it:
// the causes as the other packages wrap them, and PostgreSQL's errors as
// postgres.ClassifyIn turns them into failures under a live or a
// cancelled context. 57014 (query_canceled) is the statement timeout only
// when informe did not cancel the work itself.
func TestReason(t *testing.T) {
	live := context.Background()
	canceled57014 := &pgconn.PgError{Code: "57014", Message: "canceling statement due to user request"}
	timeout57014 := &pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"}
	terminated := &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}
	for _, tt := range []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"ClientGone", live, fmt.Errorf("rows: %w", failure.ErrClientGone), delivery.ClientGone},
		// A write to the client that failed, as the HTTP layer marks it.
		{"ClientWriteBrokenPipe", live, fmt.Errorf("%w: write tcp: %w", failure.ErrClientGone, syscall.EPIPE), delivery.ClientGone},
		{"ClientWriteReset", live, fmt.Errorf("%w: write tcp: %w", failure.ErrClientGone, syscall.ECONNRESET), delivery.ClientGone},
		// An errno alone says nothing of whose connection failed: the
		// database's reset is the database's, never the client's.
		{"DatabaseReset", live, postgres.ClassifyIn(live, fmt.Errorf("rows: %w",
			&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)})), delivery.DatabaseUnavailable},
		{"DatabaseResetAtConnect", live, postgres.ClassifyIn(live, fmt.Errorf("acquire: %w",
			&net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)})), delivery.DatabaseUnavailable},
		{"BareBrokenPipe", live, fmt.Errorf("write tcp: %w", syscall.EPIPE), delivery.Internal},
		{"RequestContextCanceled", cancelled(nil), context.Canceled, delivery.ClientGone},
		{"ClientGone57014", live, postgres.ClassifyIn(cancelled(nil), canceled57014), delivery.ClientGone},
		{"Stalled", live, fmt.Errorf("%w for 2s", spool.ErrStalled), delivery.ClientStalled},
		{"DatabaseGone", live, postgres.ClassifyIn(live, fmt.Errorf("rows: %w", io.ErrUnexpectedEOF)), delivery.DatabaseUnavailable},
		{"BackendTerminated", live, postgres.ClassifyIn(live, terminated), delivery.DatabaseUnavailable},
		{"Unavailable", live, failure.Errorf(failure.Unavailable, "Service Unavailable"), delivery.DatabaseUnavailable},
		{"StatementTimeout", live, postgres.ClassifyIn(live, timeout57014), delivery.StatementTimeout},
		{"StatementTimeoutWrapped", live, fmt.Errorf("rows: %w", failure.ErrStatementTimeout), delivery.StatementTimeout},
		{"RequestTimeout", live, fmt.Errorf("rows: %w", failure.ErrRequestTimeout), delivery.RequestTimeout},
		{"RequestTimeout57014", live, postgres.ClassifyIn(cancelled(failure.ErrRequestTimeout), canceled57014), delivery.RequestTimeout},
		{"RequestTimeoutCause", cancelled(failure.ErrRequestTimeout), context.Canceled, delivery.RequestTimeout},
		{"Deadline57014", live, postgres.ClassifyIn(cancelled(context.DeadlineExceeded), canceled57014), delivery.RequestTimeout},
		{"Shutdown", live, fmt.Errorf("rows: %w", failure.ErrShutdown), delivery.Shutdown},
		{"Shutdown57014", live, postgres.ClassifyIn(cancelled(failure.ErrShutdown), canceled57014), delivery.Shutdown},
		// The shutdown cut the request, whatever the error it then met.
		{"ShutdownCause", cancelled(failure.ErrShutdown), fmt.Errorf("write tcp: %w", syscall.EPIPE), delivery.Shutdown},
		{"TooLarge", live, fmt.Errorf("%w: more than 1 byte", spool.ErrTooLarge), delivery.TooLarge},
		{"Internal", live, errors.New("division by zero"), delivery.Internal},
		{"InternalPgError", live, postgres.ClassifyIn(live, &pgconn.PgError{Code: "22012"}), delivery.Internal},
		// A cancellation that does not come from the request's context is
		// not the client's doing.
		{"CanceledElsewhere", live, context.Canceled, delivery.Internal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := delivery.Reason(tt.ctx, tt.err); got != tt.want {
				t.Errorf("Reason(%v) = %s, want %s", tt.err, got, tt.want)
			}
		})
	}
}

// recorder is a destination that keeps what it receives and tells when
// the first bytes came.
type recorder struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	once  sync.Once
	first chan struct{} // closed at the first write
}

func newRecorder() *recorder { return &recorder{first: make(chan struct{})} }

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.once.Do(func() { close(r.first) })
	return r.buf.Write(p)
}

func (r *recorder) Bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes())
}

// roomy is a recorder with room for every write, so that bytes pass
// straight through the spool in the producer's goroutine.
type roomy struct{ *recorder }

func (roomy) Room() int { return 1 << 30 }

var _ spool.Roomer = roomy{}

// TestWriter checks both ends of a [delivery.Writer] on a JSON body, with
// the bytes queued in the spool or passed straight through: Close ends a
// complete body (valid JSON, closing bracket), while Abort drops the
// encoder's closing bytes and what was not delivered, so that the body
// received is not valid JSON and does not end in "]", and Wait returns
// Abort's cause.
func TestWriter(t *testing.T) {
	cols := []dataset.Column{{Name: "n", Kind: dataset.Text}}
	spec := export.Spec{Format: export.JSON, Columns: cols}
	cause := errors.New("the database went away")
	for _, dest := range []struct {
		name string
		new  func() (io.Writer, *recorder)
	}{
		{"Queued", func() (io.Writer, *recorder) { r := newRecorder(); return r, r }},
		{"PassedThrough", func() (io.Writer, *recorder) { r := newRecorder(); return roomy{r}, r }},
	} {
		for _, tt := range []struct {
			name  string
			abort bool
		}{{"Close", false}, {"Abort", true}} {
			t.Run(dest.name+"/"+tt.name, func(t *testing.T) {
				dst, rec := dest.new()
				w, err := delivery.Start(dst, spec, delivery.Options{})
				if err != nil {
					t.Fatal(err)
				}
				const rows = 1000
				for i := range rows {
					if err := w.Encode([][]byte{fmt.Appendf(nil, "row %d", i)}); err != nil {
						t.Fatalf("Encode: %v", err)
					}
				}
				if got := w.Rows(); got != rows {
					t.Errorf("Rows = %d, want %d", got, rows)
				}
				if tt.abort {
					// The first row is pushed out at once: the client has
					// the body's start when the failure comes.
					select {
					case <-rec.first:
					case <-time.After(10 * time.Second):
						t.Fatal("nothing delivered 10s after the first row")
					}
					w.Abort(cause)
				} else if err := w.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				err = w.Wait()
				got := rec.Bytes()
				if !tt.abort {
					if err != nil {
						t.Fatalf("Wait: %v", err)
					}
					var v []map[string]string
					if err := json.Unmarshal(got, &v); err != nil || len(v) != rows {
						t.Fatalf("complete body: %d elements, %v; want %d", len(v), err, rows)
					}
					if int64(len(got)) != w.Len() {
						t.Errorf("received %d bytes, Len = %d", len(got), w.Len())
					}
					return
				}
				if !errors.Is(err, cause) {
					t.Errorf("Wait = %v, want the abort's cause", err)
				}
				if bytes.HasSuffix(bytes.TrimSpace(got), []byte("]")) {
					t.Errorf("aborted body ends in %q", got[max(len(got)-20, 0):])
				}
				if json.Valid(got) {
					t.Error("aborted body is valid JSON")
				}
			})
		}
	}
	t.Run("EncodeErrorStaysCause", func(t *testing.T) {
		// Encode's error (a wrong row) stays the cause through Abort.
		w, err := delivery.Start(newRecorder(), spec, delivery.Options{})
		if err != nil {
			t.Fatal(err)
		}
		encErr := w.Encode([][]byte{[]byte("a"), []byte("b")})
		if encErr == nil {
			t.Fatal("a row of two values for one column was encoded")
		}
		w.Abort(cause)
		if err := w.Wait(); !errors.Is(err, encErr) {
			t.Errorf("Wait = %v, want Encode's error %v", err, encErr)
		}
	})
}
