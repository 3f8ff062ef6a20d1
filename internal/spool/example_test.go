package spool_test

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/informe/informe/internal/compress"
	"github.com/informe/informe/internal/spool"
)

// Example shows a handler streaming an export: encoder -> compressor ->
// spool -> ResponseWriter. The rows are read at the database's speed; the
// connection would be released where the spool's Close returns, before the
// client has read the body.
func Example() {
	budget := spool.NewBudget(1 << 30) // all responses' temporary files together
	lim := spool.Limits{Memory: 256 << 10, Disk: 64 << 20, NoProgress: 60 * time.Second}

	handler := func(w http.ResponseWriter, r *http.Request) {
		// Negotiate, then decide every header before the first byte.
		coding := compress.Negotiate(r.Header.Values("Accept-Encoding")...)
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Add("Vary", "Accept-Encoding")
		if coding != compress.Identity {
			h.Set("Content-Encoding", coding.String())
		}
		// HTTP/1.0 has no chunked encoding: hold the whole body, then send
		// it with a Content-Length.
		held := !r.ProtoAtLeast(1, 1)
		dst := responseDest{w, http.NewResponseController(w)}
		var sp *spool.Spool
		if held {
			sp = spool.NewHeld(dst, lim, budget)
		} else {
			sp = spool.New(dst, lim, budget)
		}
		zw, err := compress.NewWriter(sp, coding)
		if err != nil {
			panic(err) // Negotiate returns codings only
		}
		enc := bufio.NewWriter(zw) // stands for an export encoder

		// The producer: rows from the database, at its speed.
		for i := range 3 {
			fmt.Fprintf(enc, "%d,row %d\r\n", i, i)
			if i == 0 {
				// First byte out at once: encoder, compressor and spool.
				err = enc.Flush()
				if err == nil {
					err = zw.Flush()
				}
			}
		}
		if err == nil {
			err = enc.Flush()
		}
		if cerr := zw.Close(); err == nil { // always: it pools the encoder
			err = cerr
		}
		if err == nil {
			err = sp.Close()
		}
		// Here the rows are all in the spool: release the connection.

		if err != nil {
			sp.Abort(err)
			sp.Wait() // the temporary file is gone when it returns
			if held && errors.Is(err, spool.ErrTooLarge) {
				h.Del("Content-Encoding") // nothing was sent: an error can still be answered
				http.Error(w, "too large for HTTP/1.0", http.StatusServiceUnavailable)
				return
			}
			panic(http.ErrAbortHandler) // cut: the client must not take it for complete
		}
		if held {
			h.Set("Content-Length", strconv.FormatInt(sp.Len(), 10))
		}
		if err := sp.Wait(); err != nil { // delivery, at the client's pace
			// errors.Is(err, spool.ErrStalled): the client made no progress.
			panic(http.ErrAbortHandler)
		}
	}

	srv := httptest.NewServer(http.HandlerFunc(handler))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req) // no transparent decompression
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(zr)
	fmt.Println(resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
	fmt.Printf("%q\n", body)
	// Output:
	// gzip Accept-Encoding
	// "0,row 0\r\n1,row 1\r\n2,row 2\r\n"
}
