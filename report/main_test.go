package report_test

import (
	"testing"

	"github.com/informe/informe/database/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }
