package demo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SelfCommand returns how a shell runs this binary, for [Options].Informe:
// "informe" when PATH finds this very binary, "go run ./cmd/informe" under
// go run (whose binary is deleted when it exits), and otherwise the
// binary's absolute path, quoted for the shell if need be, which works
// from any folder.
func SelfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "informe"
	}
	if p, err := exec.LookPath("informe"); err == nil && sameFile(p, exe) {
		return "informe"
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/informe"
	}
	if strings.ContainsAny(exe, " '\"$\\`!*?[]#~;&|<>(){}") {
		return "'" + strings.ReplaceAll(exe, "'", `'\''`) + "'"
	}
	return exe
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// DefaultDataDir is where the demo keeps its PostgreSQL unless told
// otherwise: under the user's home, or, for root (whose home the postgres
// user cannot enter), under /var/lib/informe.
func DefaultDataDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/informe/demo"
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "informe", "demo")
	}
	return filepath.Join(os.TempDir(), "informe-demo")
}
