package schedule

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/informe/informe/internal/s3test"
	"github.com/informe/informe/internal/sshtest"
)

// place is a destination as a test sees it: the schedule's URL, the file
// called name if it is there, and the names a reader can see.
type place struct {
	to    string
	read  func(t *testing.T, name string) ([]byte, bool)
	names func(t *testing.T) []string
}

func folderPlace(t *testing.T) place {
	dir := t.TempDir()
	return dirPlace(dir, "file://"+dir+"/pendientes-{date}.csv")
}

func dirPlace(dir, to string) place {
	return place{
		to: to,
		read: func(t *testing.T, name string) ([]byte, bool) {
			b, err := os.ReadFile(filepath.Join(dir, name))
			return b, err == nil
		},
		names: func(t *testing.T) []string { return visible(t, dir) },
	}
}

func sftpPlace(t *testing.T) (place, *sshtest.Server) {
	srv := sshtest.Start(t)
	dir := filepath.Join(srv.Dir, "in")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	return dirPlace(dir, "sftp://"+srv.User+"@"+srv.Addr+dir+"/pendientes-{date}.csv?key_file="+srv.KeyFile+"&known_hosts="+srv.KnownHosts), srv
}

func s3Place(t *testing.T) (place, *s3test.Server) {
	srv := s3test.Start(t)
	t.Setenv("INFORME_TEST_S3_KEY", srv.AccessKey)
	secretFile := writeSecret(t, srv.SecretKey)
	look, err := minio.NewCore(strings.TrimPrefix(srv.Endpoint, "http://"), &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	return place{
		to: "s3://" + srv.Bucket + "/finanzas/pendientes-{date}.csv?endpoint=" + srv.Endpoint + "&access_key_env=INFORME_TEST_S3_KEY&secret_key_file=" + secretFile,
		read: func(t *testing.T, name string) ([]byte, bool) {
			body, _, _, err := look.GetObject(context.Background(), srv.Bucket, "finanzas/"+name, minio.GetObjectOptions{})
			if err != nil {
				return nil, false
			}
			defer body.Close()
			b, err := io.ReadAll(body)
			return b, err == nil
		},
		names: func(t *testing.T) []string {
			res, err := look.ListObjectsV2(srv.Bucket, "", "", "", "", 1000)
			if err != nil {
				t.Error(err)
				return nil
			}
			var out []string
			for _, o := range res.Contents {
				out = append(out, strings.TrimPrefix(o.Key, "finanzas/"))
			}
			return out
		},
	}, srv
}

const receiverSecret = "s3cr3t-Of-The-Receiver-0123456789"

func httpsPlace(t *testing.T) place {
	rc := startReceiver(t, receiverSecret)
	return place{
		to: rc.url + "/inbox/pendientes-{date}.csv?secret_file=" + writeSecret(t, receiverSecret) + "&ca_file=" + rc.caFile,
		read: func(t *testing.T, name string) ([]byte, bool) {
			got := rc.bodies("/inbox/" + name)
			if len(got) != 1 {
				if len(got) > 1 {
					t.Errorf("%s received %d times", name, len(got))
				}
				return nil, false
			}
			return got[0], true
		},
		names: func(t *testing.T) []string {
			rc.mu.Lock()
			defer rc.mu.Unlock()
			var out []string
			for p := range rc.got {
				out = append(out, strings.TrimPrefix(p, "/inbox/"))
			}
			return out
		},
	}
}

// pending is the query of the schedules of these tests: the pending
// tasks, by end date.
var pending = url.Values{"$filter": {"task_status eq 'Pendiente'"}, "$orderby": {"task_end_date desc"}}

// TestDeliveries runs a daily schedule to each kind of destination with
// two runners over the same database, for three occurrences: each
// occurrence delivers exactly one file, complete and equal to the API's
// export of the same query, and no reader sees it before it is whole.
func TestDeliveries(t *testing.T) {
	places := []struct {
		name string
		make func(t *testing.T) place
	}{
		{"File", folderPlace},
		{"SFTP", func(t *testing.T) place { p, _ := sftpPlace(t); return p }},
		{"S3", func(t *testing.T) place { p, _ := s3Place(t); return p }},
		{"HTTPS", httpsPlace},
	}
	for _, pl := range places {
		t.Run(pl.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			p := pl.make(t)
			clk := &clock{t: santiago(2026, 3, 1, 0, 0)}
			sc := Schedule{Name: "finanzas-diario", Dataset: "general-report", Query: pending, Format: "csv", Cron: "0 6 * * *",
				To: p.to, TokenName: "finanzas", Always: true}
			if err := e.store.Add(ctx, sc, clk.Now()); err != nil {
				t.Fatal(err)
			}
			want := e.export(t, "csv", pending)
			runners := []*Runner{e.runner("a", clk), e.runner("b", clk)}
			for _, r := range runners {
				r.wrap = func(w io.Writer) io.Writer {
					return &onWrite{w: w, hook: func() {
						// The file is being written: no reader sees it yet.
						for _, n := range p.names(t) {
							if !strings.HasPrefix(n, "pendientes-2026-03-0") {
								t.Errorf("%s is visible", n)
							}
						}
						if n := len(p.names(t)); n >= day(clk) {
							t.Errorf("%d files visible while the file of day %d is written", n, day(clk))
						}
					}}
				}
			}
			for d := 1; d <= 3; d++ {
				clk.Set(santiago(2026, 3, d, 6, 0))
				var mu sync.Mutex
				var done []Run
				var wg sync.WaitGroup
				for _, r := range runners {
					wg.Go(func() {
						runs, err := r.Tick(ctx)
						if err != nil {
							t.Error(err)
						}
						mu.Lock()
						done = append(done, runs...)
						mu.Unlock()
					})
				}
				wg.Wait()
				if len(done) != 1 || done[0].Outcome != Delivered {
					t.Fatalf("day %d: the runners ended %+v, want one delivered run", d, done)
				}
				name := "pendientes-2026-03-0" + string(rune('0'+d)) + ".csv"
				got, ok := p.read(t, name)
				if !ok {
					t.Fatalf("day %d: %s is not there", d, name)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("day %d: %s holds %d bytes, the API's export %d", d, name, len(got), len(want))
				}
				if *done[0].Bytes != int64(len(want)) {
					t.Errorf("day %d: the run recorded %d bytes, want %d", d, *done[0].Bytes, len(want))
				}
			}
			if got := len(p.names(t)); got != 3 {
				t.Errorf("%d files, want 3: %v", got, p.names(t))
			}
			if got := e.runs(t, sc.Name); len(got) != 3 {
				t.Errorf("%d runs recorded, want 3", len(got))
			}
		})
	}
}

// day returns the day of the month of clk's time.
func day(clk *clock) int { return clk.Now().Day() }

// TestTakeOver stops a delivery halfway (its runner no longer renews its
// lease) and lets a second runner, later, take the run over: the file
// appears once, whole, delivered by the second; the first's half file is
// never visible and is dropped.
func TestTakeOver(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	dir := t.TempDir()
	p := dirPlace(dir, "file://"+dir+"/pendientes-{date}.csv")
	start := santiago(2026, 3, 1, 6, 0)
	if err := e.store.Add(ctx, Schedule{Name: "finanzas-diario", Dataset: "general-report", Query: pending, Format: "csv", Cron: "0 6 * * *",
		To: p.to, TokenName: "finanzas"}, start.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	want := e.export(t, "csv", pending)
	a := e.runner("a", &clock{t: start})
	b := e.runner("b", &clock{t: start.Add(DefaultLease + time.Second)})
	var taken []Run
	a.wrap = func(w io.Writer) io.Writer {
		return &onWrite{w: w, hook: func() {
			// a is halfway, and b's time is past a's lease: b takes over.
			if got := visible(t, dir); len(got) != 0 {
				t.Errorf("visible while written: %v", got)
			}
			var err error
			if taken, err = b.Tick(ctx); err != nil {
				t.Error(err)
			}
		}}
	}
	done, err := a.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 0 {
		t.Errorf("a ended %+v, want nothing: its run was taken over", done)
	}
	if len(taken) != 1 || taken[0].Outcome != Delivered || taken[0].Attempt != 2 {
		t.Fatalf("b ended %+v, want attempt 2 delivered", taken)
	}
	if got := all(t, dir); !slices.Equal(got, []string{"pendientes-2026-03-01.csv"}) {
		t.Fatalf("the folder holds %v, want the one file", got)
	}
	if got, _ := p.read(t, "pendientes-2026-03-01.csv"); !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes, the API's export %d", len(got), len(want))
	}
	runs := e.runs(t, "finanzas-diario")
	if len(runs) != 2 || runs[0].Outcome != Retried || !strings.Contains(runs[0].Reason, "stopped renewing its lease (a)") || runs[1].Outcome != Delivered {
		t.Fatalf("runs = %+v, want a's retried for its lease, then b's delivered", runs)
	}
}

// TestUnchanged delivers only when the data changed: a run whose file
// would be that of the last delivery is recorded unchanged and writes
// nothing, unless the schedule says always.
func TestUnchanged(t *testing.T) {
	for _, always := range []bool{false, true} {
		t.Run(map[bool]string{false: "OnlyChanged", true: "Always"}[always], func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			dir := t.TempDir()
			clk := &clock{t: santiago(2026, 3, 1, 0, 0)}
			if err := e.store.Add(ctx, Schedule{Name: "s", Dataset: "general-report", Query: pending, Format: "csv", Cron: "0 6 * * *",
				To: "file://" + dir + "/p-{date}.csv", TokenName: "finanzas", Always: always}, clk.Now()); err != nil {
				t.Fatal(err)
			}
			r := e.runner("a", clk)
			outcomes := func(d int) string {
				clk.Set(santiago(2026, 3, d, 6, 0))
				done, err := r.Tick(ctx)
				if err != nil || len(done) != 1 {
					t.Fatalf("day %d: %+v, %v", d, done, err)
				}
				return done[0].Outcome
			}
			if got := outcomes(1); got != Delivered {
				t.Fatalf("day 1: %s", got)
			}
			wantSame := Unchanged
			if always {
				wantSame = Delivered
			}
			if got := outcomes(2); got != wantSame {
				t.Fatalf("day 2, the same data: %s, want %s", got, wantSame)
			}
			// One changed row: a delivery.
			if _, err := e.pool.Exec(ctx, "UPDATE tasks SET end_date = end_date + 1 WHERE id = (SELECT min(id) FROM tasks WHERE status = 'Pendiente' AND end_date IS NOT NULL)"); err != nil {
				t.Fatal(err)
			}
			if got := outcomes(3); got != Delivered {
				t.Fatalf("day 3, one row changed: %s", got)
			}
			want := []string{"p-2026-03-01.csv", "p-2026-03-03.csv"}
			if always {
				want = []string{"p-2026-03-01.csv", "p-2026-03-02.csv", "p-2026-03-03.csv"}
			}
			if got := all(t, dir); !slices.Equal(got, want) {
				t.Fatalf("the folder holds %v, want %v", got, want)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "p-2026-03-03.csv")); !bytes.Equal(got, e.export(t, "csv", pending)) {
				t.Fatal("the last file is not the API's export")
			}
		})
	}
}

// TestMissedRuns starts after downtime: a schedule that missed several
// occurrences runs once, and its next occurrence is the first after now.
func TestMissedRuns(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	dir := t.TempDir()
	clk := &clock{t: santiago(2026, 3, 1, 0, 0)}
	if err := e.store.Add(ctx, Schedule{Name: "hourly", Dataset: "services", Format: "csv", Cron: "0 * * * *",
		To: "file://" + dir + "/s-{date}.csv", TokenName: "finanzas"}, clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.Set(santiago(2026, 3, 1, 5, 10)) // five occurrences missed
	r := e.runner("a", clk)
	done, err := r.Tick(ctx)
	if err != nil || len(done) != 1 {
		t.Fatalf("ran %+v, %v; want one run", done, err)
	}
	if got, want := done[0].Occurrence, santiago(2026, 3, 1, 1, 0).Add(-30*time.Second); !got.Equal(want) {
		t.Errorf("occurrence %s, want the first missed, %s", got, want)
	}
	if done, _ := r.Tick(ctx); len(done) != 0 {
		t.Fatalf("a second look ran %+v", done)
	}
	sc, err := e.store.Get(ctx, "hourly")
	if err != nil {
		t.Fatal(err)
	}
	if want := santiago(2026, 3, 1, 6, 0).Add(-30 * time.Second); !sc.NextRun.Equal(want) {
		t.Errorf("next run %s, want %s", sc.NextRun, want)
	}
}

// TestStopped stops a runner halfway through a delivery (its context is
// cancelled, as SIGTERM does): nothing is visible, the attempt is recorded
// retried at once, and another runner delivers it without waiting for the
// lease.
func TestStopped(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	start := santiago(2026, 3, 1, 6, 0)
	if err := e.store.Add(context.Background(), Schedule{Name: "s", Dataset: "general-report", Query: pending, Format: "csv", Cron: "0 6 * * *",
		To: "file://" + dir + "/p-{date}.csv", TokenName: "finanzas"}, start.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: start}
	a, b := e.runner("a", clk), e.runner("b", clk)
	ctx, stop := context.WithCancel(context.Background())
	a.wrap = func(w io.Writer) io.Writer {
		return &onWrite{w: w, hook: stop}
	}
	done, _ := a.Tick(ctx)
	if len(done) != 1 || done[0].Outcome != Retried {
		t.Fatalf("a ended %+v, want one retried run", done)
	}
	if got := all(t, dir); len(got) != 0 {
		t.Fatalf("the stopped delivery left %v", got)
	}
	done, err := b.Tick(context.Background())
	if err != nil || len(done) != 1 || done[0].Outcome != Delivered || done[0].Attempt != 2 {
		t.Fatalf("b ended %+v, %v; want attempt 2 delivered", done, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "p-2026-03-01.csv")); !bytes.Equal(got, e.export(t, "csv", pending)) {
		t.Fatal("the file is not the API's export")
	}
}
