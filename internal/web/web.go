// Package web is the page people use to export without writing URLs: one
// HTML document, its script and style sheet, and the catalogue of datasets
// they read, all embedded in the binary. It renders the document in the
// reader's language, serves the assets under names that carry their
// content's hash (so they may be cached for good), sets the headers that
// keep the page safe to serve, and owns the cookie that carries a signed-in
// token. It knows net/http only; the routes are the API's.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/catalog"
	"github.com/informe/informe/internal/compress"
)

//go:embed static
var static embed.FS

// AssetPrefix is the path under which the assets are served.
const AssetPrefix = "/assets/"

// Site is the page and its assets, ready to serve.
type Site struct {
	// more are the catalogue's datasets that only tokens given a scope
	// beyond the default ones read (the run history, the audit log), by
	// name: the session of a token that may read one carries it, so that
	// the catalogue every page loads stays small.
	more   map[string]json.RawMessage
	page   *template.Template
	assets map[string]asset // by hashed name
	urls   map[string]string
	icon   asset // also served at /favicon.ico
}

type asset struct {
	body  []byte
	ctype string
	coded map[compress.Coding][]byte // body compressed, made once by New
}

// New reads the embedded files, builds the catalogue of datasets and names
// every asset by its content's hash. It fails only if the embedded files or
// the catalogue are broken, which the tests catch.
func New() (*Site, error) {
	sets, err := catalog.Datasets()
	if err != nil {
		return nil, err
	}
	types, err := kindTypes(sets)
	if err != nil {
		return nil, err
	}
	s := &Site{assets: map[string]asset{}, urls: map[string]string{}, more: map[string]json.RawMessage{}}
	var common []packedSet
	for _, d := range packed(compact(sets)) {
		if slices.Contains(auth.Scopes, d.Scope) {
			common = append(common, d)
			continue
		}
		b, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
		s.more[d.Source] = b
	}
	cat, err := json.Marshal(struct {
		Types    map[string]string `json:"types"`
		Datasets []packedSet       `json:"datasets"`
	}{types, common})
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	files := map[string][]byte{"catalog.json": cat}
	for _, name := range []string{"app.js", "words.es.js", "words.en.js", "app.css", "icon.svg"} {
		b, err := static.ReadFile("static/" + name)
		if err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
		if path.Ext(name) == ".js" {
			if bytes.ContainsRune(b, '`') {
				return nil, fmt.Errorf("web: %s has a template literal, whose lines trimScript would change", name)
			}
			b = trimScript(b)
		}
		files[name] = b
	}
	for name, b := range files {
		sum := sha256.Sum256(b)
		ext := path.Ext(name)
		hashed := strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:6]) + ext
		ctype := mime.TypeByExtension(ext)
		if ext == ".js" {
			ctype = "text/javascript; charset=utf-8"
		}
		coded, err := compressed(b)
		if err != nil {
			return nil, fmt.Errorf("web: %s: %w", name, err)
		}
		s.assets[hashed] = asset{body: b, ctype: ctype, coded: coded}
		s.urls[name] = AssetPrefix + hashed
	}
	s.icon = s.assets[strings.TrimPrefix(s.urls["icon.svg"], AssetPrefix)]
	s.page, err = template.ParseFS(static, "static/index.html")
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	return s, nil
}

// Page writes the HTML document in the reader's language (see [Language]).
func (s *Site) Page(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	err := s.page.Execute(&b, s.pageData(Language(r)))
	if err != nil {
		// The template is fixed and its data plain strings: this cannot
		// happen unless the embedded file is broken.
		http.Error(w, "page template: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	SetSecurityHeaders(h)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Vary", "Accept-Language, Cookie, Accept-Encoding")
	h.Set("Content-Language", Language(r))
	body := b.Bytes()
	if c := compress.Negotiate(r.Header.Values("Accept-Encoding")...); c != compress.Identity {
		if coded, err := compressed(body); err == nil {
			body = coded[c]
			h.Set("Content-Encoding", c.String())
		}
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// pageData is what the HTML template fills in: Words are the page's
// words in its language, WordsEs and WordsEn those the script loads when
// the reader switches.
type pageData struct {
	Lang                                string
	Script, Style, Catalog, Icon, Words string
	WordsEs, WordsEn                    string
}

func (s *Site) pageData(lang string) pageData {
	return pageData{
		Lang: lang, Script: s.urls["app.js"], Style: s.urls["app.css"], Catalog: s.urls["catalog.json"],
		Icon: s.urls["icon.svg"], Words: s.urls["words."+lang+".js"],
		WordsEs: s.urls["words.es.js"], WordsEn: s.urls["words.en.js"],
	}
}

// Asset serves the asset with the hashed name, reporting false (and writing
// nothing) if there is none. An asset never changes under its name, so it
// is cached for a year.
func (s *Site) Asset(w http.ResponseWriter, r *http.Request, name string) bool {
	a, ok := s.assets[name]
	if !ok {
		return false
	}
	a.serve(w, r, "public, max-age=31536000, immutable")
	return true
}

// Icon serves the page's icon at /favicon.ico, where browsers look for
// one without being told: an SVG, cached for a day.
func (s *Site) Icon(w http.ResponseWriter, r *http.Request) {
	s.icon.serve(w, r, "public, max-age=86400")
}

// serve writes a, compressed when the request's Accept-Encoding asks for
// a coding informe has made.
func (a asset) serve(w http.ResponseWriter, r *http.Request, cache string) {
	h := w.Header()
	SetSecurityHeaders(h)
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", cache)
	h.Set("Vary", "Accept-Encoding")
	body := a.body
	if c := compress.Negotiate(r.Header.Values("Accept-Encoding")...); a.coded[c] != nil {
		body = a.coded[c]
		h.Set("Content-Encoding", c.String())
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// compressed returns b in every coding informe makes.
func compressed(b []byte) (map[compress.Coding][]byte, error) {
	out := map[compress.Coding][]byte{}
	for _, c := range []compress.Coding{compress.Gzip, compress.Zstd} {
		var buf bytes.Buffer
		zw, err := compress.NewWriter(&buf, c)
		if err != nil {
			return nil, err
		}
		if _, err := zw.Write(b); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		out[c] = buf.Bytes()
	}
	return out, nil
}

// Size returns the bytes of the HTML document (in Spanish) and of every
// asset it loads together, uncompressed: what a first visit downloads
// (the English words only come when the reader switches to English).
func (s *Site) Size() int {
	var b bytes.Buffer
	_ = s.page.Execute(&b, s.pageData("es"))
	n := b.Len()
	english := strings.TrimPrefix(s.urls["words.en.js"], AssetPrefix)
	for name, a := range s.assets {
		if name != english {
			n += len(a.body)
		}
	}
	return n
}

// ContentSecurityPolicy allows the page's own script, style sheet and
// requests only: no inline script or style, no other origin, no framing.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// SetSecurityHeaders sets the headers every response of the page carries.
// Referrer-Policy is no-referrer because URLs may carry tokens.
func SetSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// Languages are the page's languages; the first is the default.
var Languages = []string{"es", "en"}

// LangCookie is the cookie that keeps the language the reader chose.
const LangCookie = "informe_lang"

// Language returns the language to show r's reader: the one they chose
// (the language cookie), else the first of Accept-Language's that the page
// speaks, by quality, else Spanish.
func Language(r *http.Request) string {
	if c, err := r.Cookie(LangCookie); err == nil && isLanguage(c.Value) {
		return c.Value
	}
	best, bestQ := Languages[0], -1.0
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		lang, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if _, err := fmt.Sscanf(v, "%g", &q); err != nil {
				continue
			}
		}
		if isLanguage(lang) && q > bestQ && q > 0 {
			best, bestQ = lang, q
		}
	}
	return best
}

func isLanguage(s string) bool { return slices.Contains(Languages, s) }

// More returns the catalogue's entries, as the page reads them, of those
// of the datasets named (their [catalog.Dataset].Source) that the common
// catalogue leaves out: those read under a scope no token gets by default.
func (s *Site) More(sources []string) []json.RawMessage {
	var out []json.RawMessage
	for _, name := range sources {
		if b, ok := s.more[name]; ok {
			out = append(out, b)
		}
	}
	return out
}

// compact returns sets with the words of a column left out wherever the
// first dataset (the general report) has a column of the same name with
// the same words: the entities repeat most of the report's columns, and
// the page, which fills them in again, stays small.
func compact(sets []catalog.Dataset) []catalog.Dataset {
	if len(sets) == 0 {
		return sets
	}
	first := map[string]catalog.Column{}
	for _, g := range sets[0].Groups {
		for _, c := range g.Columns {
			first[c.Name] = c
		}
	}
	out := make([]catalog.Dataset, len(sets))
	for i, d := range sets {
		out[i] = d
		if i == 0 {
			continue
		}
		out[i].Groups = make([]catalog.Group, len(d.Groups))
		for j, g := range d.Groups {
			out[i].Groups[j] = g
			out[i].Groups[j].Columns = make([]catalog.Column, len(g.Columns))
			for k, c := range g.Columns {
				if f, ok := first[c.Name]; ok && f.Label == c.Label && f.About == c.About {
					c.Label, c.About = catalog.Text{}, catalog.Text{}
				}
				out[i].Groups[j].Columns[k] = c
			}
		}
	}
	return out
}

// trimScript returns the page's script without what a browser does not
// need: each line's indentation, comments on their own line or after a
// statement ("; // "), and empty lines. The script has no template
// literal, so that no string spans lines, and no string holds "; // ".
func trimScript(b []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimLeft(line, " \t")
		if len(line) == 0 || bytes.HasPrefix(line, []byte("//")) {
			continue
		}
		// A comment after a statement, a list item or a brace, outside
		// any string.
		for _, end := range []string{"; // ", ", // ", "{ // "} {
			if i := bytes.Index(line, []byte(end)); i >= 0 && !inString(line[:i]) {
				line = line[:i+1]
			}
		}
		out = append(append(out, line...), '\n')
	}
	return out
}

// inString reports whether a line of script that starts with b is inside
// a string literal ('...' or "...") after b.
func inString(b []byte) bool {
	var quote byte
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		}
	}
	return quote != 0
}

// packedColumn is a column of the catalogue as the page's script reads
// it, an array rather than an object: [name, kind, width, label, about,
// values], each text as [Spanish, English], the trailing empty ones left
// out, the description too when it is the label; its analyst's type is the catalogue's "types" of its kind (see
// [kindTypes]). The column names of every dataset take a third of the
// page's weight as objects' keys.
type packedColumn catalog.Column

func (c packedColumn) MarshalJSON() ([]byte, error) {
	text := func(t catalog.Text) any {
		if t == (catalog.Text{}) {
			return nil
		}
		return [2]string{t.ES, t.EN}
	}
	about := text(c.About)
	if c.About == c.Label {
		about = nil
	}
	a := []any{c.Name, c.Kind, c.Width, text(c.Label), about, c.Values}
	if c.Values == nil {
		a = a[:5]
		for len(a) > 3 && a[len(a)-1] == nil {
			a = a[:len(a)-1]
		}
	}
	return json.Marshal(a)
}

// kindTypes returns the analyst's type of each kind of the columns of
// sets ([catalog.Column].Type), which the page reads once rather than on
// every column; an error if one kind had two types, which the tests catch.
func kindTypes(sets []catalog.Dataset) (map[string]string, error) {
	out := map[string]string{}
	for _, d := range sets {
		for _, g := range d.Groups {
			for _, c := range g.Columns {
				if t, ok := out[c.Kind]; ok && t != c.Type {
					return nil, fmt.Errorf("web: kind %s is both %s and %s: the catalogue cannot give it once", c.Kind, t, c.Type)
				}
				out[c.Kind] = c.Type
			}
		}
	}
	return out, nil
}

// packedGroup is a group whose columns are packed.
type packedGroup struct {
	catalog.Group
	Columns []packedColumn `json:"columns"`
}

// packedSet is a dataset whose groups' columns are packed.
type packedSet struct {
	catalog.Dataset
	Groups []packedGroup `json:"groups"`
}

// packed returns sets with their columns packed (see [packedColumn]).
func packed(sets []catalog.Dataset) []packedSet {
	out := make([]packedSet, len(sets))
	for i, d := range sets {
		out[i].Dataset = d
		for _, g := range d.Groups {
			pg := packedGroup{Group: g}
			for _, c := range g.Columns {
				pg.Columns = append(pg.Columns, packedColumn(c))
			}
			out[i].Groups = append(out[i].Groups, pg)
		}
	}
	return out
}
