package api

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/param"
	"github.com/informe/informe/users"
)

// listUsers serves GET /users.
func (s *Server) listUsers(c *gin.Context) {
	values, out, err := s.negotiate(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	cols, err := param.Columns(values, users.Columns)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx, done, err := s.admit(c.Request.Context(), !isHead(c) && out.format == export.XLSX)
	if err != nil {
		s.fail(c, err)
		return
	}
	defer done()
	if isHead(c) {
		total, err := s.Users.Count(ctx)
		if err != nil {
			s.fail(c, err)
			return
		}
		c.Writer.Header().Set("X-Total-Count", strconv.FormatInt(total, 10))
		head(c, out, "users")
		return
	}
	cur, err := s.Users.Open(ctx, cols)
	if err != nil {
		s.fail(c, err)
		return
	}
	defer cur.Close()

	total := cur.Total()
	c.Writer.Header().Set("X-Total-Count", strconv.FormatInt(total, 10))
	s.stream(c, cur, later{}, done, out, "users", cols, export.Options{Sheet: "users", Rows: total})
}
