package api

import (
	"slices"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/source"
)

// ruled are the feeds a token with rules or without every scope sees,
// made once per token and kept while its scopes and rules stay the same.
type ruled struct {
	scopes []dataset.Scope
	rules  *dataset.Rules
	feeds  *feeds
}

// ruledFeeds keeps the [ruled] feeds of tokens by name.
type ruledFeeds struct{ byName sync.Map }

// feedsOf returns the datasets the principal of c may read, as it sees
// them: the server's own for a token without rules that carries every
// dataset's scope (nothing to look up); else those its scopes allow, as
// source.Restrict gives them for its rules, made on the token's first
// request and whenever its scopes or rules change. The service document
// and $metadata list these only.
func (s *Server) feedsOf(c *gin.Context) *feeds {
	p := state(c).principal
	if p == nil || (p.Rules == nil && s.allowsAll(p)) {
		return s.feeds
	}
	if v, ok := s.ruled.byName.Load(p.Name); ok {
		if r := v.(*ruled); slices.Equal(r.scopes, p.Scopes) && sameRules(r.rules, p.Rules) {
			return r.feeds
		}
	}
	var allowed []*source.Source
	for _, src := range s.feeds.all {
		if p.Allows(src.Scope) {
			allowed = append(allowed, src)
		}
	}
	if p.Rules != nil {
		allowed = source.Restrict(allowed, p.Rules)
	}
	f := &feeds{all: allowed}
	for _, src := range f.all {
		f.sets = append(f.sets, src.Set)
	}
	f.metadata = odata.Metadata(f.sets...)
	s.ruled.byName.Store(p.Name, &ruled{scopes: slices.Clone(p.Scopes), rules: p.Rules, feeds: f})
	return f
}

// allowsAll reports whether p carries the scope of every dataset.
func (s *Server) allowsAll(p *auth.Principal) bool {
	for _, src := range s.feeds.all {
		if !p.Allows(src.Scope) {
			return false
		}
	}
	return true
}

// sameRules reports whether a and b are the same rules.
func sameRules(a, b *dataset.Rules) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Columns, b.Columns) && (a.Columns == nil) == (b.Columns == nil) &&
		a.NoPersonal == b.NoPersonal && slices.Equal(a.Mask, b.Mask) && a.Rows == b.Rows && a.MaxRows == b.MaxRows
}

// sourceOf returns src as the principal of c sees it, or a 403 when its
// rules leave it out.
func (s *Server) sourceOf(c *gin.Context, src *source.Source) (*source.Source, error) {
	f := s.feedsOf(c)
	if f == s.feeds {
		return src, nil
	}
	for _, r := range f.all {
		if r.Name == src.Name {
			return r, nil
		}
	}
	if p := state(c).principal; p != nil && !p.Allows(src.Scope) {
		return nil, failure.Errorf(failure.Forbidden, "this token lacks the %s scope", src.Scope)
	}
	return nil, &failure.Error{Code: failure.Forbidden, Reason: "dataset_not_allowed",
		Message: "this token's rules do not let it read " + src.Name}
}

// errTooManyRows is the refusal of a response of n rows to a token that
// may take at most max in one.
func errTooManyRows(target string, n, max int64) error {
	return &failure.Error{Code: failure.Forbidden, Target: target, Reason: "max_rows",
		Message: "this response would carry " + strconv.FormatInt(n, 10) + " rows; this token may take at most " +
			strconv.FormatInt(max, 10) + " in one: narrow it with a filter"}
}
