package render_test

import (
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
