package report

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/postgres"
)

// CheckCounting checks, before serving, that counting gives the
// general_report_typed view's true totals on pool. With [FromView] it has nothing
// to check and returns nil. With [Maintained] it checks from the catalogs
// (read only, so also on a hot standby) that informe's counter tables and
// functions exist, that general_report_typed reads contracts, processes and
// tasks, and that their counting triggers are installed and enabled; it
// returns an error saying what is wrong and to run informe migrate or serve
// with --report-counts=view when they are not, and a failure.Unavailable
// error when the database cannot be reached.
func CheckCounting(ctx context.Context, pool *pgxpool.Pool, counting Counting) error {
	if counting != Maintained {
		return nil
	}
	return postgres.CheckReportCounting(ctx, pool)
}
