package main

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/server"
	"github.com/informe/informe/internal/spool"
)

// TestServingFlagsFillConfig checks that every serving flag lands in its
// field of server.Config (or of the pool's options), from the command
// line and from its environment variable.
func TestServingFlagsFillConfig(t *testing.T) {
	t.Setenv("INFORME_SHUTDOWN_DELAY", "5s")
	s := &serving{}
	cmd := &cli.Command{
		Name:   "serve",
		Flags:  slices.Concat(s.listenFlags(":8080", ":9090"), []cli.Flag{logFormatFlag(&s.LogFormat, "json")}, s.flags(), tlsFlags(&s.TLS)),
		Action: func(context.Context, *cli.Command) error { return nil },
	}
	err := cmd.Run(context.Background(), []string{"serve", "--addr", "a:1", "--ops-addr", "o:2", "--log-format", "text",
		"--report-counts", "view", "--pool-size", "3", "--acquire-timeout", "1s", "--pg-cancel", "close",
		"--statement-timeout", "2s", "--request-timeout", "3s", "--max-exports", "5", "--export-queue", "6",
		"--export-wait", "4s", "--export-parts", "7", "--shutdown-timeout", "6s", "--ready-when-busy=false",
		"--spool-memory", "8", "--spool-disk", "9", "--spool-disk-total", "10", "--spool-dir", "/d", "--stall-timeout", "7s",
		"--tls-cert", "c", "--tls-key", "k", "--acme-domain", "x", "--acme-domain", "y", "--acme-cache", "ac",
		"--acme-directory", "ad", "--acme-email", "ae", "--http-addr", "h:3", "--hsts-max-age", "8s"})
	if err != nil {
		t.Fatal(err)
	}
	want := server.Config{
		Addr: "a:1", OpsAddr: "o:2", LogFormat: "text", ReportCounts: "view",
		Limits: api.Limits{AcquireTimeout: time.Second, StatementTimeout: 2 * time.Second, RequestTimeout: 3 * time.Second,
			Exports: 5, ExportQueue: 6, ExportWait: 4 * time.Second, ExportParts: 7},
		ShutdownDelay: 5 * time.Second, ShutdownTimeout: 6 * time.Second, ReadyWhenBusy: false,
		Spool:          spool.Limits{Memory: 8, Disk: 9, Dir: "/d", NoProgress: 7 * time.Second},
		SpoolDiskTotal: 10,
		TLS: server.TLS{CertFile: "c", KeyFile: "k", ACMEDomains: []string{"x", "y"}, ACMECache: "ac",
			ACMEDirectory: "ad", ACMEEmail: "ae", HTTPAddr: "h:3", HSTSMaxAge: 8 * time.Second},
	}
	if !reflect.DeepEqual(s.Config, want) {
		t.Errorf("server.Config =\n%+v\nwant\n%+v", s.Config, want)
	}
	if s.poolSize != 3 || s.pgCancel != "close" {
		t.Errorf("pool options = %d %q, want 3 close", s.poolSize, s.pgCancel)
	}
}
