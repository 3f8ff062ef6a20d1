package destination_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/internal/destination"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/testenv"
)

// TestParse checks what Parse takes and what it refuses, with the target
// and reason of each refusal, and that no refusal repeats a secret.
func TestParse(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-Sekret"
	for _, tt := range []struct {
		name, url          string
		wantTarget, reason string // "" for a URL taken
		wantString         string // String() of a URL taken, if not the URL itself
	}{
		{"File", "file:///srv/exports/report-{date}.csv", "", "", ""},
		{"FileLocalhost", "file://localhost/srv/report.csv", "", "", ""},
		{"SFTPKey", "sftp://informe@files.example.cl:2222/in/report-{date}.xlsx?key_file=/etc/informe/id_ed25519&known_hosts=/etc/informe/known_hosts", "", "", ""},
		{"SFTPPassword", "sftp://informe@files.example.cl/in/report.xlsx?password_env=SFTP_PASSWORD&known_hosts=/etc/informe/known_hosts", "", "", ""},
		{"S3", "s3://reports/daily/report-{date}.parquet?endpoint=https://minio.example.cl:9000&region=sa-east-1&access_key_env=S3_KEY&secret_key_file=/etc/informe/s3_secret", "", "", ""},
		{"S3Region", "s3://reports/report.parquet?region=sa-east-1&access_key_env=K&secret_key_env=S", "", "", ""},
		{"HTTPS", "https://receiver.example.cl/inbox/report-{date}.csv?secret_env=INFORME_HMAC", "", "", ""},

		{"ErrSyntax", "sftp://a b@%zz/x", "url", "url_syntax", ""},
		{"ErrPasswordInURL", "sftp://informe:" + secret + "@files.example.cl/in/r.csv?known_hosts=/k", "url", "password_in_url", ""},
		{"ErrPasswordInS3", "s3://key:" + secret + "@bucket/r.csv?region=x", "url", "password_in_url", ""},
		{"ErrNoScheme", "/srv/report.csv", "scheme", "scheme", ""},
		{"ErrHTTP", "http://receiver.example.cl/r.csv?secret_env=X", "scheme", "scheme", ""},
		{"ErrScheme", "ftp://files.example.cl/r.csv", "scheme", "scheme", ""},
		{"ErrFileHost", "file://server/srv/r.csv", "url", "url_syntax", ""},
		{"ErrFileOption", "file:///srv/r.csv?mode=0600", "mode", "option_unknown", ""},
		{"ErrFolderOnly", "file:///srv/exports/", "name", "name", ""},
		{"ErrDotDot", "file:///srv/../etc/r.csv", "name", "name", ""},
		{"ErrPlaceholder", "file:///srv/report-{day}.csv", "name", "placeholder", ""},
		{"ErrPlaceholderInFolder", "file:///srv/{date}/report.csv", "name", "placeholder", ""},
		{"ErrOptionTwice", "https://r.example.cl/r.csv?secret_env=A&secret_env=B", "secret_env", "option_repeated", ""},
		{"ErrOptionEmpty", "https://r.example.cl/r.csv?secret_env=", "secret_env", "option_value", ""},
		{"ErrSFTPNoUser", "sftp://files.example.cl/in/r.csv?key_file=/k&known_hosts=/h", "url", "url_syntax", ""},
		{"ErrSFTPNoKnownHosts", "sftp://u@files.example.cl/in/r.csv?key_file=/k", "known_hosts", "option_missing", ""},
		{"ErrSFTPNoAuth", "sftp://u@files.example.cl/in/r.csv?known_hosts=/h", "key_file", "option_missing", ""},
		{"ErrSFTPRelativeKey", "sftp://u@files.example.cl/in/r.csv?known_hosts=/h&key_file=id_ed25519", "key_file", "option_value", ""},
		{"ErrSFTPBothPasswords", "sftp://u@h/in/r.csv?known_hosts=/h&password_env=A&password_file=/p", "password_env", "option_conflict", ""},
		{"ErrSFTPPasswordAsOption", "sftp://u@h/in/r.csv?known_hosts=/h&password=" + secret, "password", "option_unknown", ""},
		{"ErrS3NoEndpoint", "s3://reports/r.csv?access_key_env=K&secret_key_env=S", "endpoint", "option_missing", ""},
		{"ErrS3HTTPEndpoint", "s3://reports/r.csv?endpoint=http://minio.example.cl&access_key_env=K&secret_key_env=S", "endpoint", "option_value", ""},
		{"ErrS3NoSecret", "s3://reports/r.csv?endpoint=https://m.example.cl&access_key_env=K", "secret_key_env", "option_missing", ""},
		{"ErrS3PartSize", "s3://reports/r.csv?endpoint=https://m.example.cl&access_key_env=K&secret_key_env=S&part_size=1", "part_size", "option_value", ""},
		{"ErrHTTPSNoSecret", "https://r.example.cl/r.csv", "secret_env", "option_missing", ""},
		{"ErrHTTPSUser", "https://someone@r.example.cl/r.csv?secret_env=X", "url", "url_syntax", ""},
		{"ErrLongOptionName", "file:///srv/r.csv?" + strings.Repeat("x", 40) + secret + "=1", strings.Repeat("x", 40) + secret, "option_unknown", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := destination.Parse(tt.url)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				want := tt.wantString
				if want == "" {
					want = tt.url
				}
				if got := d.String(); got != want {
					t.Errorf("String() = %q, want %q", got, want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse took %s", d)
			}
			if got, want := failure.CodeOf(err), failure.Invalid; got != want {
				t.Errorf("code = %d, want %d", got, want)
			}
			if got := failure.TargetOf(err); got != tt.wantTarget {
				t.Errorf("target = %q, want %q", got, tt.wantTarget)
			}
			if got := failure.ReasonOf(err); got != tt.reason {
				t.Errorf("reason = %q, want %q (%v)", got, tt.reason, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error repeats the secret: %v", err)
			}
			if tt.reason == "password_in_url" && !strings.Contains(err.Error(), "password_env") {
				t.Errorf("the error does not say to use password_env: %v", err)
			}
		})
	}
}

// TestName checks {date} as the schedule's zone sees the run's instant.
func TestName(t *testing.T) {
	t.Parallel()
	d, err := destination.Parse("file:///srv/report-{date}-{date}.csv")
	if err != nil {
		t.Fatal(err)
	}
	// 02:30 UTC on the 1st of January is still the 31st of December in Santiago.
	at := time.Date(2025, 1, 1, 2, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		loc  *time.Location
		want string
	}{
		{"DefaultSantiago", nil, "report-2024-12-31-2024-12-31.csv"},
		{"UTC", time.UTC, "report-2025-01-01-2025-01-01.csv"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := d.Name(at, tt.loc); got != tt.want {
				t.Errorf("Name = %q, want %q", got, tt.want)
			}
		})
	}
}

// wantReason checks that err has the reason want, the code that goes
// with it, and none of secrets in its text.
func wantReason(t *testing.T, err error, want string, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want reason %q", want)
	}
	if got := failure.ReasonOf(err); got != want {
		t.Errorf("reason = %q, want %q: %v", got, want, err)
	}
	var fe *failure.Error
	if !errors.As(err, &fe) {
		t.Errorf("%v is not a *failure.Error", err)
	}
	if got, want := destination.Retryable(err), want == destination.ReasonUnreachable || want == destination.ReasonInterrupted; got != want {
		t.Errorf("Retryable = %v, want %v", got, want)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("the error holds a secret: %v", err)
		}
	}
}

// content is a file's bytes of n, not repeating in short periods, so that
// a part lost or repeated shows.
func content(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// tinyFS mounts a tmpfs of size bytes on dir (a new folder if ""),
// read-only if ro, unmounted at the test's end; a machine where mount is
// refused misses it.
func tinyFS(t *testing.T, dir, size string, ro bool) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	opts := "size=" + size + ",mode=0777"
	if ro {
		opts += ",ro"
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs (as root) to fill or lock a folder: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// names returns the names in dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestFileDestination writes files into local folders.
func TestFileDestination(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := func(t *testing.T, ctx context.Context, dir string) destination.Writer {
		t.Helper()
		d, err := destination.Parse("file://" + dir + "/report-{date}.csv")
		if err != nil {
			t.Fatal(err)
		}
		w, err := d.Open(ctx, d.Name(time.Date(2025, 3, 4, 12, 0, 0, 0, time.UTC), nil))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	body := content(1 << 20)

	t.Run("OK", func(t *testing.T) {
		dir := t.TempDir()
		w := open(t, ctx, dir)
		defer w.Close()
		for i := 0; i < len(body); i += 64 << 10 {
			if _, err := w.Write(body[i : i+64<<10]); err != nil {
				t.Fatal(err)
			}
			for _, n := range names(t, dir) {
				if !strings.HasPrefix(n, ".") {
					t.Fatalf("%s is visible before Commit", n)
				}
			}
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "report-2025-03-04.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(body) {
			t.Errorf("the file holds %d bytes, not the %d written", len(got), len(body))
		}
		if got := names(t, dir); len(got) != 1 {
			t.Errorf("folder = %v, want the file alone", got)
		}
	})

	t.Run("Cancel", func(t *testing.T) {
		dir := t.TempDir()
		cctx, cancel := context.WithCancel(ctx)
		w := open(t, cctx, dir)
		if _, err := w.Write(body[:1000]); err != nil {
			t.Fatal(err)
		}
		cancel()
		_, err := w.Write(body[1000:2000])
		wantReason(t, err, destination.ReasonInterrupted)
		wantReason(t, w.Commit(), destination.ReasonInterrupted)
		if got := names(t, dir); len(got) != 0 {
			t.Errorf("folder = %v, want nothing", got)
		}
	})

	t.Run("Abort", func(t *testing.T) {
		dir := t.TempDir()
		w := open(t, ctx, dir)
		w.Write(body[:1000])
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		if got := names(t, dir); len(got) != 0 {
			t.Errorf("folder = %v, want nothing", got)
		}
	})

	for _, tt := range []struct {
		name   string
		dir    func(t *testing.T) string
		reason string
	}{
		{"ErrNoFolder", func(t *testing.T) string { return filepath.Join(t.TempDir(), "missing") }, destination.ReasonNotFound},
		{"ErrReadOnly", func(t *testing.T) string { return tinyFS(t, "", "64k", true) }, destination.ReasonPermission},
		{"ErrFull", func(t *testing.T) string { return tinyFS(t, "", "64k", false) }, destination.ReasonFull},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			d, err := destination.Parse("file://" + dir + "/r.csv")
			if err != nil {
				t.Fatal(err)
			}
			if tt.reason != destination.ReasonFull {
				wantReason(t, d.Check(ctx), tt.reason)
			}
			w, err := d.Open(ctx, "r.csv")
			if err == nil {
				defer w.Close()
				_, err = w.Write(body)
				if err == nil {
					err = w.Commit()
				}
			}
			wantReason(t, err, tt.reason)
			if _, statErr := os.Stat(dir); statErr == nil {
				if got := names(t, dir); len(got) != 0 {
					t.Errorf("folder = %v, want nothing", got)
				}
			}
		})
	}
}
