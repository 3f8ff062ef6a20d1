package api_test

import "regexp"

// attached is the Content-Disposition of an attachment with the ASCII
// name name, as [undated] leaves it ("DATE" for the date).
func attached(name string) string {
	return `attachment; filename="` + name + `"; filename*=UTF-8''` + name
}

var isoDate = regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)

// undated returns a Content-Disposition with its date replaced by DATE, so
// that tests compare names whatever the day they run.
func undated(cd string) string { return isoDate.ReplaceAllString(cd, "DATE") }
