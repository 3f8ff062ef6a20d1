package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
)

// TestRefused runs schedules whose destination refuses: each gives failed
// runs with the reason (after its retries, for one that may go away by
// itself), a signed call of the webhook, the metric, and no credential in
// any record, log line or metric.
func TestRefused(t *testing.T) {
	const sshPassword = "Wrong-Password-Of-The-Test-42"
	tests := []struct {
		name     string
		to       func(t *testing.T) (to string, secrets []string)
		attempts int    // attempts until failed
		reason   string // the start of the failed run's reason
	}{
		{"ErrFull", func(t *testing.T) (string, []string) {
			p, srv := s3Place(t)
			srv.SetQuota(10)
			return p.to, []string{srv.SecretKey, srv.AccessKey}
		}, 1, "full: "},
		{"ErrWrongPassword", func(t *testing.T) (string, []string) {
			_, srv := sftpPlace(t)
			t.Setenv("INFORME_TEST_SFTP_PASSWORD", sshPassword)
			return "sftp://" + srv.User + "@" + srv.Addr + srv.Dir + "/p-{date}.csv?password_env=INFORME_TEST_SFTP_PASSWORD&known_hosts=" + srv.KnownHosts, []string{sshPassword}
		}, 1, "auth_failed: "},
		{"ErrHostKey", func(t *testing.T) (string, []string) {
			_, srv := sftpPlace(t)
			other := filepath.Join(t.TempDir(), "known_hosts")
			srv.WriteKnownHosts(t, other)
			return "sftp://" + srv.User + "@" + srv.Addr + srv.Dir + "/p-{date}.csv?key_file=" + srv.KeyFile + "&known_hosts=" + other, nil
		}, 1, "host_key_mismatch: "},
		{"ErrUnreachable", func(t *testing.T) (string, []string) {
			// A port that was just free: nothing listens there.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			return "https://" + addr + "/inbox/p-{date}.csv?secret_file=" + writeSecret(t, receiverSecret), []string{receiverSecret}
		}, MaxAttempts, "unreachable: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			to, secrets := tt.to(t)
			hooks := startReceiver(t, "webhook-secret-0123456789")
			webhook := hooks.url + "/hooks/informe-failed?secret_file=" + writeSecret(t, "webhook-secret-0123456789") + "&ca_file=" + hooks.caFile
			clk := &clock{t: santiago(2026, 3, 1, 0, 0)}
			if err := e.store.Add(ctx, Schedule{Name: "finanzas", Dataset: "general-report", Query: pending, Format: "csv", Cron: "0 6 * * *",
				To: to, TokenName: "finanzas", Webhook: webhook}, clk.Now()); err != nil {
				t.Fatal(err)
			}
			r := e.runner("a", clk)
			at := santiago(2026, 3, 1, 6, 0)
			var last Run
			for i := 1; i <= tt.attempts; i++ {
				clk.Set(at)
				done, err := r.Tick(ctx)
				if err != nil || len(done) != 1 {
					t.Fatalf("attempt %d: %+v, %v", i, done, err)
				}
				last = done[0]
				want := Retried
				if i == tt.attempts {
					want = Failed
				}
				if last.Outcome != want || last.Attempt != i || !strings.HasPrefix(last.Reason, tt.reason) {
					t.Fatalf("attempt %d: %s %q, want %s %q...", i, last.Outcome, last.Reason, want, tt.reason)
				}
				if i < tt.attempts {
					// Not yet: the retry waits for its backoff.
					clk.Set(at.Add(Backoff[i-1] - time.Second))
					if done, _ := r.Tick(ctx); len(done) != 0 {
						t.Fatalf("retried before the backoff: %+v", done)
					}
					at = at.Add(Backoff[i-1])
				}
			}
			calls := hooks.bodies("/hooks/informe-failed")
			if len(calls) != 1 {
				t.Fatalf("the webhook was called %d times, want once", len(calls))
			}
			var h Hook
			if err := json.Unmarshal(calls[0], &h); err != nil {
				t.Fatal(err)
			}
			if h.Schedule != "finanzas" || h.Reason != last.Reason || h.Run.ID != last.ID || h.Run.Attempt != tt.attempts {
				t.Errorf("the webhook got %+v, want the failed run %+v", h, last)
			}
			metrics := e.scrape(t)
			if !strings.Contains(metrics, `informe_schedule_runs_total{outcome="failed"} 1`) {
				t.Errorf("metrics lack one failed run:\n%s", grep(metrics, "informe_schedule"))
			}
			if tt.attempts > 1 && !strings.Contains(metrics, `informe_schedule_runs_total{outcome="retried"} 3`) {
				t.Errorf("metrics lack three retried runs:\n%s", grep(metrics, "informe_schedule"))
			}
			records := e.history(t) + e.logs.String() + metrics + string(calls[0])
			for _, s := range secrets {
				if strings.Contains(records, s) {
					t.Errorf("a credential shows in the records, logs, metrics or webhook")
				}
			}
			if !strings.Contains(e.logs.String(), `"outcome":"failed"`) {
				t.Errorf("no log line of the failed run: %s", e.logs.String())
			}
		})
	}
}

// grep returns the lines of s holding word.
func grep(s, word string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestAddRefuses adds schedules that cannot work: each is refused, with
// the field at fault and why, and nothing is kept.
func TestAddRefuses(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	dir := t.TempDir()
	good := Schedule{Name: "s", Dataset: "general-report", Format: "csv", Cron: "0 6 * * *", To: "file://" + dir + "/p-{date}.csv", TokenName: "finanzas"}
	if _, err := auth.NewStore(e.pool).Create(ctx, "usuarios", []dataset.Scope{dataset.UsersRead}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		edit   func(*Schedule)
		target string
		msg    string
	}{
		{"ErrCron", func(s *Schedule) { s.Cron = "0 25 * * *" }, "cron", "cron: not a cron expression of 5 fields (minute hour day-of-month month day-of-week): end of range (25) above maximum (23): 25"},
		{"ErrZone", func(s *Schedule) { s.Zone = "America/Santiag" }, "tz", `unknown time zone "America/Santiag": give an IANA name such as America/Santiago or UTC`},
		{"ErrFilter", func(s *Schedule) { s.Query = map[string][]string{"$filter": {"task_status eq"}} }, "query", "query: "},
		{"ErrColumn", func(s *Schedule) { s.Query = map[string][]string{"columns": {"contract_id,nope"}} }, "query", "query: "},
		{"ErrParam", func(s *Schedule) { s.Query = map[string][]string{"colour": {"red"}} }, "query", "query: "},
		{"ErrFormat", func(s *Schedule) { s.Format = "pdf" }, "format", `unknown format "pdf": allowed values are csv, tsv, ndjson, json, xlsx, parquet, arrow`},
		{"ErrDataset", func(s *Schedule) { s.Dataset = "report" }, "dataset", "the dataset must be one of "},
		{"ErrDestination", func(s *Schedule) { s.To = "ftp://host/p.csv" }, "to", `destination: unknown destination scheme "ftp": write file://, sftp://, s3:// or https://`},
		{"ErrPasswordInURL", func(s *Schedule) { s.To = "sftp://u:hunter2@host/p.csv" }, "to", "destination: the destination's URL holds a password"},
		{"ErrWebhook", func(s *Schedule) { s.Webhook = "http://hooks.example.cl/x" }, "webhook", "the webhook must be an https:// URL"},
		{"ErrNoToken", func(s *Schedule) { s.TokenName = "nadie" }, "token_name", `no token named "nadie": create it with informe token create`},
		{"ErrScope", func(s *Schedule) { s.TokenName = "usuarios" }, "token_name", `the token "usuarios" lacks the scope report:read that general-report needs`},
		{"ErrName", func(s *Schedule) { s.Name = " s" }, "name", "the schedule's name must be 1 to 100 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good
			tt.edit(&s)
			err := e.store.Add(ctx, s, time.Now())
			var fe *failure.Error
			if !errors.As(err, &fe) || fe.Code != failure.Invalid && fe.Code != failure.Forbidden {
				t.Fatalf("Add = %v, want an Invalid or Forbidden error", err)
			}
			found := false
			for _, e := range unjoin(err) {
				if errors.As(e, &fe) && fe.Target == tt.target && strings.HasPrefix(fe.Message, tt.msg) {
					found = true
				}
			}
			if !found {
				t.Fatalf("Add = %q, want %s: %q...", err, tt.target, tt.msg)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Error("the error repeats the password")
			}
		})
	}
	if list, err := e.store.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("kept %v, %v", list, err)
	}
	if err := e.store.Add(ctx, good, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Add(ctx, good, time.Now()); failure.CodeOf(err) != failure.Conflict {
		t.Fatalf("a second schedule of the same name: %v, want a Conflict", err)
	}
}
