// Package inbrowser_test drives the web page in headless Chromium against
// the real API (package apitest) and a real PostgreSQL, and checks every
// screen with axe-core. It is a package of its own so that go test starts
// its browsers, mostly waiting on pages, beside the other packages' tests
// rather than wherever Go's runner frees one of the API tests' parallel
// slots for it.
package inbrowser_test

import (
	"sync"
	"testing"

	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m, browsers.close) }

// TestBrowser runs the web page's tests in headless Chromiums, in
// browserLanes lanes: each lane takes the next test when its last one
// ends, so at most that many tests' browsers run at once, all in this
// test's one parallel slot, and no test holds a slot to wait for a
// browser. A test may open several tabs, and its subtests may run at
// once. Run one with -run 'TestBrowser/PageGrains'.
func TestBrowser(t *testing.T) {
	t.Parallel()
	next := make(chan int, len(browserTests))
	for i := range browserTests {
		next <- i
	}
	close(next)
	var lanes sync.WaitGroup
	for range browserLanes {
		lanes.Go(func() {
			for i := range next {
				t.Run(browserTests[i].name, browserTests[i].test)
			}
		})
	}
	lanes.Wait()
}

// browserLanes is how many browser tests run at once: two, one a core of
// the small machines the tests run on.
const browserLanes = 2

// browserTests are the tests TestBrowser runs, the longest first, so that
// the lanes end close together.
var browserTests = []struct {
	name string
	test func(*testing.T)
}{
	{"PageConditionsChile", testPageConditionsChile},
	{"PageInBrowser", testPageInBrowser},
	{"PageConnectTexts", testPageConnectTexts},
	{"PageMParses", testPageMParses},
	{"PageSessionEnds", testPageSessionEnds},
	{"PageFlows", testPageFlows},
	{"PageGrains", testPageGrains},
	{"PageImportDataHTTPS", testPageImportDataHTTPS},
	{"PageMonthAsXLSX", testPageMonthAsXLSX},
	{"PageAppsScript", testPageAppsScript},
	{"PageSignInReturns", testPageSignInReturns},
	{"PageInBrowserRules", testPageInBrowserRules},
	{"PageDecimalComma", testPageDecimalComma},
	{"PageScheduleText", testPageScheduleText},
	{"PageConditionsMParse", testPageConditionsMParse},
}

// optionError is [apitest.OptionError], written in this package's tables
// without its fields' names.
type optionError apitest.OptionError
