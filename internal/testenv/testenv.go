// Package testenv tells tests what to do when the machine lacks something
// a test needs: on a developer's machine the test is skipped, saying what
// is missing; in CI (CI=true) it fails, since CI installs everything the
// tests need and a skip there would hide a broken install step or a
// regression.
package testenv

import (
	"fmt"
	"os"
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
