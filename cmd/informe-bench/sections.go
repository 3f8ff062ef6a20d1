package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The tables and targets of the export, odata, slow, burst and gzip parts,
// and the before/after table of the page cases.

func mibs(n int64) string { return fmt.Sprintf("%.1f", float64(n)/mib) }

func (r *results) findExport(format, via string, spec *exportSpec) *exportResult {
	for _, e := range r.exports {
		if e.format == format && e.via == via && e.spec == spec {
			return e
		}
	}
	return nil
}

// evaluateParts adds the targets of issues 8, 9 and 10.
func (r *results) evaluateParts() {
	add := func(t target) { r.targets = append(r.targets, t) }
	if len(r.exportSpecs) == 3 && len(r.exports) > 0 {
		all, client, warm := r.exportSpecs[0], r.exportSpecs[1], r.exportSpecs[2]
		for _, spec := range []*exportSpec{all, client} {
			for _, f := range []string{"csv", "ndjson"} {
				e := r.findExport(f, "HTTP", spec)
				if e == nil || e.copy == nil {
					continue
				}
				x := e.rowsPerSec() / e.copy.rowsPerSec()
				add(target{
					name:  fmt.Sprintf("export %s, %s (%d rows): rows/s at least 0.9x COPY's through pgx (same query, same run)", f, spec.label, spec.rows),
					value: fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s)", x, e.rowsPerSec(), e.copy.rowsPerSec()),
					pass:  x >= 0.9,
				})
			}
		}
		for _, f := range rssFormats {
			bigE, little := r.findExport(f, "HTTP", all), r.findExport(f, "HTTP", warm)
			if bigE == nil || little == nil {
				continue
			}
			d := bigE.growth() - little.growth()
			add(target{
				name: fmt.Sprintf("export %s: peak RSS growth from a %d-row export to the %d-row export under 8 MiB", f, warm.rows, all.rows),
				value: fmt.Sprintf("%s MiB (growth %s vs %s MiB; peak %s vs %s MiB)", mibs(d),
					mibs(bigE.growth()), mibs(little.growth()), mibs(bigE.peakRSS), mibs(little.peakRSS)),
				pass: d < 8*mib,
			})
		}
		csv, xlsx := r.findExport("csv", "HTTP", all), r.findExport("xlsx", "HTTP", all)
		if csv != nil && xlsx != nil {
			x := xlsx.wall().Seconds() / csv.wall().Seconds()
			add(target{
				name:  "export xlsx, all rows: at most 7x the CSV export's time",
				value: fmt.Sprintf("%.2fx (%.1f s vs %.1f s)", x, xlsx.wall().Seconds(), csv.wall().Seconds()),
				pass:  x <= 7,
			})
			add(target{
				name:  "export xlsx, all rows: peak RSS growth under 64 MiB",
				value: fmt.Sprintf("%s MiB (peak %s MiB)", mibs(xlsx.growth()), mibs(xlsx.peakRSS)),
				pass:  xlsx.growth() < 64*mib,
			})
		}
		if cli := r.findExport("csv", "CLI file", all); cli != nil && csv != nil {
			x := cli.wall().Seconds() / csv.wall().Seconds()
			add(target{
				name:  "informe export --output FILE (csv, all rows): within 1.1x of the HTTP export's time",
				value: fmt.Sprintf("%.2fx (%.2f s vs %.2f s)", x, cli.wall().Seconds(), csv.wall().Seconds()),
				pass:  x <= 1.1,
			})
		}
	}
	if o := r.odata; o != nil {
		x := o.rowsPerSec() / o.json.rowsPerSec()
		add(target{
			name:  "odata: the whole feed's rows/s at least 0.7x the JSON export's (same rows, same run)",
			value: fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s)", x, o.rowsPerSec(), o.json.rowsPerSec()),
			pass:  x >= 0.7,
		})
		walls, _ := o.depths()
		full := walls[:o.fullDepths()]
		worst := slices.Index(full, slices.Max(full))
		y := full[worst].Seconds() / full[0].Seconds()
		add(target{
			name: fmt.Sprintf("odata: every full page within 1.2x of the first page's time (per depth the median of %d reads)", len(o.reads)),
			value: fmt.Sprintf("worst %.2fx: page %d %s ms vs first %s ms; median page %s ms",
				y, worst+1, ms(full[worst]), ms(full[0]), ms(median(full))),
			pass: y <= 1.2,
		})
		add(target{
			name:  "odata: flat memory, peak RSS growth of a full read under 8 MiB",
			value: fmt.Sprintf("%s MiB (peak %s MiB)", mibs(o.growth()), mibs(o.peakRSS)),
			pass:  o.growth() < 8*mib,
		})
	}
	if s := r.slow; s != nil {
		p99 := percentile(s.probes, 99)
		add(target{
			name: fmt.Sprintf("slow: p99 of %d 10-row JSON pages while %d clients read 10,000-row CSV pages at %d B/s under 50 ms",
				len(s.probes), s.clients, s.rate),
			value: fmt.Sprintf("%s ms (median %s, max %s; idle: p99 %s ms); %d failed", ms(p99), ms(median(s.probes)),
				ms(slices.Max(s.probes)), ms(percentile(s.idleProbes, 99)), len(s.probeErrors)),
			pass: p99 < 50*time.Millisecond && len(s.probeErrors) == 0,
		})
		if len(s.slow) > 0 && len(s.fast) > 0 {
			x := median(s.slow).Seconds() / median(s.fast).Seconds()
			y := slices.Max(s.slow).Seconds() / slices.Max(s.fast).Seconds()
			add(target{
				name: fmt.Sprintf("slow: a slow response holds its database connection within 1.5x of a fast one (%d pages at once, median and worst)", s.clients),
				value: fmt.Sprintf("median %.2fx (%s vs %s ms), worst %.2fx (%s vs %s ms); %d still open", x, ms(median(s.slow)), ms(median(s.fast)),
					y, ms(slices.Max(s.slow)), ms(slices.Max(s.fast)), s.slowOpen),
				pass: x <= 1.5 && y <= 1.5 && s.slowOpen == 0 && len(s.slow) >= s.clients,
			})
		}
	}
	if b := r.burst; b != nil {
		var counts []string
		for i := range b.ok {
			counts = append(counts, fmt.Sprintf("round %d: csv %d ok, %d 503; xlsx %d ok, %d 503", i+1,
				b.ok[i]["csv"], b.busy[i]["csv"], b.ok[i]["xlsx"], b.busy[i]["xlsx"]))
		}
		add(target{
			name:  fmt.Sprintf("burst: %d CSV and %d XLSX pages at once (twice) all succeed whole or get 503", b.csv, b.xlsx),
			value: fmt.Sprintf("%s; %d other", strings.Join(counts, "; "), len(b.failures)),
			pass:  len(b.failures) == 0,
		})
		add(target{
			name:  "burst: informe's peak RSS under 256 MiB",
			value: fmt.Sprintf("%s MiB (growth %s MiB)", mibs(b.peakRSS), mibs(b.peakRSS-b.baseRSS)),
			pass:  b.peakRSS < 256*mib,
		})
	}
	if g := r.gzip; g != nil {
		id, gz := wallOf(g.identity), wallOf(g.gzip)
		x := gz.Seconds() / id.Seconds()
		add(target{
			name:  "gzip: a 10,000-row CSV page with Accept-Encoding: gzip within 1.3x of identity's time",
			value: fmt.Sprintf("%.2fx (%s vs %s ms)", x, ms(gz), ms(id)),
			pass:  x <= 1.3,
		})
		y := float64(g.gzip[0].bytes) / float64(g.identity[0].bytes)
		add(target{
			name:  "gzip: compressed bytes under 10% of identity's",
			value: fmt.Sprintf("%.1f%% (%d vs %d bytes)", 100*y, g.gzip[0].bytes, g.identity[0].bytes),
			pass:  y < 0.1,
		})
	}
}

func wallOf(ss []sample) time.Duration {
	return median(collect(ss, func(s sample) time.Duration { return s.wall }))
}

func spread(ds []time.Duration) string {
	return ms(slices.Min(ds)) + "-" + ms(slices.Max(ds))
}

func (r *results) exportTable() table {
	t := table{header: []string{"format", "export", "via", "rows", "bytes", "wall s", "min-max s", "rows/s", "MB/s", "TTFB ms",
		"CPU s", "PG CPU s", "client CPU s", "ctx switches", "peak RSS MiB", "RSS growth MiB", "COPY pgx rows/s", "x COPY"}}
	for _, e := range r.exports {
		w := e.wall()
		walls := collect(e.samples, func(s sample) time.Duration { return s.wall })
		row := []string{e.format, e.spec.label, e.via, fmt.Sprint(e.spec.rows), fmt.Sprint(e.bytes()),
			fmt.Sprintf("%.3f", w.Seconds()), fmt.Sprintf("%.3f-%.3f", slices.Min(walls).Seconds(), slices.Max(walls).Seconds()),
			fmt.Sprintf("%.0f", e.rowsPerSec()), fmt.Sprintf("%.1f", float64(e.bytes())/w.Seconds()/1e6), ms(e.ttfb()),
			fmt.Sprintf("%.2f", mean(collect(e.samples, func(s sample) float64 { return s.cpu }))),
			fmt.Sprintf("%.2f", mean(collect(e.samples, func(s sample) float64 { return s.pgCPU }))),
			fmt.Sprintf("%.2f", mean(collect(e.samples, func(s sample) float64 { return s.clientCPU }))),
			"", mibs(e.peakRSS), "", "", ""}
		if e.via == "HTTP" {
			row[13] = fmt.Sprint(e.samples[len(e.samples)-1].switches)
			row[15] = mibs(e.growth())
		} else {
			row[11] = "-"
		}
		if e.via == "CLI file" {
			row[9] = "-"
		}
		if e.copy != nil {
			row[16] = fmt.Sprintf("%.0f", e.copy.rowsPerSec())
			row[17] = fmt.Sprintf("%.2f", e.rowsPerSec()/e.copy.rowsPerSec())
		}
		t.rows = append(t.rows, row)
	}
	for _, c := range r.exportCopies {
		t.rows = append(t.rows, []string{"COPY csv", c.spec.label, "pgx", fmt.Sprint(c.spec.rows), fmt.Sprint(c.bytes),
			fmt.Sprintf("%.3f", c.wall().Seconds()), fmt.Sprintf("%.3f-%.3f", slices.Min(c.walls).Seconds(), slices.Max(c.walls).Seconds()),
			fmt.Sprintf("%.0f", c.rowsPerSec()), fmt.Sprintf("%.1f", float64(c.bytes)/c.wall().Seconds()/1e6), ms(c.ttfb()),
			"-", fmt.Sprintf("%.2f", mean(c.pgCPU)), fmt.Sprintf("%.2f", mean(c.clientCPU)), "", "", "", "", ""})
	}
	return t
}

func (r *results) odataTable() table {
	o := r.odata
	walls, ttfbs := o.depths()
	full := walls[:o.fullDepths()]
	worst := slices.Index(full, slices.Max(full))
	t := table{header: []string{"what", "value"}}
	add := func(k, v string) { t.rows = append(t.rows, []string{k, v}) }
	add("client", "Go, follows @odata.nextLink; decodes nothing: counts entities by their key property, reads the next link from the body's end")
	add("full reads", fmt.Sprintf("%d, each by a fresh informe warmed up with a %d-row page, each followed by a JSON export of the same rows (another informe)", len(o.reads), small))
	add("pages per read", fmt.Sprintf("%d (%d full pages of %d rows)", len(walls), o.fullDepths(), perPage))
	add("rows, bytes per read", fmt.Sprintf("%d rows, %d bytes", o.rows, o.bytes))
	add("whole feed: wall (median of reads), rows/s", fmt.Sprintf("%.2f s (%.2f-%.2f), %.0f rows/s", o.wall().Seconds(),
		slices.Min(o.elapsed).Seconds(), slices.Max(o.elapsed).Seconds(), o.rowsPerSec()))
	add("JSON export: wall (median), rows/s, bytes", fmt.Sprintf("%.2f s, %.0f rows/s, %d bytes", o.json.wall().Seconds(), o.json.rowsPerSec(), o.json.bytes()))
	add("feed over JSON export, rows/s", fmt.Sprintf("%.2fx", o.rowsPerSec()/o.json.rowsPerSec()))
	add("page wall: first, median, worst (depth)", fmt.Sprintf("%s ms, %s ms, %s ms (page %d)", ms(full[0]), ms(median(full)), ms(full[worst]), worst+1))
	add("page TTFB: first, median, worst", fmt.Sprintf("%s ms, %s ms, %s ms", ms(ttfbs[0]), ms(median(ttfbs)), ms(slices.Max(ttfbs))))
	add("peak RSS, growth over the warm-up (the read that grew most)", fmt.Sprintf("%s MiB, %s MiB", mibs(o.peakRSS), mibs(o.growth())))
	var slowest []string
	for i, read := range o.reads {
		w := slices.MaxFunc(read[:o.fullDepths()], func(a, b feedPage) int { return int(a.wall - b.wall) })
		d := slices.IndexFunc(read, func(p feedPage) bool { return p.wall == w.wall })
		slowest = append(slowest, fmt.Sprintf("read %d: page %d %s ms (page 1 %s ms)", i+1, d+1, ms(w.wall), ms(read[0].wall)))
	}
	add("slowest full page of each read", strings.Join(slowest, "; "))
	if len(o.paired) > 0 {
		var parts []string
		worst := 0.0
		for _, p := range o.paired {
			worst = max(worst, p.median())
			parts = append(parts, fmt.Sprintf("%d: %.2fx (%s vs %s ms)", p.depth+1, p.median(), ms(median(p.page)), ms(median(p.first))))
		}
		add("page N over page 1, read right after it (median of 3 pairs)", fmt.Sprintf("worst %.2fx; ", worst)+strings.Join(parts, ", "))
	}
	return t
}

// odataDepths lists the median page time at every tenth depth.
func (r *results) odataDepths() string {
	walls, _ := r.odata.depths()
	var parts []string
	for d := 0; d < len(walls); d += 10 {
		parts = append(parts, fmt.Sprintf("%d: %s", d+1, ms(walls[d])))
	}
	return "median page ms by page number (every tenth): " + strings.Join(parts, ", ")
}

func holdRow(name string, ds []time.Duration) []string {
	if len(ds) == 0 {
		return []string{name, "0", "", "", "", ""}
	}
	return []string{name, fmt.Sprint(len(ds)), ms(slices.Min(ds)), ms(median(ds)), ms(percentile(ds, 90)), ms(slices.Max(ds))}
}

func (r *results) slowTables() (probes, holds, notes table) {
	s := r.slow
	probes = table{header: []string{"10-row JSON pages", "n", "min ms", "median ms", "p99 ms", "max ms"}}
	for _, p := range []struct {
		name string
		ds   []time.Duration
	}{{"informe idle", s.idleProbes}, {fmt.Sprintf("while %d clients read at %d B/s", s.clients, s.rate), s.probes}} {
		probes.rows = append(probes.rows, []string{p.name, fmt.Sprint(len(p.ds)), ms(slices.Min(p.ds)), ms(median(p.ds)), ms(percentile(p.ds, 99)), ms(slices.Max(p.ds))})
	}
	holds = table{header: []string{"connection held (transaction) per 10,000-row CSV page", "n", "min ms", "median ms", "p90 ms", "max ms"}}
	holds.rows = append(holds.rows,
		holdRow("one fast client, one page at a time", s.lone),
		holdRow(fmt.Sprintf("%d fast clients at once", s.clients), s.fast),
		holdRow(fmt.Sprintf("%d clients at %d B/s at once", s.clients, s.rate), s.slow))
	notes = table{header: []string{"what", "value"}}
	add := func(k, v string) { notes.rows = append(notes.rows, []string{k, v}) }
	add("page size", fmt.Sprintf("%d bytes (%.0f s to read at %d B/s)", s.pageBytes, float64(s.pageBytes)/float64(s.rate), s.rate))
	add("throttled client", fmt.Sprintf("reads %d bytes, sleeps %s; own TCP connection, SO_RCVBUF %d", throttleChunk,
		time.Duration(float64(throttleChunk)/float64(s.rate)*float64(time.Second)), slowRcvBuf))
	add("503 before admission (retried after 250 ms)", fmt.Sprintf("fast %d, slow %d", s.fastBusy, s.slowBusy))
	add("until every slow client had its 200", fmt.Sprintf("%.2f s", s.slowAdmitted.Seconds()))
	add("slow clients: bytes read when stopped, bodies finished", fmt.Sprintf("%d bytes, %d of %d", s.slowRead, s.slowFinished, s.clients))
	add("transactions still open when waiting ended", fmt.Sprintf("fast %d, slow %d", s.fastOpen, s.slowOpen))
	add("pg_stat_activity samples", fmt.Sprintf("%d, every %s", s.samples, sampleEvery))
	var keys []string
	for k := range s.metrics {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		add(k, fmt.Sprintf("%g", s.metrics[k]))
	}
	if len(s.clientErrors) > 0 {
		add("client errors", strings.Join(s.clientErrors, "; "))
	}
	if len(s.probeErrors) > 0 {
		add("probe errors", strings.Join(s.probeErrors, "; "))
	}
	return probes, holds, notes
}

func (r *results) burstTable() table {
	b := r.burst
	t := table{header: []string{"what", "value"}}
	add := func(k, v string) { t.rows = append(t.rows, []string{k, v}) }
	add("requests", fmt.Sprintf("%d CSV and %d XLSX pages of %d rows, each on its own connection; round 1 all at once, round 2 the XLSX pages 100 ms before the CSV pages", b.csv, b.xlsx, perPage))
	for i := range b.ok {
		add(fmt.Sprintf("round %d", i+1), fmt.Sprintf("CSV %d complete, %d 503; XLSX %d complete, %d 503; the last response ended after %.2f s",
			b.ok[i]["csv"], b.busy[i]["csv"], b.ok[i]["xlsx"], b.busy[i]["xlsx"], b.wall[i].Seconds()))
	}
	add("informe's peak RSS over both rounds, growth over the warm-ups", fmt.Sprintf("%s MiB, %s MiB", mibs(b.peakRSS), mibs(b.peakRSS-b.baseRSS)))
	add("responses spooled to disk", fmt.Sprintf("%g", b.spilled))
	if len(b.failures) > 0 {
		add("failures", strings.Join(b.failures, "; "))
	}
	return t
}

func (r *results) gzipTable() table {
	g := r.gzip
	t := table{header: []string{"Accept-Encoding", "bytes", "of identity", "wall ms", "min-max ms", "TTFB ms", "CPU s", "x identity wall"}}
	id := wallOf(g.identity)
	for _, c := range []struct {
		name string
		ss   []sample
	}{{"identity", g.identity}, {"gzip", g.gzip}, {"zstd", g.zstd}} {
		w := wallOf(c.ss)
		walls := collect(c.ss, func(s sample) time.Duration { return s.wall })
		t.rows = append(t.rows, []string{c.name, fmt.Sprint(c.ss[0].bytes),
			fmt.Sprintf("%.1f%%", 100*float64(c.ss[0].bytes)/float64(g.identity[0].bytes)),
			ms(w), spread(walls), ms(median(collect(c.ss, func(s sample) time.Duration { return s.ttfb }))),
			fmt.Sprintf("%.3f", mean(collect(c.ss, func(s sample) float64 { return s.cpu }))),
			fmt.Sprintf("%.2f", w.Seconds()/id.Seconds())})
	}
	return t
}

// compareTable is the page cases with the baseline binary (before) and the
// current one (after).
func (r *results) compareTable() table {
	t := table{header: []string{"format", "page", "rows", "before ms", "after ms", "after/before", "before min-max", "after min-max",
		"TTFB before", "TTFB after", "CPU s before", "CPU s after", "RSS growth before MiB", "RSS growth after MiB", "bytes before", "bytes after"}}
	for _, before := range r.baseCases {
		after := r.find(before.format, before.page.label, before.page.perPage)
		if after == nil {
			continue
		}
		t.rows = append(t.rows, []string{before.format, fmt.Sprintf("%d (%s)", before.page.page, before.page.label), fmt.Sprint(before.rows),
			ms(before.wall()), ms(after.wall()), fmt.Sprintf("%.2f", after.wall().Seconds()/before.wall().Seconds()),
			ms(slices.MinFunc(before.samples, byWall).wall) + "-" + ms(slices.MaxFunc(before.samples, byWall).wall),
			ms(slices.MinFunc(after.samples, byWall).wall) + "-" + ms(slices.MaxFunc(after.samples, byWall).wall),
			ms(before.ttfb()), ms(after.ttfb()),
			fmt.Sprintf("%.3f", before.cpu()), fmt.Sprintf("%.3f", after.cpu()),
			mibs(before.growth()), mibs(after.growth()), fmt.Sprint(before.bytes()), fmt.Sprint(after.bytes())})
	}
	return t
}

// section is a titled part of the output.
type section struct {
	title string
	notes []string
	table table
}

func (r *results) sections() []section {
	var ss []section
	if len(r.cases) > 0 {
		ss = append(ss, section{title: "Pages (issue 1)", notes: []string{
			fmt.Sprintf("each case: a fresh informe, one warm-up request of a %d-row page of the same format, then %d measured requests; medians, CPU seconds are means per request", small, r.runs),
			"wall: request sent to last body byte; TTFB: request written to first response byte (loopback); CPU s: informe's utime+stime; PG CPU s: its PostgreSQL backend's",
			"peak RSS: VmHWM after the measured requests; growth: over VmRSS after the warm-up",
			"x psql, x pgx: informe's rows/s over COPY's; informe's requests include its count and seek, COPY only the page",
		}, table: r.caseTable()})
		ss = append(ss, section{title: "COPY baselines of the pages", notes: []string{
			fmt.Sprintf("COPY (the same page query) TO STDOUT WITH CSV; psql includes process start-up and connection (SELECT 1 through psql: %s ms median), pgx runs on an open connection", ms(median(r.psqlStartup))),
		}, table: r.copyTable()})
	}
	if len(r.baseCases) > 0 {
		ss = append(ss, section{title: "Pages before and after (issue 7)", notes: []string{
			fmt.Sprintf("before: %s; after: the current informe (%s); each case measured with both in this run: both started and warmed up, then their requests alternating", r.baselineLabel, r.binary),
		}, table: r.compareTable()})
	}
	if len(r.exports) > 0 {
		ss = append(ss, section{title: "Whole exports (issue 8)", notes: []string{
			"HTTP: GET /api/general-report/export, each row a fresh informe warmed up with the small client's export of the same format; RSS growth over VmRSS after that warm-up",
			fmt.Sprintf("the whole report: COPY, csv, ndjson, json over HTTP and informe export (to a file, synced and renamed; and to stdout, read by the benchmark) interleaved, %d rounds; XLSX %d run(s) after; medians", r.o.exportRuns, r.o.xlsxRuns),
			"informe export's peak RSS is its own (getrusage), its CPU s its own; TTFB of COPY is to the first CopyData; client CPU s: the benchmark's own while it read (the CLI's stdout is read through a pipe)",
			"COPY: COPY (the query report.Store.Export runs, arguments written in) TO STDOUT WITH CSV, through pgx on an open connection",
			fmt.Sprintf("the seed has no big client (its largest has about 120 rows): the benchmark gives client %d every %dth contract; the small client is the one nearest %d rows", bigClient, bigClientEvery, small),
		}, table: r.exportTable()})
	}
	if r.odata != nil {
		ss = append(ss, section{title: "OData feed (issue 9)", notes: []string{r.odataDepths()}, table: r.odataTable()})
	}
	if r.slow != nil {
		probes, holds, notes := r.slowTables()
		common := "one fresh informe for the whole part, default limits; connection hold: a transaction of an informe backend (pg_stat_activity, application_name informe) from xact_start until it goes idle, sampled every " + sampleEvery.String()
		ss = append(ss,
			section{title: "Slow clients (issue 10): small pages meanwhile", notes: []string{common}, table: probes},
			section{title: "Slow clients (issue 10): how long a page holds a connection", notes: []string{
				"fast and throttled clients read the same pages spread over the report, all started at once, retrying after 503",
			}, table: holds},
			section{title: "Slow clients (issue 10): details", table: notes})
	}
	if r.burst != nil {
		ss = append(ss, section{title: "Burst (issue 10)", notes: []string{"one fresh informe, default limits, warmed up with a small CSV and a small XLSX page"}, table: r.burstTable()})
	}
	if r.gzip != nil {
		ss = append(ss, section{title: "Compression (issue 10)", notes: []string{
			fmt.Sprintf("page 1, %d CSV rows, one fresh informe, codings alternating, %d runs each after one warm-up round; loopback", perPage, r.runs),
		}, table: r.gzipTable()})
	}
	return ss
}

func (r *results) partTimes() string {
	var parts []string
	for _, p := range r.took {
		parts = append(parts, fmt.Sprintf("%s %.0f s (load after: %s)", p.part, p.took.Seconds(), p.load))
	}
	return "parts: " + strings.Join(parts, "; ")
}
