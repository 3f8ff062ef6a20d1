package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture informe runs on.
const clockTicks = 100

// informe is a running `informe serve` child process.
type informe struct {
	cmd    *exec.Cmd
	base   string
	ops    string // base URL of the operations listener, "" when off
	token  string
	client *http.Client
	log    *os.File // this process's own log
	shared string   // the run's log, where the own log is appended at stop
	exited chan struct{}
	once   sync.Once
}

// launcher starts `informe serve` processes of one binary.
type launcher struct {
	bin     string // the informe binary
	label   string // what the binary is, for tables ("current", "baseline")
	dbURL   string
	token   string
	logPath string   // every process's log is appended here when it stops
	logDir  string   // where each process logs while it runs
	args    []string // extra flags for informe serve (--serve-arg)
}

// startOptions vary one process.
type startOptions struct {
	ops  bool     // listen for /metrics on a loopback port
	args []string // flags after the launcher's
}

// start starts `informe serve` on a free loopback port, its JSON log
// appended to the launcher's log, and waits until it answers an
// authenticated request.
func (l *launcher) start(ctx context.Context, so startOptions) (*informe, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	opsAddr := ""
	if so.ops {
		opsPort, err := freePort()
		if err != nil {
			return nil, err
		}
		opsAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(opsPort))
	}
	// Processes may run at once: each logs to a file of its own, so
	// that its lines can be read apart.
	log, err := os.CreateTemp(l.logDir, "informe-*.log")
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := []string{"serve", "--addr", addr, "--ops-addr", opsAddr, "--log-format", "json"}
	args = append(append(args, l.args...), so.args...)
	cmd := exec.Command(l.bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+l.dbURL)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start informe: %w", err)
	}
	inf := &informe{
		cmd: cmd, base: "http://" + addr, token: l.token, log: log, shared: l.logPath,
		exited: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{
			DisableCompression:  true,
			MaxIdleConnsPerHost: 1,
		}},
	}
	if opsAddr != "" {
		inf.ops = "http://" + opsAddr
	}
	go func() {
		_ = cmd.Wait()
		close(inf.exited)
	}()
	if err := inf.waitReady(ctx); err != nil {
		inf.stop()
		return nil, err
	}
	return inf, nil
}

func (inf *informe) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := inf.request(ctx, "/users")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /users: %s", resp.Status)
		}
		select {
		case <-inf.exited:
			return fmt.Errorf("informe exited: %v; see %s", inf.cmd.ProcessState, inf.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("informe not ready after 30s: %w", err)
		}
	}
}

// stop sends SIGTERM and waits for the process to exit, killing it after
// 30 seconds. Calls after the first do nothing.
func (inf *informe) stop() {
	inf.once.Do(func() {
		inf.client.CloseIdleConnections()
		_ = inf.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-inf.exited:
		case <-time.After(30 * time.Second):
			_ = inf.cmd.Process.Kill()
			<-inf.exited
		}
		inf.log.Close()
		if err := appendFile(inf.shared, inf.log.Name()); err != nil {
			logf("informe's log: %v", err)
		}
	})
}

func (inf *informe) request(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, inf.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+inf.token)
	return inf.client.Do(req)
}

// stallLimit is how long a request may go without a response byte before
// the benchmark gives up on it, rather than wait forever on a hung server;
// an XLSX response may rightly wait long for its first byte.
func stallLimit(url string) time.Duration {
	if strings.Contains(url, "format=xlsx") {
		return 5 * time.Minute
	}
	return 30 * time.Second
}

// sample is one measured request.
type sample struct {
	wall   time.Duration // from sending the request to the last body byte
	ttfb   time.Duration // from the request written to the first response byte
	bytes  int64
	status int
	header http.Header
	cpu    float64 // informe's user+system CPU seconds during the request
	pgCPU  float64 // the same for informe's PostgreSQL backends
	// switches is informe's context switches (all threads, voluntary and
	// not) during the request.
	switches int64
	// clientCPU is the benchmark's own CPU seconds during the request:
	// mostly reading the body.
	clientCPU float64
}

// fetch requests url (absolute, or a path on informe) with hdr, copies the
// body to sink (discarded when nil) and times it. A response other than
// 200 is read whole and is no error: the caller judges s.status. It fails
// when nothing arrives for stallLimit.
func (inf *informe) fetch(ctx context.Context, url string, hdr http.Header, sink io.Writer) (sample, error) {
	return fetch(ctx, inf.client, inf.absolute(url), inf.token, hdr, sink)
}

func (inf *informe) absolute(url string) string {
	if strings.HasPrefix(url, "/") {
		return inf.base + url
	}
	return url
}

func fetch(ctx context.Context, client *http.Client, url, token string, hdr http.Header, sink io.Writer) (sample, error) {
	var s sample
	ctx, watch := watchdog(ctx, stallLimit(url))
	defer watch.stop()
	var wrote, first time.Time
	trace := &httptrace.ClientTrace{
		WroteRequest:         func(httptrace.WroteRequestInfo) { wrote = time.Now() },
		GotFirstResponseByte: func() { first = time.Now() },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, url, nil)
	if err != nil {
		return s, err
	}
	maps.Copy(req.Header, hdr)
	req.Header.Set("Authorization", "Bearer "+token)
	if sink == nil {
		sink = io.Discard
	}
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return s, watch.explain(fmt.Errorf("GET %s: %w", url, err))
	}
	s.bytes, err = io.Copy(sink, watch.reader(resp.Body))
	s.wall = time.Since(began)
	resp.Body.Close()
	s.status, s.header = resp.StatusCode, resp.Header
	if err != nil {
		return s, watch.explain(fmt.Errorf("GET %s: read body after %d bytes: %w", url, s.bytes, err))
	}
	s.ttfb = first.Sub(wrote)
	return s, nil
}

// measure makes one request for path, which must answer 200, reads the
// whole body, and notes the CPU time informe and its backends spent.
func (inf *informe) measure(ctx context.Context, path string, hdr http.Header, pg *backends) (sample, error) {
	pg0, err := pg.ticks(ctx)
	if err != nil {
		return sample{}, err
	}
	cpu0, err := procTicks(inf.cmd.Process.Pid)
	if err != nil {
		return sample{}, err
	}
	sw0 := procSwitches(inf.cmd.Process.Pid)
	self0 := selfCPU()
	s, err := inf.fetch(ctx, path, hdr, nil)
	s.clientCPU = selfCPU() - self0
	if err != nil {
		return s, err
	}
	if s.status != http.StatusOK {
		return s, fmt.Errorf("GET %s: %d %s", path, s.status, http.StatusText(s.status))
	}
	cpu1, err := procTicks(inf.cmd.Process.Pid)
	if err != nil {
		return s, err
	}
	pg1, err := pg.ticks(ctx)
	if err != nil {
		return s, err
	}
	s.cpu = float64(cpu1-cpu0) / clockTicks
	s.switches = procSwitches(inf.cmd.Process.Pid) - sw0
	for pid, t := range pg1 {
		s.pgCPU += float64(t-pg0[pid]) / clockTicks
	}
	return s, nil
}

// watch cancels a request that makes no progress for a while.
type watch struct {
	cancel context.CancelCauseFunc
	last   atomic.Int64 // unix nanoseconds of the last progress
	limit  time.Duration
	done   chan struct{}
	fired  atomic.Bool
}

var errStalled = errors.New("no progress")

func watchdog(ctx context.Context, limit time.Duration) (context.Context, *watch) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watch{cancel: cancel, limit: limit, done: make(chan struct{})}
	w.last.Store(time.Now().UnixNano())
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case now := <-t.C:
				if now.Sub(time.Unix(0, w.last.Load())) > w.limit {
					w.fired.Store(true)
					cancel(errStalled)
					return
				}
			}
		}
	}()
	return ctx, w
}

func (w *watch) stop() {
	close(w.done)
	w.cancel(nil)
}

// explain says so when err is the watchdog's doing.
func (w *watch) explain(err error) error {
	if w.fired.Load() {
		return fmt.Errorf("%w: informe sent nothing for %s (hung?)", err, w.limit)
	}
	return err
}

func (w *watch) reader(r io.Reader) io.Reader { return &progressReader{r: r, w: w} }

type progressReader struct {
	r io.Reader
	w *watch
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.w.last.Store(time.Now().UnixNano())
	}
	return n, err
}

// caseResult is what one fresh informe process measured for one format
// and page.
type caseResult struct {
	format  string
	page    pageSpec
	binary  string // the launcher's label
	samples []sample
	rows    int64 // rows per request, from informe's log
	baseRSS int64 // VmRSS after the warm-up request, bytes
	baseHWM int64 // VmHWM after the warm-up request, bytes
	peakRSS int64 // VmHWM after the measured requests, bytes
	copy    *copyResult
}

// pageCase is a fresh informe measuring one format and page.
type pageCase struct {
	inf  *informe
	pg   *backends
	path string
	r    *caseResult
}

// startPageCase starts a fresh informe and warms it up with a small page of
// the same format.
func startPageCase(ctx context.Context, l *launcher, pool *pgxpool.Pool, db, format string, p pageSpec) (*pageCase, error) {
	inf, err := l.start(ctx, startOptions{})
	if err != nil {
		return nil, err
	}
	c := &pageCase{inf: inf, pg: &backends{pool: pool, db: db}, r: &caseResult{format: format, page: p, binary: l.label},
		path: fmt.Sprintf("/api/general-report?format=%s&result_per_page=%d&page=%d", format, p.perPage, p.page)}
	if _, err := inf.measure(ctx, fmt.Sprintf("/api/general-report?format=%s&result_per_page=%d&page=1", format, small), nil, c.pg); err != nil {
		inf.stop()
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	if c.r.baseRSS, c.r.baseHWM, err = procMemory(inf.cmd.Process.Pid); err != nil {
		inf.stop()
		return nil, err
	}
	return c, nil
}

// step requests the page once.
func (c *pageCase) step(ctx context.Context) error {
	s, err := c.inf.measure(ctx, c.path, nil, c.pg)
	if err != nil {
		return err
	}
	c.r.samples = append(c.r.samples, s)
	return nil
}

// finish notes the peak RSS, stops informe and checks from its log that
// every request streamed the page's rows.
func (c *pageCase) finish() (*caseResult, error) {
	var err error
	if _, c.r.peakRSS, err = procMemory(c.inf.cmd.Process.Pid); err != nil {
		c.inf.stop()
		return nil, err
	}
	c.inf.stop() // so that every log line is written
	rows, err := c.inf.loggedRows("/api/general-report")
	if err != nil {
		return nil, err
	}
	// The first logged report request is the warm-up.
	if len(rows) != len(c.r.samples)+1 {
		return nil, fmt.Errorf("informe logged %d report requests, want %d", len(rows), len(c.r.samples)+1)
	}
	for _, n := range rows[1:] {
		if n != c.r.page.rows {
			return nil, fmt.Errorf("informe streamed %d rows, want %d", n, c.r.page.rows)
		}
	}
	c.r.rows = c.r.page.rows
	return c.r, nil
}

// measureInforme measures one format and page with a fresh informe of each
// launcher, all started and warmed up first, then their requests
// alternating (the first launcher first on even rounds), runs each, so
// that load that comes and goes weighs on all alike.
func measureInforme(ctx context.Context, ls []*launcher, pool *pgxpool.Pool, db, format string, p pageSpec, runs int) ([]*caseResult, error) {
	var cases []*pageCase
	defer func() {
		for _, c := range cases {
			c.inf.stop()
		}
	}()
	for _, l := range ls {
		c, err := startPageCase(ctx, l, pool, db, format, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.label, err)
		}
		cases = append(cases, c)
	}
	for i := range runs {
		for j := range cases {
			c := cases[j]
			if i%2 == 1 {
				c = cases[len(cases)-1-j]
			}
			if err := c.step(ctx); err != nil {
				return nil, fmt.Errorf("%s: %w", c.r.binary, err)
			}
		}
	}
	var rs []*caseResult
	for _, c := range cases {
		r, err := c.finish()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.r.binary, err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// logLine is one request line of informe's JSON log.
type logLine struct {
	Msg      string `json:"msg"`
	Path     string `json:"path"`
	Query    string `json:"query"`
	Status   int    `json:"status"`
	Rows     int64  `json:"rows"`
	Bytes    int64  `json:"bytes"`
	Duration int64  `json:"duration"` // nanoseconds
	Aborted  bool   `json:"aborted"`
}

// logged returns the request lines for path in this process's log, in
// order.
func (inf *informe) logged(path string) ([]logLine, error) {
	f, err := os.Open(inf.log.Name())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []logLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line logLine
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != "request" || line.Path != path {
			continue
		}
		lines = append(lines, line)
	}
	return lines, sc.Err()
}

// loggedRows returns the rows of each request for path in this process's
// log lines, in order, and fails on any that did not end with 200.
func (inf *informe) loggedRows(path string) ([]int64, error) {
	lines, err := inf.logged(path)
	if err != nil {
		return nil, err
	}
	var rows []int64
	for _, l := range lines {
		if l.Status != http.StatusOK || l.Aborted {
			return nil, fmt.Errorf("informe logged a failed request: %s?%s: status %d, aborted %v", l.Path, l.Query, l.Status, l.Aborted)
		}
		rows = append(rows, l.Rows)
	}
	return rows, nil
}

// appendFile appends the file src to the file dst.
func appendFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// procTicks returns a process's user plus system CPU time, in clock ticks.
func procTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces; fields count from
	// after it: state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return utime + stime, nil
}

// selfCPU returns the benchmark's own user and system CPU seconds so far.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// procSwitches returns the context switches of a process's threads so far
// (threads that ended no longer count; informe's do not end).
func procSwitches(pid int) int64 {
	dirs, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	var n int64
	for _, d := range dirs {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + d.Name() + "/status")
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			key, val, _ := strings.Cut(line, ":")
			if key == "voluntary_ctxt_switches" || key == "nonvoluntary_ctxt_switches" {
				v, _ := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
				n += v
			}
		}
	}
	return n
}

// procMemory returns a process's resident set size and its peak (VmRSS and
// VmHWM), in bytes.
func procMemory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.Lines(string(b)) {
		key, val, ok := strings.Cut(line, ":")
		if !ok || key != "VmRSS" && key != "VmHWM" {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/status: %s: %w", pid, key, err)
		}
		if key == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status: no VmRSS or VmHWM", pid)
	}
	return rss, hwm, nil
}

// backends reads the CPU time of informe's PostgreSQL backends: those of
// the benchmark's database with application_name informe (the benchmark's
// own pool calls itself informe-bench).
type backends struct {
	pool *pgxpool.Pool
	db   string
}

func (b *backends) ticks(ctx context.Context) (map[int]int64, error) {
	rows, err := b.pool.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'informe'", b.db)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ticks := map[int]int64{}
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return nil, err
		}
		// A backend may end between the query and the read.
		if t, err := procTicks(pid); err == nil {
			ticks[pid] = t
		}
	}
	return ticks, rows.Err()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// profiler is perf recording processes while a case runs, for --perf.
type profiler struct {
	cmd  *exec.Cmd
	data string
	out  string
}

// startPerf records the call graphs of pids with perf until stop, which
// writes perf's report, by symbol, to name.txt in dir. It returns nil when
// dir is "" (no --perf).
func startPerf(dir, name string, pids ...int) (*profiler, error) {
	if dir == "" {
		return nil, nil
	}
	var list []string
	for _, p := range pids {
		list = append(list, strconv.Itoa(p))
	}
	p := &profiler{data: filepath.Join(dir, name+".data"), out: filepath.Join(dir, name+".txt")}
	p.cmd = exec.Command("perf", "record", "-q", "-F", "499", "-g", "-o", p.data, "-p", strings.Join(list, ","))
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf: %w", err)
	}
	time.Sleep(200 * time.Millisecond) // let it attach
	return p, nil
}

func (p *profiler) stop() error {
	if p == nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	_ = p.cmd.Wait()
	f, err := os.Create(p.out)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, sort := range []string{"comm,dso", "comm,symbol"} {
		rep := exec.Command("perf", "report", "-i", p.data, "--stdio", "--no-children", "--sort", sort, "--percent-limit", "0.7", "-g", "none")
		rep.Stdout, rep.Stderr = f, os.Stderr
		if err := rep.Run(); err != nil {
			return fmt.Errorf("perf report: %w", err)
		}
	}
	logf("  perf profile: %s", p.out)
	return os.Remove(p.data)
}
