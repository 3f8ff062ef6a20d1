package main

import (
	"bufio"
	"cmp"
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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/postgres"
)

// launcher starts `informe serve` processes of one binary.
type launcher struct {
	bin, label   string // label: "current" or "baseline REV"
	dbURL, token string
	logDir       string        // each process logs to a file of its own here
	args         []string      // --serve-arg flags
	pool         *pgxpool.Pool // the benchmark's, to find informe's backends
	db           string
}

// informe is a running `informe serve` child process; as a session (a
// case) it asks for path, which streams rows, again and again.
type informe struct {
	*launcher
	cmd          *exec.Cmd
	cancel       func() // SIGTERM, then SIGKILL after 30 s
	base, ops    string // http://127.0.0.1:port of the API and of /metrics
	client       *http.Client
	log          string
	warmRSS      int64 // VmRSS after the warm-up request
	label, path  string
	rows         int64
	ss           samples
	growth, peak int64 // VmHWM at the end over VmRSS after the warm-up, and VmHWM
}

// start starts `informe serve` with extra flags and waits until it answers.
func (l *launcher) start(ctx context.Context, extra ...string) (*informe, error) {
	addr, ops := freeAddr(), freeAddr()
	log, err := os.CreateTemp(l.logDir, "informe-*.log")
	if err != nil {
		return nil, err
	}
	defer log.Close() // the child has its own descriptor
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	args := append([]string{"serve", "--addr", addr, "--ops-addr", ops, "--log-format", "json"}, l.args...)
	cmd := exec.CommandContext(pctx, l.bin, append(args, extra...)...)
	cmd.Env, cmd.Stdout, cmd.Stderr = append(os.Environ(), "DATABASE_URL="+l.dbURL), log, log
	cmd.Cancel, cmd.WaitDelay = func() error { return cmd.Process.Signal(syscall.SIGTERM) }, 30*time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start informe: %w", err)
	}
	inf := &informe{launcher: l, cmd: cmd, cancel: cancel, base: "http://" + addr, ops: "http://" + ops, log: log.Name(),
		client: &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}}
	ready, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	for {
		s, err := inf.fetch(ready, "/users", nil, nil)
		if err == nil && s.status == http.StatusOK {
			return inf, nil
		}
		if ready.Err() != nil {
			inf.stop()
			return nil, fmt.Errorf("informe not ready in 30 s (status %d, %w), %v; see %s", s.status, errors.Join(err, ctx.Err()), cmd.ProcessState, inf.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err) // no loopback: nothing can run
	}
	defer l.Close()
	return l.Addr().String()
}

// stop ends informe and waits for it; calls after the first do nothing.
func (inf *informe) stop() {
	inf.client.CloseIdleConnections()
	inf.cancel()
	_ = inf.cmd.Wait() // after the first, "Wait was already called"
}

// sample is one timed request (or COPY, or command).
type sample struct {
	wall   time.Duration // request sent to last body byte
	ttfb   time.Duration // request written to first response byte
	bytes  int64
	status int
	header http.Header
	cpu    float64 // informe's CPU seconds during it
	pgCPU  float64 // its PostgreSQL backends' CPU seconds
}

type samples []sample

func (ss samples) wall() time.Duration {
	return median(pick(ss, func(s sample) time.Duration { return s.wall }))
}
func (ss samples) ttfb() time.Duration {
	return median(pick(ss, func(s sample) time.Duration { return s.ttfb }))
}
func (ss samples) cpu() float64   { return mean(pick(ss, func(s sample) float64 { return s.cpu })) }
func (ss samples) pgCPU() float64 { return mean(pick(ss, func(s sample) float64 { return s.pgCPU })) }
func (ss samples) bytes() int64   { return ss[len(ss)-1].bytes }
func (ss samples) spread() string {
	w := pick(ss, func(s sample) time.Duration { return s.wall })
	return ms(slices.Min(w)) + "-" + ms(slices.Max(w))
}

// stallLimit is how long a request may go without a byte: a hung server.
const stallLimit = time.Minute

var errStalled = errors.New("no byte for a minute (hung?)")

// fetch GETs url (absolute, or a path on informe) with hdr, copies the body
// to sink (nil: discarded) and times it; the caller judges the status.
func (inf *informe) fetch(ctx context.Context, url string, hdr http.Header, sink io.Writer) (sample, error) {
	if strings.HasPrefix(url, "/") {
		url = inf.base + url
	}
	var s sample
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := time.AfterFunc(stallLimit, func() { cancel(errStalled) })
	defer stall.Stop()
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
	req.Header.Set("Authorization", "Bearer "+inf.token)
	began := time.Now()
	resp, err := inf.client.Do(req)
	if err == nil {
		s.bytes, err = io.Copy(cmp.Or(sink, io.Discard), readFunc(func(p []byte) (int, error) {
			stall.Reset(stallLimit)
			return resp.Body.Read(p)
		}))
		resp.Body.Close()
		s.status, s.header = resp.StatusCode, resp.Header
	}
	s.wall, s.ttfb = time.Since(began), first.Sub(wrote)
	if err != nil {
		return s, fmt.Errorf("GET %s after %d bytes: %w", url, s.bytes, errors.Join(err, context.Cause(ctx)))
	}
	return s, nil
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// measure fetches path, which must answer 200, with the CPU seconds that
// informe and its backends spent meanwhile.
func (inf *informe) measure(ctx context.Context, path string, hdr http.Header) (sample, error) {
	pg0, _ := inf.backendsCPU(ctx) // an error comes again below
	cpu0 := procCPU(inf.cmd.Process.Pid)
	s, err := inf.fetch(ctx, path, hdr, nil)
	if err == nil && s.status != http.StatusOK {
		err = fmt.Errorf("GET %s: %d %s", path, s.status, http.StatusText(s.status))
	}
	if err != nil {
		return s, err
	}
	s.cpu = procCPU(inf.cmd.Process.Pid) - cpu0
	pg1, err := inf.backendsCPU(ctx)
	for pid, t := range pg1 {
		s.pgCPU += t - pg0[pid]
	}
	return s, err
}

// warm makes the warm-up request and notes VmRSS after it.
func (inf *informe) warm(ctx context.Context, path string, hdr http.Header) error {
	if _, err := inf.measure(ctx, path, hdr); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	var err error
	inf.warmRSS, _, err = procMemory(inf.cmd.Process.Pid)
	return err
}

// memory returns VmHWM now over VmRSS after the warm-up, and VmHWM.
func (inf *informe) memory() (growth, peak int64) {
	_, peak, _ = procMemory(inf.cmd.Process.Pid)
	return peak - inf.warmRSS, peak
}

// logLine is one request line of informe's JSON log.
type logLine struct {
	Msg, Path string
	Status    int
	Rows      int64
	Aborted   bool
}

// logged returns the request lines for path in the stopped process's log.
func (inf *informe) logged(path string) ([]logLine, error) {
	f, err := os.Open(inf.log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []logLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "request" && l.Path == path {
			lines = append(lines, l)
		}
	}
	return lines, sc.Err()
}

// scrape returns informe's counters of the spool and the limits, by name
// and labels, those that are not zero.
func scrape(ctx context.Context, inf *informe) map[string]float64 {
	m := metricValues(ctx, inf, "informe_spool", "informe_http_refusals")
	maps.DeleteFunc(m, func(_ string, v float64) bool { return v == 0 })
	return m
}

// metricValues returns the series of informe's /metrics whose names start
// with one of prefixes, by name and labels.
func metricValues(ctx context.Context, inf *informe, prefixes ...string) map[string]float64 {
	m := map[string]float64{}
	var body strings.Builder
	_, _ = inf.fetch(ctx, inf.ops+"/metrics", nil, &body)
	for line := range strings.Lines(body.String()) {
		name, val, _ := strings.Cut(strings.TrimSpace(line), " ")
		if v, err := strconv.ParseFloat(val, 64); err == nil && !strings.HasPrefix(name, "#") &&
			slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			m[name] = v
		}
	}
	return m
}

// session starts a fresh informe for a case, warmed up with warmPath, that
// asks for path, which streams rows, in each step.
func (b *bench) session(ctx context.Context, l *launcher, label, warmPath, path string, rows int64, extra ...string) (*informe, error) {
	inf, err := l.start(ctx, extra...)
	if err == nil {
		if err = inf.warm(ctx, warmPath, nil); err != nil {
			inf.stop()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	inf.label, inf.path, inf.rows = label, path, rows
	return inf, nil
}

func (s *informe) step(ctx context.Context) error {
	smp, err := s.measure(ctx, s.path, nil)
	s.ss = append(s.ss, smp)
	if err != nil {
		err = fmt.Errorf("%s: %w", s.label, err)
	}
	return err
}

// finish notes the peak RSS, stops informe and checks from its log that
// every measured request streamed all its rows.
func (s *informe) finish() error {
	s.growth, s.peak = s.memory()
	s.stop()
	endpoint, _, _ := strings.Cut(s.path, "?")
	lines, err := s.logged(endpoint)
	if err != nil {
		return err
	}
	if len(lines) != len(s.ss)+1 { // the warm-up is the first
		return fmt.Errorf("%s: informe logged %d requests, want %d", s.label, len(lines), len(s.ss)+1)
	}
	for _, l := range lines[1:] {
		if l.Status != http.StatusOK || l.Aborted || l.Rows != s.rows {
			return fmt.Errorf("%s: informe logged status %d, %d rows, aborted %v; want 200 and %d rows", s.label, l.Status, l.Rows, l.Aborted, s.rows)
		}
	}
	return nil
}

// interleave runs the steps runs times, reversed every other round, so
// that load that comes and goes weighs on all alike.
func interleave(ctx context.Context, runs int, steps ...func(context.Context) error) error {
	for i := range runs * len(steps) {
		j := i % len(steps)
		if i/len(steps)%2 == 1 {
			j = len(steps) - 1 - j
		}
		if err := steps[j](ctx); err != nil {
			return err
		}
	}
	return nil
}

// measureAll interleaves the sessions' steps and more for runs rounds and
// finishes the sessions, which stop whatever happens.
func measureAll(ctx context.Context, runs int, ss []*informe, more ...func(context.Context) error) error {
	defer stopAll(ss)
	for _, s := range ss {
		more = append(more, s.step)
	}
	err := interleave(ctx, runs, more...)
	for _, s := range ss {
		if err == nil {
			err = s.finish()
		}
	}
	return err
}

func stopAll(ss []*informe) {
	for _, s := range ss {
		s.stop()
	}
}

// timed runs cmd and times it, with its output's size and its CPU seconds.
func timed(cmd *exec.Cmd) (sample, error) {
	var w countWriter
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &w, &stderr
	began := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(began), bytes: w.n, status: http.StatusOK}
	if err != nil {
		return s, fmt.Errorf("%s: %w: %.2000s", filepath.Base(cmd.Path), err, strings.TrimSpace(stderr.String()))
	}
	s.cpu = cmd.ProcessState.UserTime().Seconds() + cmd.ProcessState.SystemTime().Seconds()
	return s, nil
}

// build builds ./cmd/informe of the work tree, or of revision rev (by git
// archive, which changes nothing in .git), and returns the binary.
func build(ctx context.Context, tmp, rev string) (string, error) {
	logf("building ./cmd/informe %s", rev)
	dir, bin, script := ".", filepath.Join(tmp, "informe"), `go build -o "$3" ./cmd/informe`
	if rev != "" {
		dir, bin = filepath.Join(tmp, "baseline-src"), filepath.Join(tmp, "informe-baseline")
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return "", err
		}
		script = `mkdir -p "$2" && git archive "$1" | tar -x -C "$2" && cd "$2" && ` + script
	}
	sh := exec.CommandContext(ctx, "sh", "-c", script, "sh", rev, dir, bin)
	sh.Stdout, sh.Stderr = os.Stderr, os.Stderr
	if err := sh.Run(); err != nil {
		return "", fmt.Errorf("build informe %s: %w", rev, err)
	}
	return bin, nil
}

// procCPU returns a process's CPU seconds so far, from the nanoseconds of
// /proc/PID/task/*/schedstat (finer than the 10 ms ticks of /proc/PID/stat,
// which a 100-row page hardly reaches).
func procCPU(pid int) float64 {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, _ := os.ReadDir(dir)
	var ns int64
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread ended
		}
		n, _ := strconv.ParseInt(strings.Fields(string(b) + " 0")[0], 10, 64)
		ns += n
	}
	return float64(ns) / 1e9
}

// procMemory returns a process's VmRSS and VmHWM, in bytes.
func procMemory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for line := range strings.Lines(string(b)) {
		key, val, _ := strings.Cut(line, ":")
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		switch key {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			hwm = kb << 10
		}
	}
	return rss, hwm, err
}

// backendsCPU returns the CPU seconds so far of each of informe's
// backends: those of the benchmark's database with application_name
// informe (the benchmark's own pool calls itself informe-bench).
func (l *launcher) backendsCPU(ctx context.Context) (map[int]float64, error) {
	pids, err := postgres.InformePIDs(ctx, l.pool, l.db)
	m := map[int]float64{}
	for _, pid := range pids {
		m[pid] = procCPU(pid)
	}
	return m, err
}

// countWriter counts what is written to it and notes when it began.
type countWriter struct {
	n     int64
	first time.Time
}

func (w *countWriter) Write(p []byte) (int, error) {
	if w.n == 0 && len(p) > 0 {
		w.first = time.Now()
	}
	w.n += int64(len(p))
	return len(p), nil
}

func pick[T any](ss []sample, f func(sample) T) []T {
	out := make([]T, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

func median(ds []time.Duration) time.Duration { return percentile(ds, 50) }

// percentile is the nearest rank, or for the median of an even count the
// mean of the middle two.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	if p == 50 && len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(max(len(xs), 1))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

func mibs(n int64) string { return fmt.Sprintf("%.1f", float64(n)/mib) }

const mib = 1 << 20

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
