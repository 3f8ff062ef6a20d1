package compress

import (
	"strings"

	"github.com/informe/informe/internal/httplist"
)

// Negotiate chooses the coding of a response from the request's
// Accept-Encoding field lines, following RFC 9110 section 12.5.3. Pass
// every line (http.Header.Values): they make one comma-separated list.
//
//   - Each element is a coding with an optional weight, "gzip;q=0.8". q is
//     a quality from 0 to 1 with at most three decimals (default 1); q=0
//     means "not acceptable". Codings are matched case-insensitively;
//     x-gzip counts as gzip.
//   - "*" stands for every coding the request does not name, identity
//     included; "*;q=0" thus excludes identity unless identity is named.
//   - Identity, when neither named nor covered by "*", is acceptable but
//     chosen only when no other coding is.
//   - The acceptable coding with the highest quality wins. At equal
//     quality the server prefers, in order: zstd named, gzip named,
//     identity named, then gzip, zstd and identity through "*", and last
//     identity by default. zstd comes first where named because it is
//     smaller and faster both to produce and to decode; through "*" alone
//     gzip comes first because every client that sends "*" decodes it.
//
// A request with no Accept-Encoding field gets [Identity]: RFC 9110 lets a
// server pick any coding then, but clients that send none (curl without
// --compressed, simple scripts) rarely decode any. So does an empty field,
// which asks for no coding. When the field excludes every coding, identity
// included, Negotiate still returns Identity: a 406 for a request nobody
// sends would help no one.
//
// Negotiate is lenient, as clients send odd things: an element that is not
// a coding with well-formed parameters (a bad q value, say) is skipped.
func Negotiate(fields ...string) Coding {
	// q[c] is the quality of coding c in thousandths where the request
	// names it, -1 where it does not; star is "*"'s.
	q := [...]int{Identity: -1, Gzip: -1, Zstd: -1}
	star := -1
	for _, field := range fields {
		for elem := range strings.SplitSeq(field, ",") {
			name, weight, ok := parseElement(elem)
			if !ok {
				continue
			}
			// A coding named twice counts at its highest quality.
			switch {
			case name == "*":
				star = max(star, weight)
			case strings.EqualFold(name, "gzip"), strings.EqualFold(name, "x-gzip"):
				q[Gzip] = max(q[Gzip], weight)
			case strings.EqualFold(name, "zstd"):
				q[Zstd] = max(q[Zstd], weight)
			case strings.EqualFold(name, "identity"):
				q[Identity] = max(q[Identity], weight)
			}
		}
	}
	// Candidates in order of preference at equal quality; the first with
	// the highest quality wins.
	type candidate struct {
		c Coding
		q int
	}
	var cands [6]candidate
	n := 0
	add := func(c Coding, q int) {
		cands[n] = candidate{c, q}
		n++
	}
	if q[Zstd] >= 0 {
		add(Zstd, q[Zstd])
	}
	if q[Gzip] >= 0 {
		add(Gzip, q[Gzip])
	}
	if q[Identity] >= 0 {
		add(Identity, q[Identity])
	}
	if star >= 0 {
		if q[Gzip] < 0 {
			add(Gzip, star)
		}
		if q[Zstd] < 0 {
			add(Zstd, star)
		}
		if q[Identity] < 0 {
			add(Identity, star)
		}
	}
	best, bestQ := Identity, 0
	for _, cand := range cands[:n] {
		if cand.q > bestQ {
			best, bestQ = cand.c, cand.q
		}
	}
	return best
}

// parseElement parses one element of Accept-Encoding: a coding token and
// optional parameters, of which only q counts. weight is the q value in
// thousandths, 1000 when absent. It reports ok=false for an element to
// skip: empty, not a token, or with a malformed parameter or q value.
func parseElement(elem string) (name string, weight int, ok bool) {
	name, params, _ := strings.Cut(elem, ";")
	name = httplist.TrimOWS(name)
	if name != "*" && !httplist.IsToken(name) {
		return "", 0, false
	}
	weight = 1000
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		p = httplist.TrimOWS(p)
		if p == "" {
			continue
		}
		k, v, found := strings.Cut(p, "=")
		k, v = httplist.TrimOWS(k), httplist.TrimOWS(v)
		if !found || !httplist.IsToken(k) || v == "" {
			return "", 0, false
		}
		if strings.EqualFold(k, "q") {
			if weight, ok = httplist.Quality(v); !ok {
				return "", 0, false
			}
		}
	}
	return name, weight, true
}
