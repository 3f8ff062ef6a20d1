package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/internal/compress"
	"github.com/informe/informe/internal/delivery"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/sockstat"
	"github.com/informe/informe/internal/spool"
)

// Delivery says how response bodies reach clients. Every body goes
// encoder -> compressor -> spool -> connection (package delivery): bytes
// pass straight through while the client keeps up; when it falls behind,
// the spool takes them at the database's speed, in memory up to
// Spool.Memory and then in a temporary file, so that the database
// connection is released at the last row.
type Delivery struct {
	Spool spool.Limits
	// Budget bounds the temporary files of all responses together; nil is
	// no bound. Past Spool.Disk or the budget, or when the disk fails, the
	// database side waits for the client, as it would without a spool.
	Budget *spool.Budget
}

// minCompressed is the smallest estimated body worth compressing.
const minCompressed = 1 << 10

type connKey struct{}

// ConnContext is the API server's http.Server.ConnContext: it keeps each
// request's connection in its context, so that a response can pass bytes
// straight through while its client keeps up and measure a slow client's
// progress by what the connection accepts.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if s := sockstat.New(c); s != nil {
		return context.WithValue(ctx, connKey{}, s)
	}
	return ctx
}

// responseDest is the spool's destination: the response, with the write
// deadlines and flushes of its connection. A write or flush that fails
// failed on the client's connection: its error says so
// ([failure.ErrClientGone]), which is how a cut is told as the client's
// rather than the database's, whatever errno both may carry.
type responseDest struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	// disk hears that the spool's temporary file failed, when it does.
	disk func(error)
}

func (d responseDest) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	return n, clientSide(err)
}

func (d responseDest) Flush() error { return clientSide(d.rc.Flush()) }

func (d responseDest) DiskFailed(err error)               { d.disk(err) }
func (d responseDest) SetWriteDeadline(t time.Time) error { return d.rc.SetWriteDeadline(t) }

// clientSide marks err, of a write to the client's connection, as the
// client's: [failure.ErrClientGone], keeping the cause.
func clientSide(err error) error {
	if err == nil || errors.Is(err, failure.ErrClientGone) {
		return err
	}
	return fmt.Errorf("%w: %w", failure.ErrClientGone, err)
}

// socketDest is a responseDest whose TCP connection can be read: how much
// its send buffer can take, and what its client has acknowledged.
type socketDest struct {
	responseDest
	conn *sockstat.Conn
}

func (d socketDest) Room() int                { return d.conn.Room() }
func (d socketDest) Progress() (int64, error) { return d.conn.Acked() }

var (
	_ spool.Flusher        = responseDest{}
	_ spool.WriteDeadliner = responseDest{}
	_ spool.DiskReporter   = responseDest{}
	_ spool.Roomer         = socketDest{}
	_ spool.Progresser     = socketDest{}
)

// destination returns where c's body goes. Over HTTP/1.1 on TCP, bytes can
// pass straight through; HTTP/2 multiplexes its streams over the
// connection, so its bodies always go through the spool. A failure of the
// spool's disk is logged when it happens: the response then holds its
// connection and turn while it waits for its client, which an operator
// must hear of before the response ends.
func (s *Server) destination(c *gin.Context) io.Writer {
	ctx, id := c.Request.Context(), state(c).id
	d := responseDest{w: c.Writer, rc: http.NewResponseController(c.Writer), disk: func(err error) {
		s.Logger.LogAttrs(ctx, slog.LevelWarn, "the spool's disk failed; the response waits for its client instead",
			slog.String("request_id", id), loggedError(err))
	}}
	if conn, ok := c.Request.Context().Value(connKey{}).(*sockstat.Conn); ok && c.Request.ProtoMajor == 1 {
		return socketDest{d, conn}
	}
	return d
}

// body describes a response body to deliver.
type body struct {
	// deliver delivers the body's rows to dst through the delivery
	// pipeline with o, telling h.
	deliver func(dst io.Writer, o delivery.Options, h delivery.Hooks) (delivery.Result, error)
	// estimate is the body's expected size in bytes, to decide whether
	// compression pays; negative when unknown (large).
	estimate int64
	// compressible is false for formats that are compressed already
	// (XLSX, Parquet).
	compressible bool
}

// deliverRows answers 200 with b's rows, delivered as b says (package delivery): compressed as the client accepts, and held whole
// for an HTTP/1.0 client, which cannot tell a cut body from a complete one
// without a Content-Length. The handler has set the headers that depend on
// the data; deliverRows adds Content-Encoding and Vary. It ends done (the
// request's turn) at the last row, then waits for the client. A failure
// before the first byte is an ordinary error response; after it, the
// response is cut, and every part stops.
func (s *Server) deliverRows(c *gin.Context, done func(), b body) {
	h := c.Writer.Header()
	held := !c.Request.ProtoAtLeast(1, 1)
	o := delivery.Options{Spool: s.Delivery.Spool, Budget: s.Delivery.Budget, Held: held}
	if b.compressible {
		varyEncoding(h)
		if b.estimate < 0 || b.estimate >= minCompressed {
			o.Coding = compress.Negotiate(c.Request.Header.Values("Accept-Encoding")...)
		}
	}
	if o.Coding != compress.Identity {
		h.Set("Content-Encoding", o.Coding.String())
	}
	c.Status(http.StatusOK)
	var row func(int64)
	if t := state(c).ticket; t != nil && t.Shares() {
		row = t.Row
	}
	res, err := b.deliver(s.destination(c), o, delivery.Hooks{
		Row: row,
		Read: func(err, closeErr error) error {
			done()
			if err == nil && closeErr != nil {
				// Every row was read in one snapshot: ending that read-only
				// transaction can fail (a standby's recovery conflict ends
				// the session) without touching what was read, so the body
				// stands.
				s.Logger.LogAttrs(c.Request.Context(), slog.LevelWarn, "ending the snapshot failed after its last row; the response is complete",
					slog.String("request_id", state(c).id), loggedError(closeErr))
			}
			return err
		},
		Closed: func(length int64) {
			if held {
				h.Set("Content-Length", strconv.FormatInt(length, 10))
			}
		},
	})
	state(c).rows = int(res.Rows)
	if res.Started {
		st := res.Stats
		s.Metrics.Spooled(st.Spilled, st.DiskWritten, st.Waited)
	}
	if err == nil {
		return
	}
	if held && errors.Is(err, spool.ErrTooLarge) {
		s.Metrics.Refused("http10_too_large")
		err = failure.Wrap(failure.Busy, err, "Service Unavailable: this response is too large to hold for an HTTP/1.0 client; use HTTP/1.1, or ask for fewer rows or columns")
	}
	s.fail(c, err) // an error answer, or a cut once bytes are out
}

// varyEncoding adds Accept-Encoding to the Vary header of a body that may
// be compressed.
func varyEncoding(h http.Header) {
	h.Set("Vary", strings.Join(append(h.Values("Vary"), "Accept-Encoding"), ", "))
}
