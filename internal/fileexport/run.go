package fileexport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/compress"
	"github.com/informe/informe/internal/delivery"
	"github.com/informe/informe/internal/destination"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/road"
	"github.com/informe/informe/internal/spool"
)

// spoolMemory is how far the reading and encoding may run ahead of the
// output: the spool lets the file be written while the next rows are read
// and encoded, as a response is sent.
const spoolMemory = 4 << 20

// partRows is the fewest rows worth a connection of their own (a test
// lowers it); partDisk bounds the temporary file of each later part.
var partRows int64 = 50_000

const partDisk = 4 << 30

// progressEvery is how many rows pass between moves of the progress bar.
const progressEvery = 1000

// errInterrupted is the failure of an export whose context was cancelled:
// Ctrl-C or SIGTERM.
var errInterrupted = errors.New("interrupted")

// Summary says what an export wrote.
type Summary struct {
	Rows    int64         // rows written
	Bytes   int64         // bytes written, compressed if the output is
	Elapsed time.Duration // from opening the snapshot to the output complete
	Output  string        // the file's path, or "stdout"
}

// String is the line the command prints at the end of an export.
func (s Summary) String() string {
	secs := s.Elapsed.Seconds()
	return fmt.Sprintf("exported %d rows, %d bytes in %.1fs (%.0f rows/s) to %s", s.Rows, s.Bytes, secs, float64(s.Rows)/max(secs, 1e-9), s.Output)
}

// Run writes the rows of p from one snapshot of store to p's output, stdout
// being stdout, through [Write]; when stderr is a terminal, a progress bar
// shows there. A file is written atomically: on any error, or when ctx is
// cancelled (Ctrl-C, SIGTERM), the target is left as it was and no
// temporary file remains. On stdout nothing is atomic, but a failed export
// gets no closing bytes (a JSON array's "]", the gzip trailer), so that it
// cannot be taken for a complete one.
//
// Its error says why the export failed, "interrupted" when ctx was
// cancelled, and that the output file, if any, was left unchanged.
func Run(ctx context.Context, store *postgres.Store, p Plan, stdout, stderr io.Writer) (Summary, error) {
	start := time.Now()
	dst := stdout
	var file *destination.File
	if p.output != "-" {
		var err error
		if file, err = destination.CreateFile(p.output); err != nil {
			return Summary{}, p.failed(ctx, err)
		}
		defer file.Abort() // after a Commit, nothing
		dst = file
	}
	var bar *progressbar.ProgressBar
	progress := func(total int64) func(int64) {
		if bar = newProgressBar(total, stderr); bar == nil {
			return nil
		}
		return func(n int64) {
			if n%progressEvery == 0 {
				_ = bar.Set64(n)
			}
		}
	}
	res, err := Write(ctx, store, p, dst, progress)
	if err == nil && file != nil {
		err = file.Commit()
	}
	if bar != nil {
		if err == nil {
			_ = bar.Set64(res.Rows)
			_ = bar.Finish()
		} else {
			_ = bar.Exit()
		}
	}
	if err != nil {
		return Summary{}, p.failed(ctx, err)
	}
	where := p.output
	if where == "-" {
		where = "stdout"
	}
	return Summary{Rows: res.Rows, Bytes: res.Bytes, Elapsed: time.Since(start), Output: where}, nil
}

// Written says what [Write] wrote.
type Written struct {
	Rows  int64 // rows written
	Bytes int64 // bytes written to w, compressed if the plan says so
}

// Write writes the rows of p from one snapshot of store to w through the
// HTTP export's pipeline (encoder -> compressor -> spool), its output
// aside: the one way from a dataset, a query and a format to bytes that
// `informe export` ([Run]) and a schedule's runs share. progress, if not
// nil, is given the snapshot's row count before the first row and may
// return a function called with the rows written so far after each row.
// A failed export gets no closing bytes. It returns ctx's error when ctx
// is cancelled, even after the last row, so that the caller publishes
// nothing; its other errors are the store's and w's, as [why] tells them.
func Write(ctx context.Context, store *postgres.Store, p Plan, w io.Writer, progress func(total int64) func(int64)) (Written, error) {
	// A failing part cancels every part's query through ctx.
	qctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// Rows: the count from the snapshot, which XLSX declares as the sheet's
	// range before the first row.
	rd, err := road.Open(qctx, store, road.Export{
		Dataset: p.source.Dataset, Query: p.query, Format: p.format, Parts: postgres.Parts{Max: p.parts, MinRows: partRows},
	})
	if err != nil {
		return Written{}, err
	}
	defer rd.Close()
	if m := p.source.MaxRows(); m > 0 && rd.Total() > m {
		return Written{}, errTooManyRows(rd.Total(), m)
	}
	coding := compress.Identity
	if p.gzip {
		coding = compress.Gzip
	}
	// A reader of stdout that is slow is waited for, never cut as stalled:
	// NoProgress is negative. A later part runs ahead of the output into
	// its own spool (memory, then a temporary file).
	o := road.Options{
		Body:  delivery.Options{Coding: coding, Spool: spool.Limits{Memory: spoolMemory, NoProgress: -1}},
		Parts: delivery.Options{Spool: spool.Limits{Memory: spoolMemory, Disk: partDisk, NoProgress: -1}},
		Stop:  stop,
	}
	if progress != nil {
		o.Hooks.Row = progress(rd.Total())
	}
	spec := export.Spec{Format: p.format, Columns: p.columns(), Options: export.Options{CSV: p.csv, Sheet: p.source.Name, Rows: rd.Total()}}
	res, err := rd.Deliver(w, spec, o)
	if err == nil {
		// A signal after the last row still means "stop": nothing replaced.
		err = ctx.Err()
	}
	if err != nil {
		return Written{}, err
	}
	return Written{Rows: res.Rows, Bytes: res.Bytes}, nil
}

// Why says what ended an export with err, for a person: "interrupted"
// when ctx was cancelled, the database's failures in PostgreSQL's words.
func Why(ctx context.Context, err error) error { return why(ctx, err) }

// failed returns the error of p's export that ended with err: why, and that
// the output file, if any, was left as it was.
func (p Plan) failed(ctx context.Context, err error) error {
	err = why(ctx, err)
	if p.output == "-" {
		return err
	}
	return fmt.Errorf("%w; %s was left unchanged", err, p.output)
}

// why says what ended an export with err, as [delivery.Reason] tells it
// for the HTTP side: a cancelled ctx is a signal, "interrupted"; the
// database's failures are said without the words the API adds for its
// clients (a status, "try again"), keeping PostgreSQL's own.
func why(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return errInterrupted
	}
	var fe *failure.Error
	switch delivery.Reason(ctx, err) {
	case delivery.DatabaseUnavailable:
		if errors.As(err, &fe) && fe.Err != nil {
			err = fe.Err
		}
		return fmt.Errorf("the database cannot be reached: %w", err)
	case delivery.StatementTimeout:
		// The cause starts with failure.ErrStatementTimeout's words.
		if errors.As(err, &fe) && fe.Err != nil {
			return fe.Err
		}
	}
	return err
}

// newProgressBar returns a bar of total rows on w when w is a terminal and
// there are rows to count, else nil: rows of total, rate and time left,
// redrawn at most ten times a second.
func newProgressBar(total int64, w io.Writer) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if total == 0 || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("exporting"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowTotalBytes(true), // the count as "rows/total"
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("rows"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionFullWidth(),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
}

// errTooManyRows refuses an export of n rows for a token that may take at
// most max in one, before anything is written.
func errTooManyRows(n, max int64) error {
	return &failure.Error{Code: failure.Forbidden, Reason: "max_rows",
		Message: fmt.Sprintf("this export would carry %d rows; the token may take at most %d in one: narrow it with a filter", n, max)}
}
