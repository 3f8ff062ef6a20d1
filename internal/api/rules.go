package api

import (
	"slices"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/source"
)

// ruled are the feeds a token with rules sees, made once per token and
// rules (source.Restrict) and kept while its rules stay the same.
type ruled struct {
	rules dataset.Rules
	feeds *feeds
}

// ruledFeeds keeps the [ruled] feeds of tokens by name.
type ruledFeeds struct{ byName sync.Map }

// feedsOf returns the datasets the principal of c may read, as it sees
// them: the server's own for a token without rules (nothing to look up),
// else those source.Restrict gives for its rules, made on the token's
// first request and whenever its rules change.
func (s *Server) feedsOf(c *gin.Context) *feeds {
	p := state(c).principal
	if p == nil || p.Rules == nil {
		return s.feeds
	}
	if v, ok := s.ruled.byName.Load(p.Name); ok {
		if r := v.(*ruled); sameRules(&r.rules, p.Rules) {
			return r.feeds
		}
	}
	f := &feeds{all: source.Restrict(s.feeds.all, p.Rules)}
	for _, src := range f.all {
		f.sets = append(f.sets, src.Set)
	}
	f.metadata = odata.Metadata(f.sets...)
	s.ruled.byName.Store(p.Name, &ruled{rules: *p.Rules, feeds: f})
	return f
}

// sameRules reports whether a and b are the same rules.
func sameRules(a, b *dataset.Rules) bool {
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
