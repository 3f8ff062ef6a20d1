package destination

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFile(t *testing.T) {
	t.Parallel()
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	t.Run("CommitNew", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.csv")
		f, err := CreateFile(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Abort()
		if _, err := f.WriteString("new"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("target exists before Commit: %v", err)
		}
		if name := filepath.Base(f.Name()); !strings.HasPrefix(name, ".out.csv.") || !strings.HasSuffix(name, ".tmp") {
			t.Errorf("temporary file %q: want a hidden .out.csv.*.tmp", name)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		f.Abort() // after Commit: nothing
		if got, want := read(path), "new"; got != want {
			t.Errorf("content = %q, want %q", got, want)
		}
		if got := folder(t, dir); len(got) != 1 {
			t.Errorf("files = %v, want only out.csv", got)
		}
	})

	t.Run("CommitKeepsMode", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.csv")
		if err := os.WriteFile(path, []byte("old"), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o640); err != nil {
			t.Fatal(err)
		}
		f, err := CreateFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("new")
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o640); got != want {
			t.Errorf("mode = %v, want %v", got, want)
		}
		if got, want := read(path), "new"; got != want {
			t.Errorf("content = %q, want %q", got, want)
		}
	})

	t.Run("AbortLeavesTarget", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.csv")
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := CreateFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("half of the new")
		f.Abort()
		f.Abort()
		if got, want := read(path), "old"; got != want {
			t.Errorf("content = %q, want %q", got, want)
		}
		if got := folder(t, dir); len(got) != 1 {
			t.Errorf("files = %v, want only out.csv", got)
		}
		if err := f.Commit(); err == nil {
			t.Error("Commit after Abort succeeded")
		}
	})
}

// folder returns the names in dir, sorted.
func folder(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
