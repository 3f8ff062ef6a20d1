package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"
)

// TestScriptsHelp runs every script that the README or a page under docs/
// names with --help, and checks that each answers with its usage at once,
// starting nothing.
func TestScriptsHelp(t *testing.T) {
	t.Parallel()
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, p := range append(docs, "../../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`scripts/([a-z][a-z0-9-]*)\b(\.d)?`).FindAllStringSubmatch(string(b), -1) {
			if m[2] == "" {
				named[m[1]] = true
			}
		}
	}
	if len(named) == 0 {
		t.Fatal("the README names no script")
	}
	names := make([]string, 0, len(named))
	for n := range named {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join("../../scripts", name), "--help")
			// No variable that would make a script skip its help and start work.
			cmd.Env = append(os.Environ(), "BASE=", "TOKEN=")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("scripts/%s --help: %v\n%s", name, err, out)
			}
			usage := regexp.MustCompile(`(?m)^Usage: .*scripts/` + regexp.QuoteMeta(name) + `\b`)
			if !usage.Match(out) {
				t.Errorf("scripts/%s --help prints no usage line:\n%s", name, out)
			}
		})
	}
}
