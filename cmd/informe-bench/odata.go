package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	neturl "net/url"
	"slices"
	"strings"
	"time"

	"github.com/informe/informe/report"
)

// feedPage is one page of the OData feed as the client read it.
type feedPage struct {
	url         string
	wall, ttfb  time.Duration
	rows, bytes int64
}

// pairedDepth is a page read right after the first page, several times:
// the cost of depth without the drift of load over a whole read.
type pairedDepth struct {
	depth int // 0 is the first page
	first []time.Duration
	page  []time.Duration
}

// median returns the median over the pairs of page time over first page time.
func (p pairedDepth) median() float64 {
	var rs []float64
	for i := range p.first {
		rs = append(rs, p.page[i].Seconds()/p.first[i].Seconds())
	}
	slices.Sort(rs)
	return rs[len(rs)/2]
}

// odataResult is issue 9: the whole feed read by following next links,
// several times, each read next to a JSON export of the same rows.
type odataResult struct {
	reads   [][]feedPage    // per full read, its pages in order
	elapsed []time.Duration // per full read, first request sent to last byte
	json    *exportResult   // the JSON export, interleaved with the reads
	baseRSS int64           // VmRSS after its warm-up of the read's informe that grew most
	peakRSS int64           // its VmHWM after its read
	rows    int64           // per read
	bytes   int64           // per read
	paired  []pairedDepth
}

func (r *odataResult) wall() time.Duration { return median(r.elapsed) }
func (r *odataResult) rowsPerSec() float64 { return perSecond(r.rows, r.wall()) }
func (r *odataResult) growth() int64       { return r.peakRSS - r.baseRSS }

// depths returns, for each page depth (0 is the first page), the median
// over the reads of that page's wall time and time to first byte.
func (r *odataResult) depths() (wall, ttfb []time.Duration) {
	for d := range r.reads[0] {
		var ws, ts []time.Duration
		for _, read := range r.reads {
			ws, ts = append(ws, read[d].wall), append(ts, read[d].ttfb)
		}
		wall, ttfb = append(wall, median(ws)), append(ttfb, median(ts))
	}
	return wall, ttfb
}

// fullDepths are the depths of full pages: a partial last page is quicker
// and says nothing about the cost of depth.
func (r *odataResult) fullDepths() int {
	n := len(r.reads[0])
	if n > 1 && r.reads[0][n-1].rows < perPage {
		n--
	}
	return n
}

// odata reads the whole feed /odata/GeneralReport, 10,000 rows a page (the
// server's page size), by following @odata.nextLink, with a client that
// decodes nothing: it counts the rows by their key property and reads the
// next link from the end of the body. Each read is made by a fresh informe
// (warmed up with a 100-row page), as a refresh after a restart would be:
// PostgreSQL's plan cache on informe's connections changes the plans of
// later reads. Each read is followed by a JSON export of the same rows,
// read the same way (whole body, undecoded), from another informe.
func (b *bench) odata(ctx context.Context) error {
	specs, err := b.specs(ctx)
	if err != nil {
		return err
	}
	r := &odataResult{}
	js, err := b.startExportSession(ctx, "json", specs.all, specs.warm)
	if err != nil {
		return err
	}
	defer js.inf.stop()
	r.json = js.r
	for i := range b.o.odataRuns {
		logf("odata: full read %d of %d, fresh informe", i+1, b.o.odataRuns)
		inf, base, err := b.startFeed(ctx)
		if err != nil {
			return err
		}
		var prof *profiler
		if i == 0 && b.perfDir != "" {
			if prof, err = startPerf(b.perfDir, "perf-odata", inf.cmd.Process.Pid); err != nil {
				inf.stop()
				return err
			}
		}
		pages, elapsed, err := readFeed(ctx, inf)
		if perr := prof.stop(); err == nil && perr != nil {
			err = perr
		}
		if err == nil {
			var peak int64
			if _, peak, err = procMemory(inf.cmd.Process.Pid); err == nil && peak-base > r.peakRSS-r.baseRSS {
				r.baseRSS, r.peakRSS = base, peak
			}
		}
		inf.stop()
		if err != nil {
			return err
		}
		var rows, n int64
		for d, p := range pages {
			rows += p.rows
			n += p.bytes
			if p.rows != perPage && d != len(pages)-1 {
				return fmt.Errorf("odata: page %d held %d rows, want %d", d+1, p.rows, perPage)
			}
		}
		if rows != b.total {
			return fmt.Errorf("odata: the feed held %d rows, the report %d", rows, b.total)
		}
		r.reads, r.elapsed, r.rows, r.bytes = append(r.reads, pages), append(r.elapsed, elapsed), rows, n
		if err := js.measure(ctx, b, ""); err != nil {
			return err
		}
	}
	if err := js.finish(); err != nil {
		return err
	}

	// Depth without the drift of load over a whole read: every tenth page
	// and the worst, each read right after the first page, three times,
	// on one more fresh informe.
	walls, _ := r.depths()
	worst := slices.Index(walls[:r.fullDepths()], slices.Max(walls[:r.fullDepths()]))
	var depths []int
	for d := 10; d < r.fullDepths(); d += 10 {
		depths = append(depths, d-1)
	}
	if !slices.Contains(depths, worst) && worst > 0 {
		depths = append(depths, worst)
	}
	logf("odata: pages 10, 20, ... and %d, each right after page 1, 3 times, fresh informe", worst+1)
	inf, _, err := b.startFeed(ctx)
	if err != nil {
		return err
	}
	defer inf.stop()
	first := r.reads[0][0].url
	for _, d := range depths {
		p := pairedDepth{depth: d}
		for range 3 {
			for _, u := range []string{first, r.reads[0][d].url} {
				s, err := inf.fetch(ctx, u, nil, nil)
				if err != nil {
					return err
				}
				if s.status != http.StatusOK {
					return fmt.Errorf("odata: %s: status %d", u, s.status)
				}
				if u == first {
					p.first = append(p.first, s.wall)
				} else {
					p.page = append(p.page, s.wall)
				}
			}
		}
		r.paired = append(r.paired, p)
	}
	b.res.odata = r

	logf("odata: query plans of page 1 and page %d", worst+1)
	for _, d := range []int{0, worst} {
		pl, err := b.explainSlice(ctx, d)
		if err != nil {
			return err
		}
		b.res.plans = append(b.res.plans, pl)
	}
	return nil
}

// explainSlice returns the analyzed plan (a one-off, custom plan, as
// informe's first executions of its statement get) of the query that
// report.Store.OpenSlice runs for the feed's page at depth d (0 is the
// first page), after the key of the row before it.
func (b *bench) explainSlice(ctx context.Context, d int) (plan, error) {
	var after *report.Key
	if d > 0 {
		var k report.Key
		err := b.pool.QueryRow(ctx, `SELECT key_contract_id, coalesce(key_process_id, 0), coalesce(key_task_id, 0)
			FROM general_report ORDER BY key_contract_id, key_process_id, key_task_id OFFSET $1 LIMIT 1`,
			int64(d)*perPage-1).Scan(&k[0], &k[1], &k[2])
		if err != nil {
			return plan{}, fmt.Errorf("key before page %d: %w", d+1, err)
		}
		after = &k
	}
	q, _, _, err := traced(ctx, b.dbURL, func(s *report.Store) (*report.Cursor, error) {
		return s.OpenSlice(ctx, report.Slice{After: after, Limit: perPage + 1})
	})
	if err != nil {
		return plan{}, err
	}
	rows, err := b.pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, SETTINGS) "+q.inline())
	if err != nil {
		return plan{}, fmt.Errorf("explain odata page %d: %w", d+1, err)
	}
	defer rows.Close()
	var text strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return plan{}, err
		}
		text.WriteString(line + "\n")
	}
	return plan{fmt.Sprintf("odata page %d (report.Store.OpenSlice, arguments %s): one-off (custom) plan", d+1, q.args()), text.String()}, rows.Err()
}

// startFeed starts a fresh informe and warms it up with a 100-row page of
// the feed; it returns the process and its VmRSS after the warm-up.
func (b *bench) startFeed(ctx context.Context) (*informe, int64, error) {
	inf, err := b.current.start(ctx, startOptions{})
	if err != nil {
		return nil, 0, err
	}
	var warm feedCounter
	s, err := inf.fetch(ctx, "/odata/GeneralReport", http.Header{"Prefer": {fmt.Sprintf("odata.maxpagesize=%d", small)}}, &warm)
	if err == nil && (s.status != http.StatusOK || warm.rows != small) {
		err = fmt.Errorf("status %d, %d rows", s.status, warm.rows)
	}
	if err != nil {
		inf.stop()
		return nil, 0, fmt.Errorf("odata warm-up: %w", err)
	}
	rss, _, err := procMemory(inf.cmd.Process.Pid)
	if err != nil {
		inf.stop()
		return nil, 0, err
	}
	return inf, rss, nil
}

// readFeed reads the whole feed, following next links, and returns its
// pages and the time from the first request to the last byte.
func readFeed(ctx context.Context, inf *informe) ([]feedPage, time.Duration, error) {
	var pages []feedPage
	url := "/odata/GeneralReport"
	began := time.Now()
	for url != "" {
		var c feedCounter
		s, err := inf.fetch(ctx, url, nil, &c)
		if err != nil {
			return nil, 0, fmt.Errorf("odata page %d: %w", len(pages)+1, err)
		}
		if s.status != http.StatusOK {
			return nil, 0, fmt.Errorf("odata page %d: status %d: %s", len(pages)+1, s.status, c.tail)
		}
		pages = append(pages, feedPage{url: requestURI(url), wall: s.wall, ttfb: s.ttfb, rows: c.rows, bytes: s.bytes})
		if url, err = c.nextLink(); err != nil {
			return nil, 0, fmt.Errorf("odata page %d: %w", len(pages), err)
		}
	}
	return pages, time.Since(began), nil
}

// requestURI returns link's path and query, which another informe answers
// too (next links are absolute).
func requestURI(link string) string {
	u, err := neturl.Parse(link)
	if err != nil || u.Host == "" {
		return link
	}
	return u.RequestURI()
}

// rowMark starts every entity of the report's feed: its key property comes
// first. Inside a JSON string a quote is escaped, so the mark cannot occur
// within a value.
var rowMark = []byte(`{"row_id":`)

// feedCounter counts the entities of a feed page written to it and keeps
// the end of the body, where the next link is.
type feedCounter struct {
	rows  int64
	carry []byte // the last len(rowMark)-1 bytes seen
	tail  []byte // the last tailSize bytes seen
}

const tailSize = 4 << 10

func (c *feedCounter) Write(p []byte) (int, error) {
	k := len(rowMark) - 1
	if len(c.carry) > 0 { // marks that straddle the previous write and this one
		c.rows += int64(bytes.Count(append(slices.Clip(c.carry), p[:min(len(p), k)]...), rowMark))
	}
	c.rows += int64(bytes.Count(p, rowMark))
	c.carry = append(c.carry, p...)
	c.carry = append(c.carry[:0], c.carry[max(0, len(c.carry)-k):]...)
	c.tail = append(c.tail, p[max(0, len(p)-tailSize):]...)
	c.tail = append(c.tail[:0], c.tail[max(0, len(c.tail)-tailSize):]...)
	return len(p), nil
}

// nextLink returns the page's @odata.nextLink, "" on the last page.
func (c *feedCounter) nextLink() (string, error) {
	const key = `"@odata.nextLink":`
	i := bytes.LastIndex(c.tail, []byte(key))
	if i < 0 {
		if !bytes.HasSuffix(bytes.TrimSpace(c.tail), []byte("]}")) {
			return "", fmt.Errorf("the body ends neither with a next link nor with the end of the value array: %q", c.tail[max(0, len(c.tail)-200):])
		}
		return "", nil
	}
	rest := bytes.TrimSuffix(bytes.TrimSpace(c.tail[i+len(key):]), []byte("}"))
	var link string
	if err := json.Unmarshal(rest, &link); err != nil {
		return "", fmt.Errorf("next link %q: %w", rest, err)
	}
	return link, nil
}
