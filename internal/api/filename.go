package api

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	_ "time/tzdata" // America/Santiago, for the page's file names, on any machine
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/catalog"
	"github.com/informe/informe/internal/dataset"
)

// fileFilters are the report's filters that may name a file, in order of
// precedence, each with the word that introduces its value.
var fileFilters = []struct{ param, word string }{
	{"contract_id", "contract"},
	{"code_contract", "code"},
	{"client_id", "client"},
	{"rut", "rut"},
}

// fileName names an attachment for what it holds: base (the dataset, and
// its page), the main filter of values (the first of [fileFilters]
// given), and the date it was made, in the server's time zone; e.g.
// "general-report-client-1-2026-11-24". The values have been validated by
// the handler before.
func fileName(base string, values url.Values, now time.Time) string {
	return nameFile(base, func(w string) string { return w }, values, now)
}

// santiago is the time zone of the web page's readers, in which the files
// it asks for are dated.
var santiago = func() *time.Location {
	loc, err := time.LoadLocation("America/Santiago")
	if err != nil {
		panic(err) // time/tzdata is embedded
	}
	return loc
}()

// pageFileName is [fileName] for the web page's own requests: the words in
// the page's language lang (see [catalog.Dataset].File and
// [catalog.FileWords]), "informe-general-cliente-1-2026-11-24" in
// Spanish, and the date the day it is in America/Santiago, whatever the
// server's time zone. path is the request's, which names the dataset.
func pageFileName(path, base string, values url.Values, now time.Time, lang string) string {
	in := func(t catalog.Text) string {
		if lang == "en" {
			return t.EN
		}
		return t.ES
	}
	if d, ok := catalog.ForPath(path); ok {
		if rest, ok := strings.CutPrefix(base, d.Source); ok {
			base = in(d.File) + rest
		}
	}
	word := func(w string) string {
		if t, ok := catalog.FileWords[w]; ok {
			return in(t)
		}
		return w
	}
	if page, n, ok := strings.Cut(base, "-page-"); ok {
		base = page + "-" + word("page") + "-" + n
	}
	return nameFile(base, word, values, now.In(santiago))
}

// nameFile is base, the main filter of values introduced by its word as
// word gives it, and now's date.
func nameFile(base string, word func(string) string, values url.Values, now time.Time) string {
	parts := []string{base}
	for _, f := range fileFilters {
		if v := values.Get(f.param); v != "" {
			if utf8.RuneCountInString(v) > 40 {
				v = string([]rune(v)[:40])
			}
			parts = append(parts, word(f.word), v)
			break
		}
	}
	return strings.Join(append(parts, now.Format("2006-01-02")), "-")
}

// contentDisposition is the Content-Disposition of an attachment named
// name: filename= with an ASCII-only rendering (every other character a
// "_") for old clients, and filename*= with the name in UTF-8 (RFC 6266,
// RFC 8187) for the rest. Characters no file name should hold (path
// separators, quotes, controls) are "_" in both.
func contentDisposition(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`/\"'*:<>?|%;`, r) || unicode.IsSpace(r) {
			return '_'
		}
		return r
	}, name)
	ascii := strings.Map(func(r rune) rune {
		if r > 0x7e {
			return '_'
		}
		return r
	}, name)
	return fmt.Sprintf(`attachment; filename="%s"; filename*=UTF-8''%s`, ascii, extValue(name))
}

// extValue percent-encodes s as RFC 8187's value-chars: every byte but
// attr-char.
func extValue(s string) string {
	const attrChar = "!#$&+-.^_`|~"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)) || strings.IndexByte(attrChar, c) >= 0) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// labelled returns cols with the names of the header row that out asks
// for: with header=labels, in CSV and XLSX, each column's label in the
// chosen language (see catalog.Column's Label); otherwise cols. Only the
// header changes: JSON keys stay the API's names.
func labelled(c *gin.Context, cols []dataset.Column, out output) []dataset.Column {
	if out.labels == "" || (out.format != export.CSV && out.format != export.XLSX) {
		return cols
	}
	d, ok := catalog.ForPath(c.Request.URL.Path)
	if !ok {
		return cols
	}
	return dataset.Named(d.Source).Labelled(cols, out.labels)
}
