package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/informe/informe/internal/postgres"
)

func init() {
	maps.Copy(goals, map[string]goal{
		"folding-first": {"first page's wall time", "<=", 1.5, "x", "unfiltered first page"},
		"folding-depth": {"worst page's wall time", "<=", 1.3, "x", "its first page"},
	})
}

// foldPage is the page size of the folding part, a client's usual one.
const foldPage = 1000

// folding measures the steps Power Query folds into OData requests: the
// first 1,000-row page of each filter or sort next to the unfiltered first
// page, the requests alternating, and a sorted, filtered feed followed by
// its next links, each depth against its first page. Filter values come
// from the data: the rarest task status, the busiest month of end dates,
// the busiest day of execution dates, the median service cost.
func (b *bench) folding(ctx context.Context) error {
	values, err := postgres.FoldingValues(ctx, b.pool)
	if err != nil {
		return fmt.Errorf("folding: %w", err)
	}
	status, cost, month, day := values.Status, values.Cost, values.Month, values.Day
	const date, dateTime = "2006-01-02", "2006-01-02T15:04:05Z"
	sorted := "$filter=" + url.QueryEscape("costo_servicio gt "+cost) + "&$orderby=" + url.QueryEscape("costo_servicio desc")
	cases := []struct{ label, query string }{
		{"unfiltered", ""},
		{"task_status eq '" + status + "'", "$filter=" + url.QueryEscape("task_status eq '"+status+"'")},
		{"a month of task_end_date", "$filter=" + url.QueryEscape("task_end_date ge "+month.Format(date)+" and task_end_date lt "+month.AddDate(0, 1, 0).Format(date))},
		{"startswith(client_email,'a')", "$filter=" + url.QueryEscape("startswith(client_email,'a')")},
		{"a day of execution_date (incremental refresh)", "$filter=" + url.QueryEscape("execution_date ge "+day.Format(dateTime)+" and execution_date lt "+day.AddDate(0, 0, 1).Format(dateTime))},
		{"costo_servicio gt " + cost + ", $orderby desc", sorted},
	}
	// One informe of each launcher (current, and a baseline's), their
	// requests alternating.
	var infs []*informe
	defer func() {
		for _, inf := range infs {
			inf.stop()
		}
	}()
	for _, l := range b.guarded() {
		inf, err := l.start(ctx)
		if err != nil {
			return err
		}
		infs = append(infs, inf)
	}
	hdr := http.Header{"Prefer": {fmt.Sprint("odata.maxpagesize=", foldPage)}}
	// page fetches a page of the feed from inf and returns its time and
	// next link.
	page := func(inf *informe, link string) (time.Duration, string, error) {
		var c feedCounter
		s, err := inf.fetch(ctx, link, hdr, &c)
		if err == nil && s.status != http.StatusOK {
			err = fmt.Errorf("GET %s: status %d: %s", link, s.status, c.tail)
		}
		if err == nil {
			link, err = c.nextLink()
		}
		return s.wall, link, err
	}
	walls := make([][][]time.Duration, len(infs)) // by informe, then case
	for k := range infs {
		walls[k] = make([][]time.Duration, len(cases))
	}
	for run := range b.o.runs + 1 { // the first warms the caches
		logf("folding: first pages, round %d of %d", run+1, b.o.runs+1)
		for i := range cases[1:] {
			for k, inf := range infs {
				for _, j := range []int{0, i + 1} { // the unfiltered page next to each case
					d, _, err := page(inf, "/odata/GeneralReport?"+cases[j].query)
					if err != nil {
						return fmt.Errorf("%s: %w", b.guarded()[k].label, err)
					}
					if run > 0 {
						walls[k][j] = append(walls[k][j], d)
					}
				}
			}
		}
	}
	for k := range infs {
		t := table{title: "OData folding: first pages of 1,000 rows (" + b.guarded()[k].label + ")", header: []string{"case", "median ms", "spread ms", "vs unfiltered"},
			notes: []string{fmt.Sprintf("%d rounds, each case's request next to an unfiltered one on the same informe", b.o.runs)}}
		if len(infs) > 1 {
			var labels []string
			for _, l := range b.guarded() {
				labels = append(labels, l.label)
			}
			t.notes = append(t.notes, "the informes of "+strings.Join(labels, ", ")+" in turn, each case's pair of requests")
		}
		unfiltered := median(walls[k][0])
		for i, c := range cases {
			m, r := median(walls[k][i]), median(walls[k][i]).Seconds()/unfiltered.Seconds()
			t.add(c.label, ms(m), ms(slices.Min(walls[k][i]))+"-"+ms(slices.Max(walls[k][i])), fmt.Sprintf("%.2fx", r))
			if i > 0 && k == 0 {
				b.res.check("folding-first", c.label, r, "%s vs %s ms", ms(m), ms(unfiltered))
			}
		}
		b.res.tables = append(b.res.tables, t)
	}
	// The sorted feed by its next links, each read the same way by each
	// informe in turn; per depth the median over the reads.
	const maxDepth = 50
	reads := make([][][]time.Duration, len(infs))
	for run := range b.o.runs {
		logf("folding: next links of %s, read %d of %d", cases[len(cases)-1].label, run+1, b.o.runs)
		for k, inf := range infs {
			var ws []time.Duration
			for link := "/odata/GeneralReport?" + sorted; link != "" && len(ws) < maxDepth; {
				d, next, err := page(inf, link)
				if err != nil {
					return fmt.Errorf("%s: page %d: %w", b.guarded()[k].label, len(ws)+1, err)
				}
				ws, link = append(ws, d), next
			}
			reads[k] = append(reads[k], ws)
		}
	}
	dt := table{title: "OData folding: a sorted, filtered feed by its next links", header: []string{"informe", "feed", "median ms by page (every fifth)", "worst page"}}
	var ratios []float64
	var worsts []int
	var depthsOf [][]time.Duration
	for k, rs := range reads {
		var depths []time.Duration
		for d := range slices.MinFunc(rs, func(a, b []time.Duration) int { return len(a) - len(b) }) {
			var ws []time.Duration
			for _, r := range rs {
				ws = append(ws, r[d])
			}
			depths = append(depths, median(ws))
		}
		worst := slices.Index(depths, slices.Max(depths))
		var every []string
		for d := 0; d < len(depths); d += 5 {
			every = append(every, fmt.Sprintf("%d: %s", d+1, ms(depths[d])))
		}
		ratio := depths[worst].Seconds() / depths[0].Seconds()
		dt.add(b.guarded()[k].label, cases[len(cases)-1].label+fmt.Sprintf(", %d-row pages, %d reads", foldPage, len(rs)),
			strings.Join(every, ", "), fmt.Sprintf("page %d: %s ms, %.2fx page 1", worst+1, ms(depths[worst]), ratio))
		ratios, worsts, depthsOf = append(ratios, ratio), append(worsts, worst), append(depthsOf, depths)
	}
	b.res.tables = append(b.res.tables, dt)
	detail := fmt.Sprintf("%s vs %s ms, median of %d reads", ms(depthsOf[0][worsts[0]]), ms(depthsOf[0][0]), len(reads[0]))
	if len(ratios) > 1 {
		detail += fmt.Sprintf("; %s: page %d %.2fx", b.guarded()[1].label, worsts[1]+1, ratios[1])
	}
	b.res.check("folding-depth", fmt.Sprintf("sorted feed page %d", worsts[0]+1), ratios[0], "%s", detail)
	return nil
}
