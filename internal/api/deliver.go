package api

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/compress"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/spool"
)

// Delivery says how response bodies reach clients. Every body goes
// encoder -> compressor -> spool -> connection: the spool takes the bytes at
// the database's speed, in memory up to Spool.Memory and then in a
// temporary file, so that the database connection is released at the last
// row, and hands them to the client at its own pace.
type Delivery struct {
	Spool spool.Limits
	// Budget bounds the temporary files of all responses together; nil is
	// no bound. Past Spool.Disk or the budget the database side waits for
	// the client, as it would without a spool.
	Budget *spool.Budget
}

// minCompressed is the smallest estimated body worth compressing.
const minCompressed = 1 << 10

// responseDest is the spool's destination: the response, with the write
// deadlines and flushes of its connection.
type responseDest struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newResponseDest(w http.ResponseWriter) responseDest {
	return responseDest{w, http.NewResponseController(w)}
}

func (d responseDest) Write(p []byte) (int, error)        { return d.w.Write(p) }
func (d responseDest) Flush() error                       { return d.rc.Flush() }
func (d responseDest) SetWriteDeadline(t time.Time) error { return d.rc.SetWriteDeadline(t) }

var (
	_ spool.Flusher        = responseDest{}
	_ spool.WriteDeadliner = responseDest{}
)

// body describes a response body to deliver.
type body struct {
	// estimate is the body's expected size in bytes, to decide whether
	// compression pays; negative when unknown (large).
	estimate int64
	// compressible is false for formats that are compressed already (XLSX).
	compressible bool
	// encoder makes the body's encoder on w.
	encoder func(w io.Writer) (export.Encoder, error)
}

// deliver answers 200 with cur's rows encoded as b says. The handler has
// set the headers that depend on the data; deliver adds Content-Encoding
// and Vary. The cursor is closed, its connection released, and its turn
// ended as soon as the last row is in the spool; delivery to the client
// goes on after. A failure before the first byte is an ordinary error
// response; after it, the response is cut.
func (s *Server) deliver(c *gin.Context, cur cursor, b body) {
	defer cur.Close()
	h := c.Writer.Header()
	coding := compress.Identity
	if b.compressible {
		varyEncoding(h)
		if b.estimate < 0 || b.estimate >= minCompressed {
			coding = compress.Negotiate(c.Request.Header.Values("Accept-Encoding")...)
		}
	}
	if coding != compress.Identity {
		h.Set("Content-Encoding", coding.String())
	}
	// HTTP/1.0 has no chunked encoding, so a cut body would look complete:
	// hold the whole body, then send it with its Content-Length.
	held := !c.Request.ProtoAtLeast(1, 1)
	dst := newResponseDest(c.Writer)
	var sp *spool.Spool
	if held {
		sp = spool.NewHeld(dst, s.Delivery.Spool, s.Delivery.Budget)
	} else {
		sp = spool.New(dst, s.Delivery.Spool, s.Delivery.Budget)
	}
	zw, err := compress.NewWriter(sp, coding)
	if err != nil {
		sp.Abort(err)
		_ = sp.Wait()
		s.fail(c, err)
		return
	}
	w := &gate{w: zw}
	enc, err := b.encoder(w)
	if err != nil {
		_ = zw.Close()
		sp.Abort(err)
		_ = sp.Wait()
		s.fail(c, fmt.Errorf("encoder: %w", err))
		return
	}
	c.Status(http.StatusOK)
	rows, endFlushing := flushing(cur, enc, zw)
	n, err := export.Copy(enc, rows)
	endFlushing()
	state(c).rows = int(n)
	if cerr := cur.Close(); cerr != nil && err == nil {
		// Every row was read in one snapshot: ending that read-only
		// transaction can fail (a standby's recovery conflict ends the
		// session) without touching what was read, so the body stands.
		s.Logger.LogAttrs(c.Request.Context(), slog.LevelWarn, "ending the snapshot failed after its last row; the response is complete",
			slog.String("request_id", state(c).id), slog.Any("error", cerr))
	}
	if err != nil {
		w.closed = true // let Close clean up without writing a trailer
	}
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = sp.Close()
	}
	if err != nil {
		sp.Abort(err)
		_ = sp.Wait()
		s.recordSpool(sp)
		if held && errors.Is(err, spool.ErrTooLarge) {
			s.Metrics.Refused("http10_too_large")
			err = failure.Wrap(failure.Busy, err, "Service Unavailable: this response is too large to hold for an HTTP/1.0 client; use HTTP/1.1, or ask for fewer rows or columns")
		}
		s.failDelivery(c, err)
		return
	}
	if held {
		h.Set("Content-Length", strconv.FormatInt(sp.Len(), 10))
	}
	err = sp.Wait()
	s.recordSpool(sp)
	if err != nil {
		s.failDelivery(c, err)
	}
}

// varyEncoding adds Accept-Encoding to the Vary header of a body that may
// be compressed.
func varyEncoding(h http.Header) {
	h.Set("Vary", strings.Join(append(h.Values("Vary"), "Accept-Encoding"), ", "))
}

// failDelivery ends a response whose delivery failed: nothing sent is an
// ordinary error (with the headers of the body removed), else the
// response is cut.
func (s *Server) failDelivery(c *gin.Context, err error) {
	if ctxErr := c.Request.Context().Err(); ctxErr != nil {
		err = fmt.Errorf("%w (client gone: %w)", err, ctxErr)
	}
	if errors.Is(err, spool.ErrStalled) {
		s.Logger.LogAttrs(c.Request.Context(), slog.LevelInfo, "client made no progress; cut",
			slog.String("request_id", state(c).id))
		state(c).clientGone = true
	}
	s.fail(c, err) // an error answer, or a cut once bytes are out
}

// recordSpool records what the spool of a finished response did.
func (s *Server) recordSpool(sp *spool.Spool) {
	st := sp.Stats()
	s.Metrics.Spooled(st.Spilled, st.DiskWritten, st.Waited)
}

// flushInterval bounds how long encoded rows wait in the encoder's and the
// compressor's buffers, also while the database is slow to send the next.
const flushInterval = 100 * time.Millisecond

// flushingRows is a cursor that pushes the rows encoded so far out to the
// client after the first row (the first byte leaves at once, also when
// compressed) and then every flushInterval while more are encoded. The
// encoder is only used between one Next and the next, under mu; a ticker
// flushes under mu while the cursor waits for the database.
type flushingRows struct {
	cursor
	enc   export.Flusher
	zw    *compress.Writer
	mu    sync.Mutex // held from Next's return to the next call
	n     int
	dirty bool // rows were encoded since the last flush
	stop  chan struct{}
	done  chan struct{}
}

// flushing returns cur wrapped so that enc and zw are flushed as above, and
// the func that ends the flushing; call it once the copy is over. An
// encoder that cannot flush (XLSX) leaves cur as it is.
func flushing(cur cursor, enc export.Encoder, zw *compress.Writer) (export.Rows, func()) {
	f, ok := enc.(export.Flusher)
	if !ok {
		return cur, func() {}
	}
	r := &flushingRows{cursor: cur, enc: f, zw: zw, stop: make(chan struct{}), done: make(chan struct{})}
	r.mu.Lock()
	go r.tick()
	return r, r.end
}

func (r *flushingRows) Next() bool {
	r.n++
	if r.n == 2 {
		r.flush()
	} else if r.n > 2 {
		r.dirty = true
	}
	r.mu.Unlock()
	ok := r.cursor.Next()
	r.mu.Lock()
	return ok
}

// flush pushes out what is buffered; errors stay in the writers, sticky,
// and the next Encode reports them.
func (r *flushingRows) flush() {
	if r.enc.Flush() == nil {
		_ = r.zw.Flush()
	}
	r.dirty = false
}

func (r *flushingRows) tick() {
	defer close(r.done)
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			if r.dirty {
				r.flush()
			}
			r.mu.Unlock()
		}
	}
}

// end stops the ticker and gives the encoder back to the caller.
func (r *flushingRows) end() {
	r.mu.Unlock()
	close(r.stop)
	<-r.done
}
