// Package testenv tells tests what to do when the machine lacks something
// a test needs: on a developer's machine the test is skipped, saying what
// is missing; in CI (CI=true) it fails, since CI installs everything the
// tests need and a skip there would hide a broken install step or a
// regression. It also holds [Buffer], where a server or a process the
// test started writes its log while the test reads it.
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Buffer is a bytes.Buffer that a server's goroutines or a process write
// while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

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
