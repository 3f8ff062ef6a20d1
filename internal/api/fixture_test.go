package api_test

import (
	"strings"
)

// varyFor is the Vary header of a 200 response of media type ctype: it
// varies with Accept-Encoding too, except XLSX, which is never compressed.
func varyFor(ctype string) string {
	if strings.HasPrefix(ctype, "application/vnd.openxmlformats") {
		return "Accept"
	}
	return "Accept, Accept-Encoding"
}
