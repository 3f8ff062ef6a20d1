package destination_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/internal/destination"
	"github.com/informe/informe/internal/sshtest"
)

func TestSFTPDestination(t *testing.T) {
	ctx := context.Background()
	srv := sshtest.Start(t)
	parse := func(t *testing.T, addr, dir, query string) destination.Destination {
		t.Helper()
		d, err := destination.Parse("sftp://" + srv.User + "@" + addr + dir + "/report-{date}.xlsx?" + query)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	good := "key_file=" + srv.KeyFile + "&known_hosts=" + srv.KnownHosts
	body := content(3<<20 + 5)
	// visible fails the test if dir shows a file that is not hidden, but
	// for those of old.
	visible := func(t *testing.T, dir string, old ...string) {
		t.Helper()
		for _, n := range names(t, dir) {
			if !strings.HasPrefix(n, ".") && !slices.Contains(old, n) {
				t.Fatalf("%s is visible before Commit", n)
			}
		}
	}

	t.Run("OK", func(t *testing.T) {
		dir := filepath.Join(srv.Dir, "ok")
		if err := os.Mkdir(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, 0o777)
		// An older file of that name is replaced whole.
		if err := os.WriteFile(filepath.Join(dir, "r.xlsx"), []byte("old"), 0o666); err != nil {
			t.Fatal(err)
		}
		d := parse(t, srv.Addr, dir, good)
		if err := d.Check(ctx); err != nil {
			t.Fatal(err)
		}
		w, err := d.Open(ctx, "r.xlsx")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for i := 0; i < len(body); i += 300000 {
			if _, err := w.Write(body[i:min(i+300000, len(body))]); err != nil {
				t.Fatal(err)
			}
			visible(t, dir, "r.xlsx")
			if got, _ := os.ReadFile(filepath.Join(dir, "r.xlsx")); string(got) != "old" {
				t.Fatalf("the older file changed before Commit")
			}
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "r.xlsx"))
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

	for _, tt := range []struct {
		name string
		stop func(cancel func(), w destination.Writer) error // what ends the delivery
	}{
		{"Cancel", func(cancel func(), w destination.Writer) error {
			cancel()
			_, err := w.Write([]byte("more"))
			return err
		}},
		{"Abort", func(cancel func(), w destination.Writer) error { return w.Abort() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(srv.Dir, tt.name)
			os.Mkdir(dir, 0o777)
			os.Chmod(dir, 0o777)
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			w, err := parse(t, srv.Addr, dir, good).Open(cctx, "r.xlsx")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(body[:1<<20]); err != nil {
				t.Fatal(err)
			}
			visible(t, dir)
			err = tt.stop(cancel, w)
			if tt.name == "Cancel" {
				wantReason(t, err, destination.ReasonInterrupted)
			} else if err != nil {
				t.Fatal(err)
			}
			if got := names(t, dir); len(got) != 0 {
				t.Errorf("folder = %v, want nothing", got)
			}
		})
	}

	const password = "Wrong-Passw0rd-Of-Nobody"
	t.Setenv("INFORME_TEST_SFTP_PASSWORD", password)
	otherKey := filepath.Join(t.TempDir(), "other_key")
	sshtest.WriteKey(t, otherKey)
	changed := filepath.Join(t.TempDir(), "known_hosts_changed")
	srv.WriteKnownHosts(t, changed)
	empty := filepath.Join(t.TempDir(), "known_hosts_empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(srv.Dir, "read-only")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	os.Chmod(readOnly, 0o555)
	full := filepath.Join(srv.Dir, "full")
	os.Mkdir(full, 0o777)
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}()
	for _, tt := range []struct {
		name, addr, dir, query, reason string
	}{
		{"ErrWrongKey", srv.Addr, srv.Dir, "key_file=" + otherKey + "&known_hosts=" + srv.KnownHosts, destination.ReasonAuth},
		{"ErrWrongPassword", srv.Addr, srv.Dir, "password_env=INFORME_TEST_SFTP_PASSWORD&known_hosts=" + srv.KnownHosts, destination.ReasonAuth},
		{"ErrHostKeyChanged", srv.Addr, srv.Dir, "key_file=" + srv.KeyFile + "&known_hosts=" + changed, destination.ReasonHostKey},
		{"ErrUnknownHost", srv.Addr, srv.Dir, "key_file=" + srv.KeyFile + "&known_hosts=" + empty, destination.ReasonUnknownHost},
		{"ErrPermission", srv.Addr, readOnly, good, destination.ReasonPermission},
		{"ErrNoFolder", srv.Addr, filepath.Join(srv.Dir, "missing"), good, destination.ReasonNotFound},
		{"ErrFull", srv.Addr, full, good, destination.ReasonFull},
		{"ErrUnreachable", closed, srv.Dir, good, destination.ReasonUnreachable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.reason == destination.ReasonFull {
				tinyFS(t, full, "256k", false) // for sshd to fill
			}
			d := parse(t, tt.addr, tt.dir, tt.query)
			if strings.Contains(d.String(), password) {
				t.Errorf("String() holds the password: %s", d)
			}
			if tt.reason != destination.ReasonFull {
				wantReason(t, d.Check(ctx), tt.reason, password)
			}
			w, err := d.Open(ctx, "r.xlsx")
			if err == nil {
				defer w.Close()
				if _, err = w.Write(body); err == nil {
					err = w.Commit()
				}
			}
			wantReason(t, err, tt.reason, password)
			if tt.reason == destination.ReasonFull {
				if got := names(t, full); len(got) != 0 {
					t.Errorf("folder = %v, want nothing", got)
				}
			}
		})
	}
}
