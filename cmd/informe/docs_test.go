package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/seed"
)

// docTables returns the rows of the tables of a Markdown page by the
// section they are in (the text of its "## " heading), each row as its
// cells.
func docTables(t *testing.T, path string) map[string][][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string][][]string{}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.TrimSpace(h)
			sections[section] = nil
			continue
		}
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "|---") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		sections[section] = append(sections[section], cells)
	}
	return sections
}

// commands returns every command of informe by its full name ("informe
// token create").
func commands(c *cli.Command, prefix string, into map[string]*cli.Command) {
	name := strings.TrimSpace(prefix + " " + c.Name)
	if len(c.Commands) == 0 {
		into[name] = c
	}
	for _, sub := range c.Commands {
		commands(sub, name, into)
	}
}

// TestFlagsDocumented checks docs/flags.md against the commands: each
// command has its section, each of its flags a row that names the flag's
// environment variable, and no row names a flag the command lacks.
func TestFlagsDocumented(t *testing.T) {
	t.Parallel()
	tables := docTables(t, filepath.Join("..", "..", "docs", "flags.md"))
	all := map[string]*cli.Command{}
	commands(command(), "", all)
	for name, cmd := range all {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			rows, ok := tables["`"+name+"`"]
			if !ok {
				t.Fatalf("docs/flags.md has no section ## `%s`", name)
			}
			documented := map[string][]string{}
			for _, row := range rows {
				if f := regexp.MustCompile("^`--([a-z0-9-]+)`").FindStringSubmatch(row[0]); f != nil {
					documented[f[1]] = row
				}
			}
			flags := map[string]bool{}
			for _, f := range cmd.Flags {
				flag := f.Names()[0]
				if flag == "help" {
					continue
				}
				flags[flag] = true
				row, ok := documented[flag]
				if !ok {
					t.Errorf("--%s is not in docs/flags.md", flag)
					continue
				}
				if df, ok := f.(cli.DocGenerationFlag); ok {
					for _, env := range df.GetEnvVars() {
						if len(row) < 2 || !strings.Contains(row[1], "`"+env+"`") {
							t.Errorf("--%s: docs/flags.md does not name its variable %s", flag, env)
						}
					}
				}
			}
			for flag := range documented {
				if !flags[flag] {
					t.Errorf("docs/flags.md documents --%s, which %s does not have", flag, name)
				}
			}
		})
	}
}

// TestMetricsDocumented checks the metrics table of docs/operations.md
// against the names the metrics package registers.
func TestMetricsDocumented(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "metrics", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`"(informe_[a-z0-9_]+)"`)
	inCode := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range name.FindAllStringSubmatch(string(b), -1) {
			inCode[m[1]] = true
		}
	}
	if len(inCode) == 0 {
		t.Fatal("found no metric names in the metrics package")
	}
	inDoc := map[string]bool{}
	for _, row := range docTables(t, filepath.Join("..", "..", "docs", "operations.md"))["Metrics"] {
		for _, m := range regexp.MustCompile("`(informe_[a-z0-9_]+)").FindAllStringSubmatch(row[0], -1) {
			inDoc[m[1]] = true
		}
	}
	var missing, extra []string
	for n := range inCode {
		if !inDoc[n] {
			missing = append(missing, n)
		}
	}
	for n := range inDoc {
		if !inCode[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("metrics missing from docs/operations.md: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("docs/operations.md lists metrics informe does not have: %v", extra)
	}
}

// TestDocLinks checks that every relative link of the README and of the
// pages under docs/ names a file that exists and, with a #fragment, a
// heading of that file (GitHub's anchors).
func TestDocLinks(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	fence := regexp.MustCompile("(?s)```.*?```")
	heading := regexp.MustCompile(`(?m)^#+ (.*)$`)
	anchors := func(path string) map[string]bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		set := map[string]bool{}
		for _, h := range heading.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
			slug := strings.Map(func(r rune) rune {
				switch {
				case r == ' ':
					return '-'
				case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z':
					return r
				}
				return -1
			}, strings.ToLower(strings.TrimSpace(h[1])))
			set[slug] = true
		}
		return set
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[1], "://") {
				continue
			}
			file, frag, _ := strings.Cut(m[1], "#")
			target := page
			if file != "" {
				target = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, m[1])
				continue
			}
			if frag != "" && strings.HasSuffix(target, ".md") && !anchors(target)[frag] {
				t.Errorf("%s links to %s, which has no heading #%s", page, file, frag)
			}
		}
	}
}

// checkLogFields checks the request lines of a JSON log against the table
// of docs/operations.md: every field a line carries is documented, and
// every field documented as written always is on every line.
func checkLogFields(t *testing.T, log string) {
	t.Helper()
	documented, always := map[string]bool{}, map[string]bool{}
	for _, row := range docTables(t, filepath.Join("..", "..", "docs", "operations.md"))["Logs"] {
		if f := regexp.MustCompile("^`([a-z_]+)`$").FindStringSubmatch(row[0]); f != nil {
			documented[f[1]] = true
			always[f[1]] = len(row) > 1 && row[1] == "always"
		}
	}
	lines := 0
	for _, line := range strings.Split(log, "\n") {
		var fields map[string]any
		if json.Unmarshal([]byte(line), &fields) != nil || fields["msg"] != "request" {
			continue
		}
		lines++
		for k := range fields {
			if k != "time" && k != "level" && k != "msg" && !documented[k] {
				t.Errorf("request log field %q is not in docs/operations.md: %s", k, line)
			}
		}
		for k, a := range always {
			if _, ok := fields[k]; a && !ok {
				t.Errorf("request log line lacks %q, which docs/operations.md says is always there: %s", k, line)
			}
		}
	}
	if lines == 0 {
		t.Error("serve logged no request line")
	}
}

// TestSizingFlagsExist checks that the flags of the sizing table of
// docs/running-at-scale.md are flags of informe serve.
func TestSizingFlagsExist(t *testing.T) {
	t.Parallel()
	serve := map[string]bool{}
	for _, f := range serveCommand().Flags {
		serve[f.Names()[0]] = true
	}
	rows := docTables(t, filepath.Join("..", "..", "docs", "running-at-scale.md"))["Pool and spool sizing"]
	if len(rows) < 2 {
		t.Fatal("docs/running-at-scale.md has no sizing table")
	}
	for _, row := range rows[1:] {
		for _, m := range regexp.MustCompile("`--([a-z0-9-]+)`").FindAllStringSubmatch(row[0], -1) {
			if !serve[m[1]] {
				t.Errorf("docs/running-at-scale.md sizes --%s, which informe serve does not have", m[1])
			}
		}
	}
}

// TestDocExampleKeys checks that every OData key the README and docs/ give
// as an example (GeneralReport('c-p-t'), Users(n), and quoted row_ids
// "c-p-t") addresses a row of the demo's data, seeded with the demo's
// default --contracts and --seed, so that a reader who pastes one into the
// demo gets a row, not a 404.
func TestDocExampleKeys(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewFrom(t, "demo_default", func(ctx context.Context, pool *pgxpool.Pool) error {
		_, err := seed.Seed(ctx, pool, seed.Options{Contracts: defaultContracts, Seed: defaultSeed})
		return err
	})
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	// A quoted row_id: a date ("2024-03-05") starts with four digits.
	rowKey := regexp.MustCompile(`GeneralReport\('(\d+)-(\d+)-(\d+)'\)|"(\d{1,3})-(\d+)-(\d+)"`)
	userKey := regexp.MustCompile(`Users\((\d+)\)`)
	checked := 0
	for _, p := range append(docs, "../../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range rowKey.FindAllStringSubmatch(string(b), -1) {
			c, pr, tk := m[1], m[2], m[3]
			if c == "" {
				c, pr, tk = m[4], m[5], m[6]
			}
			n := pgtest.Int(t, pool, `SELECT count(*) FROM general_report_typed
				WHERE key_contract_id = $1 AND coalesce(key_process_id, 0) = $2 AND coalesce(key_task_id, 0) = $3`, c, pr, tk)
			if n != 1 {
				t.Errorf("%s: %s names %d rows of the demo's report, want 1", filepath.Base(p), m[0], n)
			}
			checked++
		}
		for _, m := range userKey.FindAllStringSubmatch(string(b), -1) {
			if n := pgtest.Int(t, pool, `SELECT count(*) FROM users WHERE id = $1`, m[1]); n != 1 {
				t.Errorf("%s: %s is no user of the demo's data", filepath.Base(p), m[0])
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no example key found in the docs")
	}
}
