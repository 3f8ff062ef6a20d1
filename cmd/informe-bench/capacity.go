package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/informe/informe/internal/postgres"
)

// The capacity model: what one row costs in CPU on each side, per format,
// and what one instance sustains from it, next to what it did sustain with
// several exports and pages at once; the connections it used, and the
// spool disk a slow client takes.

// capacityFormats are the formats costed; one that this build does not
// serve (a 400 for its format) is noted and left out.
var capacityFormats = []string{"csv", "ndjson", "json", "xlsx", "parquet", "arrow"}

const slowExportRate = 4096 // bytes per second a slow client of a whole export reads

// cost is one format's whole exports, alone.
type cost struct {
	format string
	ss     samples
	rows   int64
}

func (c cost) informeUS() float64 { return 1e6 * c.ss.cpu() / float64(c.rows) }
func (c cost) pgUS() float64      { return 1e6 * c.ss.pgCPU() / float64(c.rows) }

// perCore is the rows a second one core turns out, both sides counted.
func (c cost) perCore() float64 { return 1e6 / (c.informeUS() + c.pgUS()) }
func (c cost) rowsPerSecond() float64 {
	return float64(c.rows) / c.ss.wall().Seconds()
}

// loaded is what a load (requests at once) took and used.
type loaded struct {
	wall         time.Duration
	latencies    []time.Duration
	rows         int64
	busy         int // 503s, each asked again
	cpu, pgCPU   float64
	machine      float64 // CPU seconds of the whole machine
	conns, activ int     // most informe backends seen, and most not idle
}

func (l loaded) rowsPerSecond() float64 { return float64(l.rows) / l.wall.Seconds() }

// others is the machine's CPU seconds not spent by informe or its backends.
func (l loaded) others() float64 { return max(l.machine-l.cpu-l.pgCPU, 0) }

// load runs one client per path at once, each asking for its path rounds
// times (again after a 503), each answer rows rows, and measures the CPU
// of informe, of its backends and of the machine, and informe's backends.
func (inf *informe) load(ctx context.Context, paths []string, rounds int, rows int64) (loaded, error) {
	var l loaded
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for t := time.NewTicker(20 * time.Millisecond); ctx.Err() == nil; <-t.C {
			if n, active, err := postgres.InformeBackends(ctx, inf.pool, inf.db); err == nil {
				l.conns, l.activ = max(l.conns, n), max(l.activ, active)
			}
		}
	})
	pg0, err := inf.backendsCPU(ctx)
	if err != nil {
		return l, err
	}
	cpu0, machine0 := procCPU(inf.cmd.Process.Pid), machineCPU()
	var mu sync.Mutex
	var errs []error
	var clients sync.WaitGroup
	began := time.Now()
	for _, p := range paths {
		clients.Go(func() {
			for range rounds {
				for {
					s, err := inf.fetch(ctx, p, nil, nil)
					mu.Lock()
					switch {
					case err == nil && s.status == http.StatusServiceUnavailable:
						l.busy++
					case err == nil && s.status == http.StatusOK:
						l.latencies, l.rows = append(l.latencies, s.wall), l.rows+rows
					case err == nil:
						err = fmt.Errorf("GET %s: status %d", p, s.status)
					}
					if err != nil {
						errs = append(errs, err)
					}
					mu.Unlock()
					if err != nil || s.status == http.StatusOK {
						break
					}
					time.Sleep(250 * time.Millisecond)
				}
			}
		})
	}
	clients.Wait()
	l.wall = time.Since(began)
	l.cpu, l.machine = procCPU(inf.cmd.Process.Pid)-cpu0, machineCPU()-machine0
	pg1, err := inf.backendsCPU(ctx)
	for pid, t := range pg1 {
		l.pgCPU += t - pg0[pid]
	}
	cancel()
	sampler.Wait()
	return l, errors.Join(append(errs, err)...)
}

// machineCPU returns the CPU seconds all processes of the machine spent so
// far, from /proc/stat (user, nice, system, irq, softirq and steal ticks).
func machineCPU() float64 {
	b, err := os.ReadFile("/proc/stat")
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if err != nil || len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks float64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseFloat(v, 64)
		ticks += n
	}
	return ticks / 100 // USER_HZ, 100 on Linux
}

// capacity measures the capacity model and writes its figures to
// OUT/capacity.env for scripts/scale-check --throughput.
func (b *bench) capacity(ctx context.Context) error {
	set, err := b.exports(ctx)
	if err != nil {
		return err
	}
	cores := float64(runtime.NumCPU())
	logf("capacity: fresh informe; whole exports in each format, %d rounds", b.o.exportRuns)
	inf, err := b.session(ctx, b.current, "capacity", pagePath("json", 1, small), "", 0)
	if err != nil {
		return err
	}
	defer inf.stop()

	costs, absent, err := b.costs(ctx, inf, set)
	if err != nil {
		return err
	}
	csv, json := costs[0], costs[0]
	for _, c := range costs {
		if c.format == "json" {
			json = c
		}
	}
	model := table{title: "Capacity: CPU per exported row", header: []string{"format", "informe µs/row", "PostgreSQL µs/row", "both µs/row",
		"rows/s per core", "one export rows/s", "one export s", "bytes/row", fmt.Sprintf("one instance, %.0f cores, rows/s", cores)},
		notes: []string{
			fmt.Sprintf("the whole report (%d rows) exported over HTTP, %d times per format, one at a time, by one fresh informe with its default flags%s; means of CPU, medians of wall time", set.all.rows, b.o.exportRuns, serveArgsNote(b.o.serveArgs)),
			"informe µs/row: informe's process CPU (/proc schedstat, every thread); PostgreSQL µs/row: its backends' (application_name informe) CPU; rows/s per core: 1 s over both; one instance: the cores times that, both sides sharing them",
		}}
	if len(absent) > 0 {
		model.notes = append(model.notes, "not served by this build (400): "+strings.Join(absent, ", "))
	}
	for _, c := range costs {
		model.add(c.format, fmt.Sprintf("%.2f", c.informeUS()), fmt.Sprintf("%.2f", c.pgUS()), fmt.Sprintf("%.2f", c.informeUS()+c.pgUS()),
			fmt.Sprintf("%.0f", c.perCore()), fmt.Sprintf("%.0f", c.rowsPerSecond()), fmt.Sprintf("%.2f", c.ss.wall().Seconds()),
			fmt.Sprintf("%.0f", float64(c.ss.bytes())/float64(c.rows)), fmt.Sprintf("%.0f", cores*c.perCore()))
	}

	model.notes = append(model.notes, fmt.Sprintf("so one instance with %.0f cores to itself and its backends sustains, CPU-bound, about %.0f CSV rows/s (a %d-row export every %.1f s) or %.1f %d-row JSON pages a second",
		cores, cores*csv.perCore(), set.all.rows, float64(set.all.rows)/(cores*csv.perCore()), cores*json.perCore()/perPage, perPage))

	logf("capacity: 1, 2 and 4 whole CSV exports at once")
	exports := table{title: "Capacity: whole CSV exports at once", header: loadHeader("exports"),
		notes: []string{
			fmt.Sprintf("k clients each ask for the whole CSV export %d times, all at once, from the same informe; rows/s: all rows over the wall time", b.o.exportRuns),
			fmt.Sprintf("predicted: the lesser of k times one export alone (%.0f rows/s) and %.0f cores times CSV's rows/s per core (%.0f)", csv.rowsPerSecond(), cores, csv.perCore()),
			"others' CPU: the machine's (/proc/stat) less informe's and its backends': other work on the machine, the benchmark's own client and sampling included; predicted on the cores left: the same with the cores less those others kept busy meanwhile",
		}}
	for _, k := range []int{1, 2, 4} {
		paths := slices.Repeat([]string{set.all.path("csv")}, k)
		l, err := inf.load(ctx, paths, b.o.exportRuns, set.all.rows)
		if err != nil {
			return fmt.Errorf("%d exports at once: %w", k, err)
		}
		addLoad(&exports, k, l, float64(k)*csv.rowsPerSecond(), csv.perCore(), cores)
	}

	logf("capacity: 1, 4 and 16 clients of %d-row JSON pages", perPage)
	pages := table{title: fmt.Sprintf("Capacity: clients of %d-row JSON pages", perPage), header: loadHeader("clients"),
		notes: []string{
			fmt.Sprintf("n clients each ask for %d pages of %d rows in JSON (spread over the report), at once, from the same informe; latency: request to last byte, p50 and p95 of every page", b.o.runs, perPage),
			fmt.Sprintf("predicted: the lesser of n times one client's rows/s and %.0f cores times JSON's rows/s per core from the whole export (%.0f)", cores, json.perCore()),
		}}
	var one float64
	for _, n := range []int{1, 4, 16} {
		l, err := inf.load(ctx, b.spread("json", n), b.o.runs, perPage)
		if err != nil {
			return fmt.Errorf("%d page clients: %w", n, err)
		}
		if n == 1 {
			one = l.rowsPerSecond()
		}
		addLoad(&pages, n, l, float64(n)*one, json.perCore(), cores)
	}
	poolMax := metricValues(ctx, inf, "informe_db_pool_max_connections")["informe_db_pool_max_connections"]
	pages.notes = append(pages.notes, fmt.Sprintf("connections: the pool's size is %.0f (informe_db_pool_max_connections); --max-exports (default 4) bounds the big responses produced at once, pages over 1,000 rows among them, the rest wait their turn", poolMax))
	inf.stop()
	if err := checkLogged(inf, set, perPage); err != nil {
		return err
	}

	spool, err := b.slowExports(ctx, set, csv)
	if err != nil {
		return err
	}
	b.res.tables = append(b.res.tables, model, exports, pages, spool)
	return b.writeModel(csv, cores)
}

// costs exports the whole report b.o.exportRuns times in each of
// capacityFormats from inf, one at a time, and returns what each took
// (CSV's first), and the formats this build does not serve.
func (b *bench) costs(ctx context.Context, inf *informe, set *exportSet) (costs []cost, absent []string, err error) {
	for _, f := range capacityFormats {
		s, err := inf.fetch(ctx, set.warm.path(f), nil, nil)
		if err == nil && s.status == http.StatusBadRequest && f != "csv" {
			absent = append(absent, f)
			continue
		}
		if err == nil && s.status != http.StatusOK {
			err = fmt.Errorf("warm-up %s: status %d", f, s.status)
		}
		if err != nil {
			return nil, nil, err
		}
		c := cost{format: f, rows: set.all.rows}
		for range b.o.exportRuns {
			s, err := inf.measure(ctx, set.all.path(f), nil)
			if err != nil {
				return nil, nil, err
			}
			c.ss = append(c.ss, s)
		}
		costs = append(costs, c)
	}
	return costs, absent, nil
}

func serveArgsNote(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return " and " + strings.Join(args, " ")
}

func loadHeader(what string) []string {
	return []string{what, "responses", "wall s", "rows/s", "predicted rows/s", "x predicted", "predicted on the cores left", "x that", "p50 ms", "p95 ms",
		"informe CPU s", "PG CPU s", "others' CPU s", "machine busy", "backends (max, active)", "503s"}
}

// addLoad adds a load's row: demand is what the clients would take alone,
// perCore the model's rows/s per core.
func addLoad(t *table, n int, l loaded, demand, perCore, cores float64) {
	predicted := min(demand, cores*perCore)
	left := min(demand, (cores-l.others()/l.wall.Seconds())*perCore) // the cores other work left
	t.add(n, len(l.latencies), fmt.Sprintf("%.2f", l.wall.Seconds()), fmt.Sprintf("%.0f", l.rowsPerSecond()), fmt.Sprintf("%.0f", predicted),
		fmt.Sprintf("%.2f", l.rowsPerSecond()/predicted), fmt.Sprintf("%.0f", left), fmt.Sprintf("%.2f", l.rowsPerSecond()/left), ms(median(l.latencies)), ms(percentile(l.latencies, 95)),
		fmt.Sprintf("%.2f", l.cpu), fmt.Sprintf("%.2f", l.pgCPU), fmt.Sprintf("%.2f", l.others()),
		fmt.Sprintf("%.0f%%", 100*l.machine/(cores*l.wall.Seconds())), fmt.Sprintf("%d, %d", l.conns, l.activ), l.busy)
}

// checkLogged checks from the stopped informe's log that every export and
// page it answered 200 streamed its rows whole.
func checkLogged(inf *informe, set *exportSet, pageRows int64) error {
	for path, want := range map[string][]int64{
		"/api/general-report/export": {set.all.rows, set.warm.rows},
		"/api/general-report":        {pageRows, small},
	} {
		lines, err := inf.logged(path)
		if err != nil {
			return err
		}
		for _, l := range lines {
			if l.Status == http.StatusOK && (l.Aborted || !slices.Contains(want, l.Rows)) {
				return fmt.Errorf("capacity: informe logged %s with %d rows, aborted %v; want one of %v", path, l.Rows, l.Aborted, want)
			}
		}
	}
	return nil
}

// slowExports has 1 and then 2 clients read the whole CSV export at
// slowExportRate, each time from a fresh informe, and notes the spool disk
// they take once their database sides are done.
func (b *bench) slowExports(ctx context.Context, set *exportSet, csv cost) (table, error) {
	t := table{title: "Capacity: spool disk per slow client", header: []string{"slow clients", "database side done s",
		"peak informe_spool_disk_bytes MiB", "peak per client, x export bytes", "then MiB", "then per client, x export bytes", "producer waits s", "backends while they read"},
		notes: []string{
			fmt.Sprintf("clients read the whole CSV export (%s MiB) at %d B/s (512-byte reads, 8 KiB receive buffer), from a fresh informe with its default spool bounds; informe_spool_disk_bytes polled on the operations listener every 100 ms",
				mibs(csv.ss.bytes()), slowExportRate),
			"database side done: from the requests until no informe backend is active and the spool files stopped changing for a second; then: informe_spool_disk_bytes at that moment; then the clients are cut",
			"an export read in parts spools each later part in a file of its own and copies it into the body's spool once the parts before it are done: until the copy ends, those bytes are on disk twice, hence a peak above the body's size",
		}}
	for _, n := range []int{1, 2} {
		logf("capacity: %d slow client(s) of the whole CSV export", n)
		inf, err := b.session(ctx, b.current, "slow export", set.warm.path("csv"), "", 0)
		if err != nil {
			return t, err
		}
		slowCtx, stopSlow := context.WithCancel(ctx)
		var wg sync.WaitGroup
		began := time.Now()
		cs := clients(slowCtx, inf, client{rate: slowExportRate}, slices.Repeat([]string{set.all.path("csv")}, n), &wg)
		var peak, last float64
		steady := time.Now()
		limit := time.Now().Add(max(10*time.Duration(n)*csv.ss.wall(), time.Minute))
		for time.Now().Before(limit) && ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			disk := metricValues(ctx, inf, "informe_spool_disk_bytes")["informe_spool_disk_bytes"]
			if disk != last {
				steady, last = time.Now(), disk
			}
			peak = max(peak, disk)
			active, _ := postgres.InformeWorking(ctx, b.pool, inf.db)
			if disk > 0 && active == 0 && time.Since(steady) > time.Second {
				break
			}
		}
		done := steady.Sub(began)
		m := metricValues(ctx, inf, "informe_spool_producer_wait_seconds_total")
		conns, _ := postgres.InformeNotIdle(ctx, b.pool, inf.db)
		stopSlow()
		wg.Wait()
		inf.stop()
		for _, c := range cs {
			if c.status != http.StatusOK {
				return t, fmt.Errorf("slow export: status %d, %v", c.status, c.err)
			}
		}
		if !time.Now().Before(limit) {
			t.notes = append(t.notes, fmt.Sprintf("%d client(s): the database side had not finished after %.0f s", n, time.Since(began).Seconds()))
		}
		body := float64(n) * float64(csv.ss.bytes())
		t.add(n, fmt.Sprintf("%.2f", done.Seconds()), mibs(int64(peak)), fmt.Sprintf("%.2f", peak/body), mibs(int64(last)), fmt.Sprintf("%.2f", last/body),
			fmt.Sprintf("%.2f", m["informe_spool_producer_wait_seconds_total"]), conns)
	}
	return t, nil
}

// writeModel writes the model's CSV figures to OUT/capacity.env, one
// name=value a line, for scripts/scale-check --throughput --model.
func (b *bench) writeModel(csv cost, cores float64) error {
	lines := []string{
		fmt.Sprintf("# informe capacity model, %s, %d report rows, load %s", time.Now().UTC().Format("2006-01-02 15:04 UTC"), b.total, loadAverage()),
		fmt.Sprintf("cores=%.0f", cores),
		fmt.Sprintf("rows=%d", b.total),
		fmt.Sprintf("csv_informe_us_per_row=%.3f", csv.informeUS()),
		fmt.Sprintf("csv_pg_us_per_row=%.3f", csv.pgUS()),
		fmt.Sprintf("csv_rows_per_core_s=%.0f", csv.perCore()),
		fmt.Sprintf("csv_one_export_rows_s=%.0f", csv.rowsPerSecond()),
	}
	return os.WriteFile(filepath.Join(b.o.out, "capacity.env"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
