package web_test

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/informe/informe/internal/testenv"
	"github.com/informe/informe/internal/web"
)

// TestServedScriptsParse checks that the scripts the page loads, as
// served (without their indentation and comments), still parse: node
// --check reads each.
func TestServedScriptsParse(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not installed: scripts/ensure-node-tools installs it")
		return
	}
	s, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"es", "en"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Language", lang)
		w := httptest.NewRecorder()
		s.Page(w, r)
		refs := regexp.MustCompile(`src="`+web.AssetPrefix+`([^"]+\.js)"`).FindAllStringSubmatch(w.Body.String(), -1)
		if len(refs) < 2 {
			t.Fatalf("the %s page loads %d scripts, want its words and the app", lang, len(refs))
		}
		for _, ref := range refs {
			w := httptest.NewRecorder()
			if !s.Asset(w, httptest.NewRequest("GET", web.AssetPrefix+ref[1], nil), ref[1]) {
				t.Fatalf("%s is not served", ref[1])
			}
			file := filepath.Join(t.TempDir(), ref[1])
			if err := os.WriteFile(file, w.Body.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(node, "--check", file).CombinedOutput(); err != nil {
				t.Errorf("%s, as served, does not parse: %v\n%s", ref[1], err, out)
			}
		}
	}
}
