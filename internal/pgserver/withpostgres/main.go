// Command withpostgres runs a command beside a private PostgreSQL server
// that it starts for it and stops when the command ends: scripts/test runs
// go test under it, so that all the test binaries share one server (named
// to them by $INFORME_TEST_POSTGRES, see package pgtest), each template
// database is made once for them all, and no binary starts a server of its
// own. It exits with the command's status.
//
// Usage: withpostgres CMD [ARG...]
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: withpostgres CMD [ARG...]")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2:]))
}

func run(name string, args []string) int {
	srv, stop, err := pgtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "withpostgres:", err)
		return 1
	}
	defer stop()
	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), pgtest.EnvServer+"="+srv.URL("postgres"))
	// A Ctrl-C at the terminal reaches the command too; a signal sent to
	// this process alone is passed on, and the server is stopped once the
	// command has ended.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "withpostgres:", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-signals:
			_ = cmd.Process.Signal(sig)
		case err := <-done:
			var exit *exec.ExitError
			switch {
			case err == nil:
				return 0
			case errors.As(err, &exit) && exit.ExitCode() > 0:
				return exit.ExitCode()
			default:
				fmt.Fprintln(os.Stderr, "withpostgres:", err)
				return 1
			}
		}
	}
}
