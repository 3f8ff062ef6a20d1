// Package testenv tells tests what to do when the machine lacks something
// a test needs: on a developer's machine the test is skipped, saying what
// is missing; in CI (CI=true) it fails, since CI installs everything the
// tests need and a skip there would hide a broken install step or a
// regression.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// CI reports whether the tests run in CI, where the environment variable
// CI is "true".
func CI() bool { return os.Getenv("CI") == "true" }

// Missing ends tb because the machine lacks what the message, formatted
// from format and args, names: a skip for a developer, a failure in CI.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		tb.Fatalf("%s (CI=true: a missing dependency is a failure, not a skip)", msg)
	}
	tb.Skip(msg)
}

// NodeModule returns the path of file in the npm packages that
// scripts/ensure-node-tools installs ($INFORME_NODE_MODULES, else its
// default folder), reporting false when it is not there. Under CI=true a
// missing package fails the test.
func NodeModule(tb testing.TB, file string) (string, bool) {
	tb.Helper()
	dir := os.Getenv("INFORME_NODE_MODULES")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		dir = filepath.Join(cache, "informe-node", "node_modules")
	}
	path := filepath.Join(dir, file)
	if _, err := os.Stat(path); err != nil {
		if CI() {
			tb.Fatalf("%s is not installed (scripts/ensure-node-tools installs it): %v", file, err)
		}
		tb.Logf("%s is not installed (scripts/ensure-node-tools installs it): its checks are skipped", file)
		return "", false
	}
	return path, true
}
