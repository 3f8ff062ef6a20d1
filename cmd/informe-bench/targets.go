package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// goal is a target: a figure, a comparison and a limit in a unit ("x",
// "ms", "s", "MiB", "%", "" for a count), maybe of something ("baseline").
type goal struct {
	figure, cmp string // cmp: "<", "<=" or ">="
	limit       float64
	unit, of    string
}

// goals are every target of the benchmark, by key: the one table of them.
var goals = map[string]goal{
	"page-wall-baseline": {"wall time", "<=", 1.05, "x", "baseline"},
	"page-cpu-baseline":  {"CPU s, informe's and PostgreSQL's", "<=", 1.05, "x", "baseline"},
	"page-ttfb-baseline": {"first byte", "<=", 1, "ms", "over baseline"},
	"page-csv-copy":      {"rows/s", ">=", 0.8, "x", "psql COPY"},
	"page-text-copy":     {"rows/s", ">=", 0.6, "x", "psql COPY"},
	"page-csv-ttfb":      {"first byte", "<", 50, "ms", ""},
	"page-xlsx-wall":     {"wall time", "<", 1.2, "s", ""},
	"page-xlsx-rss":      {"peak RSS growth", "<", 64, "MiB", ""},
	"page-depth":         {"last full page's wall time", "<=", 1.3, "x", "page 1"},
	"page-rss":           {"peak RSS growth over a 100-row page's", "<", 8, "MiB", ""},
	"export-client-copy": {"rows/s", ">=", 0.9, "x", "pgx COPY"},
	"export-whole-copy":  {"rows/s", ">=", 1.3, "x", "pgx COPY"},
	"export-rss":         {"peak RSS growth", "<", 8, "MiB", ""},
	"export-cli":         {"wall time", "<=", 1.1, "x", "HTTP export"},
	"xlsx-ttfb":          {"first byte", "<", 1, "s", ""},
	"xlsx-csv":           {"wall time", "<=", 1.15, "x", "CSV export"},
	"parquet-csv":        {"wall time", "<=", 1, "x", "CSV export"},
	"parquet-size":       {"bytes", "<=", 20, "%", "CSV's"},
	"xlsx-rss":           {"peak RSS growth", "<", 32, "MiB", ""},
	"parts-one":          {"rows/s", ">=", 0.9, "x", "pgx COPY"},
	"parts-many":         {"rows/s", ">=", 1.3, "x", "pgx COPY"},
	"odata-json":         {"rows/s of the whole feed", ">=", 0.7, "x", "JSON export"},
	"odata-depth":        {"worst full page's wall time", "<=", 1.2, "x", "page 1"},
	"odata-rss":          {"peak RSS growth of a whole read", "<", 8, "MiB", ""},
	"slow-p99":           {"p99 of 10-row JSON pages", "<", 50, "ms", ""},
	"slow-hold":          {"connection hold", "<=", 1.5, "x", "fast clients'"},
	"burst-whole":        {"responses neither whole nor refused with Retry-After", "<=", 0, "", ""},
	"burst-rss":          {"informe's peak RSS", "<", 256, "MiB", ""},
	"flood-p99":          {"p99", "<=", 1.5, "x", "alone"},
	"flood-legit":        {"answers other than 200", "<=", 0, "", ""},
	"gzip-wall":          {"wall time", "<=", 1.3, "x", "identity"},
	"gzip-size":          {"bytes", "<", 10, "%", "identity's"},
	"part-ran":           {"ran to its end", "<=", 0, "", ""},
	"typed-copy":         {"rows/s", ">=", 1.6, "x", "psql \\copy"},
	"typed-pg-cpu":       {"PostgreSQL CPU a row", "<=", 0.5, "x", "baseline"},
	"typed-json-page":    {"wall time", "<=", 0.8, "x", "baseline"},
	"typed-small-page":   {"wall time", "<=", 1, "x", "last baseline"},
	"fair-export":        {"p50", "<=", 2, "x", "alone"},
	"fair-refused":       {"exports not 200", "<=", 0, "", ""},
	"fair-page":          {"p99", "<=", 2, "x", "alone"},
}

func (g goal) String() string {
	return strings.TrimSpace(fmt.Sprintf("%s %s %s", g.cmp, num(g.limit, g.unit, 0), g.of))
}

// met reports whether v meets the goal, which no ratio over zero does.
func (g goal) met(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	return g.cmp == "<" && v < g.limit || g.cmp == "<=" && v <= g.limit || g.cmp == ">=" && v >= g.limit
}

// num writes v in unit, with 2 decimals for ratios and seconds, else 1,
// and extra more.
func num(v float64, unit string, extra int) string {
	d := 1 + extra
	if unit == "x" || unit == "s" {
		d++
	}
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case unit == "":
		return fmt.Sprintf("%g", v)
	case unit == "x", unit == "%":
		return fmt.Sprintf("%.*f%s", d, v, unit)
	}
	return fmt.Sprintf("%.*f %s", d, v, unit)
}

// check records a figure measured of subject against goal key: a row of
// the targets.
func (r *results) check(key, subject string, value float64, detail string, args ...any) {
	g, ok := goals[key]
	if !ok {
		panic("no goal " + key)
	}
	verdict := "MISS"
	if g.met(value) {
		r.passed, verdict = r.passed+1, "PASS"
	}
	measured := num(value, g.unit, 0)
	if measured == num(g.limit, g.unit, 0) { // show on which side it fell
		measured = num(value, g.unit, 2)
	}
	r.targets.add(verdict, subject, g.figure, measured, g, fmt.Sprintf(detail, args...))
}

// table is a titled table of cells, printed as text or as Markdown.
type table struct {
	title  string
	notes  []string
	header []string
	rows   [][]string
}

func (t *table) add(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = fmt.Sprint(c)
	}
	t.rows = append(t.rows, row)
}

// write writes t as Markdown, its columns aligned for a terminal too.
func (t table) write(w io.Writer) {
	fmt.Fprintf(w, "\n## %s\n\n", t.title)
	for _, n := range t.notes {
		fmt.Fprintln(w, "- "+n)
	}
	if len(t.rows) == 0 {
		return
	}
	if len(t.notes) > 0 {
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for i, row := range append([][]string{t.header}, t.rows...) {
		fmt.Fprintln(tw, "| "+strings.Join(row, "\t| ")+"\t|")
		if i == 0 {
			fmt.Fprintln(tw, strings.Repeat("|---\t", len(row))+"|")
		}
	}
	tw.Flush()
}

// plan is an EXPLAIN output.
type plan struct{ title, text string }

// results is everything one run measured.
type results struct {
	intro   []string
	tables  []table
	targets table // the checks
	passed  int   // of them
	plans   []plan
}

// write writes the run as Markdown to out, targets last, and to md,
// targets first and plans last.
func (r *results) write(out, md io.Writer) {
	w := io.MultiWriter(out, md)
	fmt.Fprintln(w, "# informe benchmark")
	fmt.Fprintln(w)
	for _, l := range r.intro {
		fmt.Fprintln(w, "- "+l)
	}
	tt := r.targets
	tt.title = fmt.Sprintf("Targets: %d of %d met", r.passed, len(tt.rows))
	tt.header = []string{"", "case", "figure", "measured", "target", "detail"}
	if len(tt.rows) > 0 { // a part such as capacity checks nothing
		tt.write(md)
	}
	for _, t := range r.tables {
		t.write(w)
	}
	if len(tt.rows) > 0 {
		tt.write(out)
	}
	if len(r.plans) > 0 {
		fmt.Fprintln(md, "\n## Query plans")
	}
	for _, p := range r.plans {
		fmt.Fprintf(md, "\n### %s\n\n```\n%s```\n", p.title, p.text)
	}
}
