package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// goPackage is what the architecture test knows of a package of the module.
type goPackage struct {
	name  string
	decls map[string]bool // "Name", "Type.Method", "Type.Field"
}

// modulePackages parses every directory under root that holds Go files
// (leaving out testdata and hidden ones) and returns them by their path
// relative to root, with the last elements of every path the module
// imports.
func modulePackages(t *testing.T, root string) (map[string]*goPackage, map[string]bool) {
	t.Helper()
	pkgs, imports := map[string]*goPackage{}, map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			imports[path.Base(ip)] = true
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		pkg := pkgs[rel]
		if pkg == nil {
			pkg = &goPackage{decls: map[string]bool{}}
			pkgs[rel] = pkg
		}
		if strings.HasSuffix(name, "_test.go") {
			return nil
		}
		pkg.name = f.Name.Name
		for _, decl := range f.Decls {
			addDecl(pkg.decls, decl)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs, imports
}

// TestArchitectureDocumented keeps docs/architecture.md true: its package
// table has a row for every package of the module and none for a package
// that is gone; every `pkg.Name` (or `pkg.Type.Method`, `pkg.Type.Field`)
// it writes is declared in that package of informe, or pkg is a package
// informe imports; and every path it names (`internal/api/server.go`, and
// a row's `file.go`) exists.
func TestArchitectureDocumented(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	const page = "docs/architecture.md"
	pkgs, imports := modulePackages(t, root)
	byName := map[string]*goPackage{}
	for _, p := range pkgs {
		if p.name != "" && p.name != "main" {
			byName[p.name] = p
		}
	}

	rows := docTables(t, filepath.Join(root, page))["Packages"]
	if len(rows) < 2 {
		t.Fatalf("%s has no package table under ## Packages", page)
	}
	cell := regexp.MustCompile("^`([a-z0-9/._-]+)`$")
	goFile := regexp.MustCompile("`([a-z0-9_]+\\.go)`")
	listed := map[string]bool{}
	for _, row := range rows[1:] {
		m := cell.FindStringSubmatch(row[0])
		if m == nil {
			t.Errorf("%s: a row's first cell is not one package path in backticks: %q", page, row[0])
			continue
		}
		dir := m[1]
		listed[dir] = true
		if pkgs[dir] == nil {
			t.Errorf("%s lists %s, which is not a package of informe", page, dir)
			continue
		}
		for _, f := range goFile.FindAllStringSubmatch(strings.Join(row[1:], " "), -1) {
			if _, err := os.Stat(filepath.Join(root, dir, f[1])); err != nil {
				t.Errorf("%s: the row of %s names %s, which %s does not have", page, dir, f[1], dir)
			}
		}
	}
	var missing []string
	for dir := range pkgs {
		if !listed[dir] {
			missing = append(missing, dir)
		}
	}
	sort.Strings(missing)
	for _, dir := range missing {
		t.Errorf("%s has no row for the package %s: say what it owns", page, dir)
	}

	b, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	ident := regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)?)$`)
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(string(b), -1) {
		text := m[1]
		if id := ident.FindStringSubmatch(text); id != nil {
			p := byName[id[1]]
			switch {
			case p != nil && !p.decls[id[2]]:
				t.Errorf("%s names `%s`, which package %s does not declare", page, text, id[1])
			case p == nil && !imports[id[1]]:
				t.Errorf("%s names `%s`, but informe has no package %s and imports none", page, text, id[1])
			}
			continue
		}
		// A path under one of the module's top folders must exist.
		first, _, isPath := strings.Cut(text, "/")
		if fi, err := os.Stat(filepath.Join(root, first)); isPath && first != "" && err == nil && fi.IsDir() {
			if _, err := os.Stat(filepath.Join(root, text)); err != nil {
				t.Errorf("%s names %s, which does not exist", page, text)
			}
		}
	}
}
