package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
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
	token  string
	client *http.Client
	log    *os.File
	logPos int64 // where this process's lines start in the log
	exited chan struct{}
	once   sync.Once
}

// startInforme starts `informe serve` on a free loopback port, its JSON log
// appended to logPath, and waits until it answers an authenticated request.
func startInforme(ctx context.Context, bin, dbURL, token, logPath string) (*informe, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	pos, err := log.Seek(0, io.SeekEnd)
	if err != nil {
		log.Close()
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, "serve", "--addr", addr, "--ops-addr", "", "--log-format", "json")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start informe: %w", err)
	}
	inf := &informe{
		cmd: cmd, base: "http://" + addr, token: token, log: log, logPos: pos,
		exited: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{
			DisableCompression:  true,
			MaxIdleConnsPerHost: 1,
		}},
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

// sample is one measured request.
type sample struct {
	wall  time.Duration // from sending the request to the last body byte
	ttfb  time.Duration // from the request written to the first response byte
	bytes int64
	cpu   float64 // informe's user+system CPU seconds during the request
	pgCPU float64 // the same for informe's PostgreSQL backends
}

// measure makes one request for path and reads the whole body.
func (inf *informe) measure(ctx context.Context, path string, pg *backends) (sample, error) {
	var s sample
	var wrote, first time.Time
	trace := &httptrace.ClientTrace{
		WroteRequest:         func(httptrace.WroteRequestInfo) { wrote = time.Now() },
		GotFirstResponseByte: func() { first = time.Now() },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, inf.base+path, nil)
	if err != nil {
		return s, err
	}
	req.Header.Set("Authorization", "Bearer "+inf.token)
	pg0, err := pg.ticks(ctx)
	if err != nil {
		return s, err
	}
	cpu0, err := procTicks(inf.cmd.Process.Pid)
	if err != nil {
		return s, err
	}
	began := time.Now()
	resp, err := inf.client.Do(req)
	if err != nil {
		return s, err
	}
	s.bytes, err = io.Copy(io.Discard, resp.Body)
	s.wall = time.Since(began)
	resp.Body.Close()
	if err != nil {
		return s, fmt.Errorf("read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	s.ttfb = first.Sub(wrote)
	cpu1, err := procTicks(inf.cmd.Process.Pid)
	if err != nil {
		return s, err
	}
	pg1, err := pg.ticks(ctx)
	if err != nil {
		return s, err
	}
	s.cpu = float64(cpu1-cpu0) / clockTicks
	for pid, t := range pg1 {
		s.pgCPU += float64(t-pg0[pid]) / clockTicks
	}
	return s, nil
}

// caseResult is what one fresh informe process measured for one format
// and page.
type caseResult struct {
	format  string
	page    pageSpec
	samples []sample
	rows    int64 // rows per request, from informe's log
	baseRSS int64 // VmRSS after the warm-up request, bytes
	baseHWM int64 // VmHWM after the warm-up request, bytes
	peakRSS int64 // VmHWM after the measured requests, bytes
	copy    *copyResult
}

// measureInforme starts a fresh informe, warms it up with a small page of
// the same format, then requests the page runs times.
func measureInforme(ctx context.Context, start func() (*informe, error), pool *pgxpool.Pool, db, format string, p pageSpec, runs int) (*caseResult, error) {
	inf, err := start()
	if err != nil {
		return nil, err
	}
	defer inf.stop()
	pg := &backends{pool: pool, db: db}
	r := &caseResult{format: format, page: p}
	if _, err := inf.measure(ctx, fmt.Sprintf("/api/general-report?format=%s&result_per_page=%d&page=1", format, small), pg); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	if r.baseRSS, r.baseHWM, err = procMemory(inf.cmd.Process.Pid); err != nil {
		return nil, err
	}
	path := fmt.Sprintf("/api/general-report?format=%s&result_per_page=%d&page=%d", format, p.perPage, p.page)
	for range runs {
		s, err := inf.measure(ctx, path, pg)
		if err != nil {
			return nil, err
		}
		r.samples = append(r.samples, s)
	}
	if _, r.peakRSS, err = procMemory(inf.cmd.Process.Pid); err != nil {
		return nil, err
	}
	inf.stop() // so that every log line is written
	rows, err := inf.loggedRows()
	if err != nil {
		return nil, err
	}
	// The first logged report request is the warm-up.
	if len(rows) != runs+1 {
		return nil, fmt.Errorf("informe logged %d report requests, want %d", len(rows), runs+1)
	}
	for _, n := range rows[1:] {
		if n != p.rows {
			return nil, fmt.Errorf("informe streamed %d rows, want %d", n, p.rows)
		}
	}
	r.rows = p.rows
	return r, nil
}

// loggedRows returns the rows of each /api/general-report request in this
// process's log lines, in order, and fails on any that did not end with 200.
func (inf *informe) loggedRows() ([]int64, error) {
	f, err := os.Open(inf.log.Name())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(inf.logPos, io.SeekStart); err != nil {
		return nil, err
	}
	var rows []int64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Msg     string `json:"msg"`
			Path    string `json:"path"`
			Status  int    `json:"status"`
			Rows    int64  `json:"rows"`
			Aborted bool   `json:"aborted"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != "request" || line.Path != "/api/general-report" {
			continue
		}
		if line.Status != http.StatusOK || line.Aborted {
			return nil, fmt.Errorf("informe logged a failed request: %s", sc.Text())
		}
		rows = append(rows, line.Rows)
	}
	return rows, sc.Err()
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
