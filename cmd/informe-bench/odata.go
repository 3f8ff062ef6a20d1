package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// odata reads the whole feed /odata/GeneralReport, 10,000 rows a page, by
// following @odata.nextLink, with a client that decodes nothing (it counts
// rows by their key property and reads the next link from the body's end).
// Each read is made by a fresh informe warmed up with a 100-row page, as a
// refresh after a restart would be, and is followed by a JSON export of the
// same rows from another informe.
func (b *bench) odata(ctx context.Context) error {
	set, err := b.exports(ctx)
	if err != nil {
		return err
	}
	js, err := b.session(ctx, b.current, "json export, all rows", set.warm.path("json"), set.all.path("json"), set.all.rows)
	if err != nil {
		return err
	}
	defer js.stop()
	var reads [][]time.Duration // per read, each page's wall time
	var elapsed []time.Duration
	var growth, peak, size int64
	for i := range b.o.odataRuns {
		logf("odata: full read %d of %d, fresh informe", i+1, b.o.odataRuns)
		inf, err := b.current.start(ctx)
		if err != nil {
			return err
		}
		err = inf.warm(ctx, "/odata/GeneralReport", http.Header{"Prefer": {fmt.Sprint("odata.maxpagesize=", small)}})
		var walls []time.Duration
		var rows int64
		began := time.Now()
		for url := "/odata/GeneralReport"; err == nil && url != ""; {
			var c feedCounter
			var s sample
			if s, err = inf.fetch(ctx, url, nil, &c); err == nil && s.status != http.StatusOK {
				err = fmt.Errorf("status %d: %s", s.status, c.tail)
			}
			if err == nil {
				walls, rows, size = append(walls, s.wall), rows+c.rows, size+s.bytes
				url, err = c.nextLink()
			}
		}
		elapsed = append(elapsed, time.Since(began))
		g, p := inf.memory()
		growth, peak = max(growth, g), max(peak, p)
		inf.stop()
		if err == nil && rows != b.total {
			err = fmt.Errorf("the feed held %d rows, the report %d", rows, b.total)
		}
		if err != nil {
			return fmt.Errorf("odata page %d: %w", len(walls)+1, err)
		}
		reads = append(reads, walls)
		if err := js.step(ctx); err != nil {
			return err
		}
	}
	if err := js.finish(); err != nil {
		return err
	}
	size /= int64(len(reads))
	// Per depth the median over the reads; a partial last page is quicker
	// and says nothing about depth.
	var depths []time.Duration
	for d := range b.total / perPage {
		var ws []time.Duration
		for _, r := range reads {
			ws = append(ws, r[d])
		}
		depths = append(depths, median(ws))
	}
	worst := slices.Index(depths, slices.Max(depths))
	feedRPS, jsonRPS := float64(b.total)/median(elapsed).Seconds(), float64(b.total)/js.ss.wall().Seconds()
	t := table{title: "OData feed", header: []string{"what", "value"}, notes: []string{
		fmt.Sprintf("%d full reads, each by a fresh informe, each followed by a JSON export of the same rows (another informe)", len(reads))}}
	t.add("pages per read, bytes", fmt.Sprintf("%d, %d", len(reads[0]), size))
	t.add("whole feed: wall (median), rows/s", fmt.Sprintf("%.2f s, %.0f", median(elapsed).Seconds(), feedRPS))
	t.add("JSON export: wall (median), rows/s, bytes", fmt.Sprintf("%.2f s, %.0f, %d", js.ss.wall().Seconds(), jsonRPS, js.ss.bytes()))
	var tenth []string
	for d := 0; d < len(depths); d += 10 {
		tenth = append(tenth, fmt.Sprintf("%d: %s", d+1, ms(depths[d])))
	}
	t.add("median page ms by page (every tenth)", strings.Join(tenth, ", "))
	t.add("peak RSS, growth over the warm-up (the read that grew most)", mibs(peak)+" MiB, "+mibs(growth)+" MiB")
	b.res.tables = append(b.res.tables, t)
	b.res.check("odata-json", "odata feed", feedRPS/jsonRPS, "%.0f vs %.0f rows/s", feedRPS, jsonRPS)
	b.res.check("odata-depth", fmt.Sprintf("odata page %d", worst+1), depths[worst].Seconds()/depths[0].Seconds(),
		"%s vs %s ms, median of %d reads", ms(depths[worst]), ms(depths[0]), len(reads))
	b.res.check("odata-rss", "odata feed", float64(growth)/mib, "peak %s MiB", mibs(peak))
	return nil
}

// rowMark starts every entity of the feed: its key property comes first,
// and inside a JSON string a quote is escaped, so it occurs nowhere else.
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
	if len(c.carry) > 0 { // a mark across two writes
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
			return "", fmt.Errorf("the body ends with neither a next link nor the end of the value array: %q", c.tail[max(0, len(c.tail)-200):])
		}
		return "", nil
	}
	var link string
	if err := json.Unmarshal(bytes.TrimSuffix(bytes.TrimSpace(c.tail[i+len(key):]), []byte("}")), &link); err != nil {
		return "", fmt.Errorf("next link: %w", err)
	}
	return link, nil
}
