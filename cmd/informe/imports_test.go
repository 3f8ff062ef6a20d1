package main

import (
	"go/ast"
	gobuild "go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is informe's module path.
const module = "github.com/informe/informe"

// goFile is one Go file of the module, as the import rules and the doc
// links see it.
type goFile struct {
	dir     string            // the package's folder, relative to the module's root
	path    string            // the file's path, relative to the module's root
	test    bool              // a _test.go file
	imports map[string]string // the name each import is known by in the file -> its path
	file    *ast.File
	fset    *token.FileSet
}

// moduleFiles parses every Go file under root (leaving out testdata,
// node_modules and hidden folders), with its comments.
func moduleFiles(t *testing.T, root string) []*goFile {
	t.Helper()
	fset := token.NewFileSet()
	var files []*goFile
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
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		gf := &goFile{
			dir: filepath.ToSlash(filepath.Dir(rel)), path: filepath.ToSlash(rel),
			test: strings.HasSuffix(name, "_test.go"), imports: map[string]string{}, file: f, fset: fset,
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			known := path.Base(ip)
			if strings.HasPrefix(known, "v") && strings.Count(ip, "/") > 2 { // .../pgx/v5 is pgx
				if _, err := strconv.Atoi(known[1:]); err == nil {
					known = path.Base(path.Dir(ip))
				}
			}
			if im.Name != nil {
				known = im.Name.Name
			}
			gf.imports[known] = ip
		}
		files = append(files, gf)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// importRule is one rule about what informe's packages import.
type importRule struct {
	why string
	// broken reports whether the file of package dir importing ip breaks
	// the rule.
	broken func(dir, ip string) bool
}

// in reports whether dir is one of dirs.
func in(dir string, dirs ...string) bool { return slices.Contains(dirs, dir) }

// modulePkg returns ip's folder in the module, or "" for a package of
// another module.
func modulePkg(ip string) string {
	if ip == module {
		return "."
	}
	rest, ok := strings.CutPrefix(ip, module+"/")
	if !ok {
		return ""
	}
	return rest
}

// testHelpers are the packages that exist for tests, checks and
// benchmarks; informe itself never imports them.
var testHelpers = []string{
	"internal/pgserver/pgtest", "internal/pgserver/withpostgres", "internal/https/httpstest", "internal/testenv",
	"internal/pgfault", "internal/browser", "internal/sshtest", "internal/s3test", "internal/api/apitest",
}

// importRules are the rules docs/architecture.md states about which
// packages may import which. Test files are free.
var importRules = []importRule{
	{
		why: "gin is the HTTP edge's alone: only internal/api imports it",
		broken: func(dir, ip string) bool {
			return ip == "github.com/gin-gonic/gin" && dir != "internal/api"
		},
	},
	{
		why: "the encoders take an io.Writer: export imports neither HTTP nor the database",
		broken: func(dir, ip string) bool {
			return dir == "export" && (ip == "net/http" || strings.HasPrefix(ip, "github.com/jackc/pgx"))
		},
	},
	{
		why: "the OData protocol layer knows neither HTTP nor the database",
		broken: func(dir, ip string) bool {
			return dir == "internal/odata" && (ip == "net/http" || strings.HasPrefix(ip, "github.com/jackc/pgx/v5/pgxpool") ||
				ip == module+"/internal/postgres")
		},
	},
	{
		why: "the read model declares and the database package reads: internal/dataset imports neither internal/postgres nor a pgx pool",
		broken: func(dir, ip string) bool {
			return dir == "internal/dataset" && (ip == module+"/internal/postgres" || strings.HasPrefix(ip, "github.com/jackc/pgx/v5/pgxpool"))
		},
	},
	{
		why: "the leaves (errors, secrets, list fields, sockets, the spool, private servers, the fault proxy) import no package of informe",
		broken: func(dir, ip string) bool {
			return in(dir, "internal/failure", "internal/secret", "internal/httplist", "internal/sockstat",
				"internal/spool", "internal/pgserver", "internal/pgfault", "internal/testenv", "internal/browser",
				"internal/https/httpstest") && modulePkg(ip) != ""
		},
	},
	{
		why: "the test helpers are for tests, checks and benchmarks: informe never imports them",
		broken: func(dir, ip string) bool {
			return in(modulePkg(ip), testHelpers...) && !strings.HasPrefix(dir, "scripts/") &&
				dir != "cmd/informe-bench" && !in(dir, testHelpers...)
		},
	},
	{
		why: "commands are the top: no package imports one",
		broken: func(dir, ip string) bool {
			return strings.HasPrefix(modulePkg(ip), "cmd/")
		},
	},
	{
		why: "the HTTP edge is served by internal/server, and wired by cmd/informe: nothing else imports internal/api but its tests' harness, internal/api/apitest",
		broken: func(dir, ip string) bool {
			return modulePkg(ip) == "internal/api" && !in(dir, "internal/server", "cmd/informe", "internal/api/apitest")
		},
	},
	{
		why: "only the command that serves starts a server: internal/server is imported by cmd/informe alone",
		broken: func(dir, ip string) bool {
			return modulePkg(ip) == "internal/server" && dir != "cmd/informe"
		},
	},
	{
		why: "net/http is the edge's: the API and its tests' harness, the server, HTTPS, the web page, metrics and OpenAPI's statuses, the HTTPS destinations of deliveries and the S3 server of their tests",
		broken: func(dir, ip string) bool {
			return ip == "net/http" && !strings.HasPrefix(dir, "cmd/") && !strings.HasPrefix(dir, "scripts/") &&
				!in(dir, "internal/api", "internal/api/apitest", "internal/server", "internal/https", "internal/web", "metrics", "internal/openapi", "internal/destination", "internal/s3test")
		},
	},
}

// TestImportRules checks every import of informe's non-test Go files
// against the rules docs/architecture.md states.
func TestImportRules(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range importRules {
		if !strings.Contains(string(page), "- "+r.why+"\n") {
			t.Errorf("docs/architecture.md does not state the import rule %q", r.why)
		}
	}
	for _, f := range moduleFiles(t, filepath.Join("..", "..")) {
		if f.test {
			continue
		}
		for _, ip := range f.imports {
			for _, r := range importRules {
				if r.broken(f.dir, ip) {
					t.Errorf("%s imports %s: %s", f.path, ip, r.why)
				}
			}
		}
	}
}

// docLink is a doc link's text in a comment: [Name], [Name.Method],
// [pkg], [pkg.Name], [pkg.Name.Method], maybe starred, between spaces or
// punctuation, and not a link definition ("[text]: URL").
var docLink = regexp.MustCompile(`(?:^|[\s(,;])\[(\*?)([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,2})\]([^:(\[]|$)`)

// declIndex holds the names declared by packages, by import path: "Name",
// "Type.Method" and "Type.Field", read from their non-test files.
type declIndex struct {
	byPath map[string]map[string]bool
}

// decls returns what the package at ip declares, nil if its source cannot
// be found (a module's other than the standard library's and informe's).
func (x *declIndex) decls(t *testing.T, ip string) map[string]bool {
	if d, ok := x.byPath[ip]; ok {
		return d
	}
	var dir string
	if rel := modulePkg(ip); rel != "" {
		dir = filepath.Join("..", "..", rel)
	} else if p, err := gobuild.Default.Import(ip, ".", gobuild.FindOnly); err == nil && p.Goroot {
		dir = p.Dir
	}
	var out map[string]bool
	if dir != "" {
		out = declared(t, dir)
	}
	x.byPath[ip] = out
	return out
}

// declared parses the non-test Go files of dir and returns what they
// declare: "Name", "Type.Method", "Type.Field".
func declared(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parsing %s: %v", dir, err)
	}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, decl := range f.Decls {
				addDecl(out, decl)
			}
		}
	}
	return out
}

func addDecl(out map[string]bool, decl ast.Decl) {
	switch decl := decl.(type) {
	case *ast.FuncDecl:
		if decl.Recv == nil {
			out[decl.Name.Name] = true
			return
		}
		recv := decl.Recv.List[0].Type
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		if ix, ok := recv.(*ast.IndexExpr); ok { // a generic type's method
			recv = ix.X
		}
		if ix, ok := recv.(*ast.IndexListExpr); ok {
			recv = ix.X
		}
		if id, ok := recv.(*ast.Ident); ok {
			out[id.Name+"."+decl.Name.Name] = true
		}
	case *ast.GenDecl:
		for _, spec := range decl.Specs {
			switch spec := spec.(type) {
			case *ast.TypeSpec:
				out[spec.Name.Name] = true
				var fields *ast.FieldList
				switch typ := spec.Type.(type) {
				case *ast.StructType:
					fields = typ.Fields
				case *ast.InterfaceType:
					fields = typ.Methods
				}
				if fields == nil {
					continue
				}
				for _, field := range fields.List {
					for _, n := range field.Names {
						out[spec.Name.Name+"."+n.Name] = true
					}
					if len(field.Names) == 0 { // embedded: named for its type
						typ := field.Type
						if star, ok := typ.(*ast.StarExpr); ok {
							typ = star.X
						}
						switch typ := typ.(type) {
						case *ast.SelectorExpr:
							out[spec.Name.Name+"."+typ.Sel.Name] = true
						case *ast.Ident:
							out[spec.Name.Name+"."+typ.Name] = true
						}
					}
				}
			case *ast.ValueSpec:
				for _, n := range spec.Names {
					out[n.Name] = true
				}
			}
		}
	}
}

// predeclared are Go's predeclared identifiers, which doc links may name.
var predeclared = strings.Fields(`any bool byte comparable complex64 complex128 error float32 float64
	int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr
	true false iota nil append cap clear close complex copy delete imag len make max min new panic print println real recover`)

// TestDocCommentLinks checks that every doc link in a doc comment of informe's
// non-test Go files resolves: [Name] and [Type.Method] to a declaration
// of the package (methods and fields of embedded types are not followed:
// write the embedded type's own link), [pkg.Name] to a declaration of
// the package one of the package's files imports as pkg (informe's and the standard
// library's are checked; other modules' are taken on trust), [pkg] to an
// import. A link that does not resolve is shown as plain text with its
// brackets: a name that was renamed and a doc that was not.
func TestDocCommentLinks(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	idx := &declIndex{byPath: map[string]map[string]bool{}}
	files := moduleFiles(t, root)
	// A package's doc links may name any package one of its files
	// imports, as go/doc resolves them.
	pkgImports := map[string]map[string]string{}
	for _, f := range files {
		if f.test {
			continue
		}
		if pkgImports[f.dir] == nil {
			pkgImports[f.dir] = map[string]string{}
		}
		for name, ip := range f.imports {
			pkgImports[f.dir][name] = ip
		}
	}
	var broken []string
	for _, f := range files {
		if f.test {
			continue
		}
		imports := pkgImports[f.dir]
		own := idx.decls(t, path.Join(module, f.dir))
		if f.dir == "." {
			own = idx.decls(t, module)
		}
		resolves := func(name string) bool {
			if own[name] || slices.Contains(predeclared, name) {
				return true
			}
			first, rest, dotted := strings.Cut(name, ".")
			ip, imported := imports[first]
			if !imported {
				return false
			}
			if !dotted {
				return true
			}
			d := idx.decls(t, ip)
			return d == nil || d[rest]
		}
		for _, cg := range docComments(f.file) {
			text := cg.Text()
			for _, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "  ") { // a code block
					continue
				}
				for _, m := range docLink.FindAllStringSubmatch(line, -1) {
					if !resolves(m[2]) {
						pos := f.fset.Position(cg.Pos())
						broken = append(broken, f.path+":"+strconv.Itoa(pos.Line)+": ["+m[1]+m[2]+"]")
					}
				}
			}
		}
	}
	sort.Strings(broken)
	for _, b := range broken {
		t.Errorf("%s does not resolve: a doc link to a name that is not there", b)
	}
}

// docComments returns f's doc comments: the package's, its declarations',
// their specs' and their fields' and methods'.
func docComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(cg *ast.CommentGroup) {
		if cg != nil {
			out = append(out, cg)
		}
	}
	add(f.Doc)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			add(n.Doc)
		case *ast.GenDecl:
			add(n.Doc)
		case *ast.TypeSpec:
			add(n.Doc)
		case *ast.ValueSpec:
			add(n.Doc)
		case *ast.Field:
			add(n.Doc)
		}
		return true
	})
	return out
}

// sqlStrong are signs that a string literal is SQL text by themselves;
// sqlWords count when two of them meet in one literal, or when one is the
// whole literal (a fragment such as " AND ").
var (
	sqlStrong = regexp.MustCompile(`(?i)\bselect\s[\s\S]*\bfrom\b|\binsert\s+into\b|\bdelete\s+from\b|\bupdate\s+\w+\s+set\b|\bcreate\s+(table|index|view|database|function|or\s+replace)\b|\balter\s+(table|database|role|system)\b|\bjson_agg\(|\bcoalesce\(|\bcount\(\*\)|::(text|bigint|int|integer|numeric|date|timestamp|timestamptz|text\[\])\b`)
	sqlWords  = regexp.MustCompile(`\b(SELECT|FROM|WHERE|JOIN|ORDER BY|GROUP BY|IS NULL|IS NOT NULL|NOT NULL|AND|OR|NOT|LIMIT|OFFSET|EXISTS|ARRAY|CASE|WHEN|THEN|ELSE|END|BETWEEN|DISTINCT|ASC|DESC|NULLS FIRST|NULLS LAST|IN)\b`)
)

// isSQL reports whether s, a string literal's value, is SQL text or a
// fragment of it.
func isSQL(s string) bool {
	if sqlStrong.MatchString(s) {
		return true
	}
	words := map[string]bool{}
	for _, w := range sqlWords.FindAllString(s, -1) {
		words[w] = true
	}
	if len(words) >= 2 {
		return true
	}
	t := strings.Trim(s, " (),")
	return len(words) == 1 && sqlWords.FindString(t) == t
}

// sqlHolders are the packages that hold SQL text, and why: one. A
// package that gets SQL, or one listed that no longer holds any, fails
// the test, so the list says where SQL is.
var sqlHolders = map[string]string{
	"internal/postgres": "PostgreSQL's own package: the pool, snapshots, counts' check, the read path (every door's typed conditions, orders and positions written over the typed views; pages, counts, parts, key tables, $expand's related rows, the report's maintained counts), and the statements of the stores (tokens, audit records, persons, schedules), the seed, the tests' small data set, the benchmark and the private servers' databases",
}

// TestSQLHome finds the string literals of informe's non-test Go files
// that are SQL text, and checks that they are in the packages
// sqlHolders lists, each of which holds some.
func TestSQLHome(t *testing.T) {
	t.Parallel()
	held := map[string]string{}
	for _, f := range moduleFiles(t, filepath.Join("..", "..")) {
		if f.test {
			continue
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && isSQL(s) && held[f.dir] == "" {
				held[f.dir] = f.fset.Position(lit.Pos()).String() + ": " + strconv.Quote(s)
			}
			return true
		})
	}
	for dir, where := range held {
		if _, ok := sqlHolders[dir]; !ok {
			t.Errorf("package %s holds SQL text (%.120s): SQL is written by the packages of sqlHolders only", dir, where)
		}
	}
	for dir := range sqlHolders {
		if held[dir] == "" {
			t.Errorf("package %s holds no SQL text any more: take it out of sqlHolders", dir)
		}
	}
}
