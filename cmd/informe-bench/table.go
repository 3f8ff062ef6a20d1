package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// results is everything one run measured.
type results struct {
	o           options
	contracts   int
	seed        int64
	total       int64
	totalPages  int64
	runs        int
	binary      string // the informe measured
	started     time.Time
	psqlStartup []time.Duration
	copies      []*copyResult
	cases       []*caseResult
	plans       []plan
	targets     []target
	loadBefore  string // /proc/loadavg's 1-, 5- and 15-minute averages
	loadAfter   string
	took        []partTime
	failed      []partFailure

	baselineLabel string
	baseCases     []*caseResult // the page cases with the baseline binary

	exportSpecs  []*exportSpec
	exports      []*exportResult
	exportCopies []*copyRun
	odata        *odataResult
	slow         *slowResult
	burst        *burstResult
	gzip         *gzipResult
}

// partFailure is a part that could not run to its end.
type partFailure struct {
	part string
	err  error
}

// partTime is how long a part of the run took, and the load average after.
type partTime struct {
	part string
	took time.Duration
	load string
}

// target is one of the targets, as measured.
type target struct {
	name  string // what is checked
	short string // the same, for the table's target column
	value string // what was measured
	pass  bool
	cases []*caseResult // the table lines it belongs to
}

func (t target) verdict() string {
	if t.pass {
		return "PASS"
	}
	return "MISS"
}

const mib = 1 << 20

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

func perSecond(n int64, d time.Duration) float64 { return float64(n) / d.Seconds() }

func (r *caseResult) wall() time.Duration {
	return median(collect(r.samples, func(s sample) time.Duration { return s.wall }))
}

func byWall(a, b sample) int { return int(a.wall - b.wall) }

func (r *caseResult) ttfb() time.Duration {
	return median(collect(r.samples, func(s sample) time.Duration { return s.ttfb }))
}

func (r *caseResult) bytes() int64 { return r.samples[len(r.samples)-1].bytes }

// cpu and pgCPU are means: /proc counts in 10 ms ticks, too coarse for the
// median of a request that takes tens of milliseconds.
func (r *caseResult) cpu() float64 {
	return mean(collect(r.samples, func(s sample) float64 { return s.cpu }))
}

func (r *caseResult) pgCPU() float64 {
	return mean(collect(r.samples, func(s sample) float64 { return s.pgCPU }))
}

func (r *caseResult) growth() int64 { return r.peakRSS - r.baseRSS }

func (r *caseResult) rowsPerSec() float64 { return perSecond(r.rows, r.wall()) }

func (c *copyResult) psqlRowsPerSec() float64 { return perSecond(c.rows, median(c.psql)) }
func (c *copyResult) pgxRowsPerSec() float64  { return perSecond(c.rows, median(c.pgx)) }

func collect[T any](ss []sample, f func(sample) T) []T {
	out := make([]T, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func (r *results) find(format, label string, perPage int64) *caseResult {
	for _, c := range r.cases {
		if c.format == format && c.page.label == label && c.page.perPage == perPage {
			return c
		}
	}
	return nil
}

// evaluate checks the targets against what was measured.
func (r *results) evaluate() {
	add := func(t target) { r.targets = append(r.targets, t) }
	minRatio := map[string]float64{"csv": 0.8, "json": 0.6, "ndjson": 0.6}
	for _, c := range r.cases {
		if c.page.perPage != perPage {
			continue
		}
		where := fmt.Sprintf("%s page %d (%s)", c.format, c.page.page, c.page.label)
		if m, ok := minRatio[c.format]; ok {
			x := c.rowsPerSec() / c.copy.psqlRowsPerSec()
			add(target{
				name:  fmt.Sprintf("%s: rows/s at least %.1fx psql COPY's (informe's count included)", where, m),
				short: fmt.Sprintf(">=%.1fxCOPY", m),
				value: fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s; %.2fx pgx COPY)", x, c.rowsPerSec(), c.copy.psqlRowsPerSec(), c.rowsPerSec()/c.copy.pgxRowsPerSec()),
				pass:  x >= m, cases: []*caseResult{c},
			})
		}
		if c.format == "csv" {
			add(target{
				name: where + ": first byte under 50 ms", short: "TTFB<50ms",
				value: ms(c.ttfb()) + " ms", pass: c.ttfb() < 50*time.Millisecond, cases: []*caseResult{c},
			})
		}
		if c.format == "xlsx" {
			add(target{
				name: where + ": under 1.2 s", short: "wall<1.2s",
				value: ms(c.wall()) + " ms", pass: c.wall() < 1200*time.Millisecond, cases: []*caseResult{c},
			})
			add(target{
				name: where + ": peak RSS growth under 64 MiB", short: "RSS+<64MiB",
				value: fmt.Sprintf("%.1f MiB", float64(c.growth())/mib), pass: c.growth() < 64*mib, cases: []*caseResult{c},
			})
		}
	}
	for _, f := range formats {
		first := r.find(f, "first", perPage)
		last := r.find(f, "last full", perPage)
		if last == nil {
			last = r.find(f, "last", perPage)
		}
		if first == nil || last == nil {
			continue
		}
		x := last.wall().Seconds() / first.wall().Seconds()
		add(target{
			name:  fmt.Sprintf("%s: page %d (%s) within 1.3x of page 1's wall time", f, last.page.page, last.page.label),
			short: "last<=1.3xfirst",
			value: fmt.Sprintf("%.2fx (%s vs %s ms)", x, ms(last.wall()), ms(first.wall())),
			pass:  x <= 1.3, cases: []*caseResult{last},
		})
	}
	for _, f := range rssFormats {
		big, little := r.find(f, "first", perPage), r.find(f, "first", small)
		if big == nil || little == nil {
			continue
		}
		d := big.growth() - little.growth()
		add(target{
			name:  fmt.Sprintf("%s: peak RSS growth from a %d-row page to a %d-row page under 8 MiB", f, small, perPage),
			short: "dRSS<8MiB",
			value: fmt.Sprintf("%.1f MiB (growth %.1f vs %.1f MiB; peak %.1f vs %.1f MiB)", float64(d)/mib,
				float64(big.growth())/mib, float64(little.growth())/mib, float64(big.peakRSS)/mib, float64(little.peakRSS)/mib),
			pass: d < 8*mib, cases: []*caseResult{big, little},
		})
	}
	r.evaluateParts()
	for _, f := range r.failed {
		r.targets = append(r.targets, target{
			name:  fmt.Sprintf("%s: every case ran to its end (its other targets are missing or partial)", f.part),
			value: f.err.Error(),
		})
	}
}

func (r *results) targetsOf(c *caseResult) string {
	var parts []string
	for _, t := range r.targets {
		if slices.Contains(t.cases, c) {
			parts = append(parts, t.short+" "+t.verdict())
		}
	}
	return strings.Join(parts, ", ")
}

// table is a header and rows of cells, printed as text or as Markdown.
// A table of two columns, "what" and "value", prints as text as lines of
// key and value.
type table struct {
	header []string
	rows   [][]string
}

func (t table) text(w io.Writer) {
	if len(t.header) == 2 && t.header[0] == "what" {
		for _, row := range t.rows {
			fmt.Fprintf(w, "  %s: %s\n", row[0], row[1])
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range append([][]string{t.header}, t.rows...) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
}

func (t table) markdown(w io.Writer) {
	fmt.Fprintln(w, "| "+strings.Join(t.header, " | ")+" |")
	fmt.Fprintln(w, strings.Repeat("|---", len(t.header))+"|")
	for _, row := range t.rows {
		fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
	}
}

func (r *results) caseTable() table {
	t := table{header: []string{"format", "page", "rows", "bytes", "wall ms", "min-max ms", "rows/s", "MB/s", "TTFB ms",
		"CPU s", "PG CPU s", "peak RSS MiB", "RSS growth MiB",
		"COPY psql rows/s", "COPY pgx rows/s", "x psql", "x pgx", "targets"}}
	for _, c := range r.cases {
		w := c.wall()
		t.rows = append(t.rows, []string{
			c.format, fmt.Sprintf("%d (%s)", c.page.page, c.page.label), fmt.Sprint(c.rows), fmt.Sprint(c.bytes()),
			ms(w), ms(slices.MinFunc(c.samples, byWall).wall) + "-" + ms(slices.MaxFunc(c.samples, byWall).wall), fmt.Sprintf("%.0f", c.rowsPerSec()), fmt.Sprintf("%.1f", float64(c.bytes())/w.Seconds()/1e6), ms(c.ttfb()),
			fmt.Sprintf("%.3f", c.cpu()), fmt.Sprintf("%.3f", c.pgCPU()),
			fmt.Sprintf("%.1f", float64(c.peakRSS)/mib), fmt.Sprintf("%.1f", float64(c.growth())/mib),
			fmt.Sprintf("%.0f", c.copy.psqlRowsPerSec()), fmt.Sprintf("%.0f", c.copy.pgxRowsPerSec()),
			fmt.Sprintf("%.2f", c.rowsPerSec()/c.copy.psqlRowsPerSec()), fmt.Sprintf("%.2f", c.rowsPerSec()/c.copy.pgxRowsPerSec()),
			r.targetsOf(c),
		})
	}
	return t
}

func (r *results) copyTable() table {
	t := table{header: []string{"page", "rows", "CSV bytes", "psql ms", "psql rows/s", "psql MB/s", "pgx ms", "pgx rows/s", "pgx MB/s", "query arguments"}}
	for _, c := range r.copies {
		p, g := median(c.psql), median(c.pgx)
		t.rows = append(t.rows, []string{
			fmt.Sprintf("%d (%s)", c.page.page, c.page.label), fmt.Sprint(c.rows), fmt.Sprint(c.bytes),
			ms(p), fmt.Sprintf("%.0f", c.psqlRowsPerSec()), fmt.Sprintf("%.1f", float64(c.bytes)/p.Seconds()/1e6),
			ms(g), fmt.Sprintf("%.0f", c.pgxRowsPerSec()), fmt.Sprintf("%.1f", float64(c.bytes)/g.Seconds()/1e6),
			c.page.args(),
		})
	}
	return t
}

func (r *results) targetTable() table {
	t := table{header: []string{"target", "measured", ""}}
	for _, tg := range r.targets {
		t.rows = append(t.rows, []string{tg.name, tg.value, tg.verdict()})
	}
	return t
}

func (r *results) passed() int {
	n := 0
	for _, t := range r.targets {
		if t.pass {
			n++
		}
	}
	return n
}

func (r *results) intro() []string {
	return []string{
		fmt.Sprintf("informe benchmark, %s, %s/%s, %d CPUs, %s", r.started.Format(time.DateTime), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version()),
		fmt.Sprintf("data: %d contracts (seed %d), %d report rows, %d pages of %d rows", r.contracts, r.seed, r.total, r.totalPages, perPage),
		fmt.Sprintf("informe: %s%s; parts run: %s", r.binary, serveArgsNote(r.o.serveArgs), strings.Join(r.o.only, ", ")),
		fmt.Sprintf("load average (1, 5, 15 min) before: %s, after: %s", r.loadBefore, r.loadAfter),
		r.partTimes(),
	}
}

func serveArgsNote(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return " serve " + strings.Join(args, " ")
}

// busy warns when the machine was loaded by more than the benchmark itself
// (informe, PostgreSQL and the client take up to about two CPUs): the
// numbers are then noise.
func (r *results) busy() string {
	for _, l := range []string{r.loadBefore, r.loadAfter} {
		var one float64
		if _, err := fmt.Sscan(l, &one); err == nil && one > float64(runtime.NumCPU())+1 {
			return fmt.Sprintf("WARNING: the 1-minute load average reached %.1f on %d CPUs: other work competed with the benchmark; run it again on a quiet machine", one, runtime.NumCPU())
		}
	}
	return ""
}

func (r *results) writeText(w io.Writer) {
	for _, l := range r.intro() {
		fmt.Fprintln(w, l)
	}
	if b := r.busy(); b != "" {
		fmt.Fprintln(w, b)
	}
	for _, s := range r.sections() {
		fmt.Fprintf(w, "\n%s\n", s.title)
		for _, n := range s.notes {
			fmt.Fprintln(w, "  "+n)
		}
		s.table.text(w)
	}
	fmt.Fprintf(w, "\nTargets: %d of %d met\n", r.passed(), len(r.targets))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range r.targets {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", t.verdict(), t.name, t.value)
	}
	tw.Flush()
}

func (r *results) writeMarkdown(w io.Writer) {
	fmt.Fprintln(w, "# informe benchmark")
	fmt.Fprintln(w)
	for _, l := range r.intro() {
		fmt.Fprintln(w, "- "+l)
	}
	if b := r.busy(); b != "" {
		fmt.Fprintln(w, "\n**"+b+"**")
	}
	fmt.Fprintf(w, "\n## Targets: %d of %d met\n\n", r.passed(), len(r.targets))
	r.targetTable().markdown(w)
	for _, s := range r.sections() {
		fmt.Fprintf(w, "\n## %s\n\n", s.title)
		for _, n := range s.notes {
			fmt.Fprintln(w, "- "+n)
		}
		if len(s.notes) > 0 {
			fmt.Fprintln(w)
		}
		s.table.markdown(w)
	}
	fmt.Fprintln(w, "\n## Query plans")
	for _, p := range r.plans {
		fmt.Fprintf(w, "\n### %s\n\n```\n%s```\n", p.title, p.text)
	}
}
