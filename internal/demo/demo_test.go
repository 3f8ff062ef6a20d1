package demo

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestStableToken(t *testing.T) {
	ctx := context.Background()
	tokens := auth.NewStore(pgtest.New(t))
	path := filepath.Join(t.TempDir(), tokenFile)
	mode := func() os.FileMode {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}

	first, reused, err := stableToken(ctx, tokens, path)
	if err != nil {
		t.Fatal(err)
	}
	if reused {
		t.Error("first start: reused = true, want a new token")
	}
	if got, want := mode(), os.FileMode(0o600); got != want {
		t.Errorf("token file mode = %v, want %v", got, want)
	}
	if b, _ := os.ReadFile(path); strings.TrimSpace(string(b)) != first {
		t.Errorf("token file holds %q, want the token", b)
	}
	if p, err := tokens.Authenticate(ctx, first); err != nil || p.Name != "demo" || !p.Allows(dataset.ReportRead) || !p.Allows(dataset.UsersRead) {
		t.Errorf("the token authenticates as %+v, %v: want demo with every scope", p, err)
	}

	t.Run("SameOnRestart", func(t *testing.T) {
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		got, reused, err := stableToken(ctx, tokens, path)
		if err != nil {
			t.Fatal(err)
		}
		if got != first || !reused {
			t.Errorf("restart: token %q (reused %v), want %q reused", got, reused, first)
		}
		if got, want := mode(), os.FileMode(0o600); got != want {
			t.Errorf("token file mode = %v, want %v again", got, want)
		}
	})

	t.Run("NewWhenRevoked", func(t *testing.T) {
		if err := tokens.Revoke(ctx, "demo"); err != nil {
			t.Fatal(err)
		}
		got, reused, err := stableToken(ctx, tokens, path)
		if err != nil {
			t.Fatal(err)
		}
		if got == first || reused {
			t.Errorf("after revoking: token %q (reused %v), want a new one", got, reused)
		}
		if _, err := tokens.Authenticate(ctx, got); err != nil {
			t.Errorf("the new token does not authenticate: %v", err)
		}
		if b, _ := os.ReadFile(path); strings.TrimSpace(string(b)) != got {
			t.Errorf("token file holds %q, want the new token", b)
		}
		first = got
	})

	t.Run("NewWhenFileGarbled", func(t *testing.T) {
		if err := os.WriteFile(path, []byte("not a token\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		got, reused, err := stableToken(ctx, tokens, path)
		if err != nil {
			t.Fatal(err)
		}
		if got == first || reused {
			t.Errorf("garbled file: token %q (reused %v), want a new one", got, reused)
		}
		if _, err := tokens.Authenticate(ctx, first); err == nil {
			t.Error("the replaced demo token still authenticates")
		}
	})

	t.Run("OtherTokenInFile", func(t *testing.T) {
		other, err := tokens.Create(ctx, "finanzas", nil, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(other+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		got, reused, err := stableToken(ctx, tokens, path)
		if err != nil {
			t.Fatal(err)
		}
		if got == other || reused {
			t.Errorf("a token not named demo was reused")
		}
		if _, err := tokens.Authenticate(ctx, other); err != nil {
			t.Errorf("the other token was touched: %v", err)
		}
	})
}

func TestCheckFree(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	for _, tt := range []struct {
		name, addr, opsAddr, wantErr string
	}{
		{"OK", "127.0.0.1:0", "127.0.0.1:0", ""},
		{"OKNoOps", "127.0.0.1:0", "", ""},
		{"OKNeither", "", "", ""},
		{"ErrAPITaken", taken, "", "the API address " + taken + " is already in use (another informe demo?): stop what uses it, or choose another with --addr"},
		{"ErrOpsTaken", "127.0.0.1:0", taken, "the operations (metrics, health) address " + taken + " is already in use"},
		{"ErrSame", "127.0.0.1:4321", "127.0.0.1:4321", "--addr and --ops-addr are both 127.0.0.1:4321"},
		{"ErrBadAddress", "nowhere:http", "", "cannot listen on the API address nowhere:http (--addr)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := checkFree(tt.addr, tt.opsAddr)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestExamples(t *testing.T) {
	var b bytes.Buffer
	examples{
		base: "http://127.0.0.1:8080", opsAddr: "127.0.0.1:9090",
		token: "informe_TOKEN", tokenPath: "/data/informe-demo-token", reused: true,
		dbURL: "postgres://informe:pw@127.0.0.1:5432/informe", rut: "12.345.678-5",
		informe: "/src/informe/bin/informe",
	}.write(&b)
	out := b.String()
	for _, want := range []string{
		"informe demo is serving http://127.0.0.1:8080\n",
		"  token:     informe_TOKEN\n",
		"  web page:  http://127.0.0.1:8080/ (sign in with the token)\n",
		"(the same as last time: kept in /data/informe-demo-token)",
		"  metrics:   http://127.0.0.1:9090/metrics\n",
		"curl -H 'Authorization: Bearer informe_TOKEN' 'http://127.0.0.1:8080/users'\n",
		"'http://127.0.0.1:8080/api/general-report?format=ndjson&rut=12.345.678-5'",
		"'http://127.0.0.1:8080/api/general-report/export?format=csv&columns=" + exportColumns + "' -o general-report.csv\n",
		"# Excel and Power BI (From Web with this URL, or From OData Feed with http://127.0.0.1:8080/odata/):\n",
		"# no token in the URL; pick the Basic credential, user name token, the token as the password.\n",
		"curl -u 'token:informe_TOKEN' 'http://127.0.0.1:8080/api/general-report/export?format=csv&columns=" + exportColumns + "' -o general-report.csv\n",
		"# Google Sheets IMPORTDATA, which cannot send a credential: the token in the URL\n",
		"curl 'http://127.0.0.1:8080/api/general-report/export?format=csv&columns=" + exportColumns + "&access_token=informe_TOKEN'\n",
		"DATABASE_URL='postgres://informe:pw@127.0.0.1:5432/informe' /src/informe/bin/informe export --columns " + exportColumns + " --output general-report.xlsx\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("examples lack %q:\n%s", want, out)
		}
	}

	b.Reset()
	examples{base: "http://127.0.0.1:8080", token: "informe_TOKEN", tokenPath: "/data/informe-demo-token"}.write(&b)
	if strings.Contains(b.String(), "metrics:") {
		t.Errorf("examples without an operations address show a metrics URL:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "(new; kept in /data/informe-demo-token") {
		t.Errorf("a new token is not said to be new:\n%s", b.String())
	}
}
