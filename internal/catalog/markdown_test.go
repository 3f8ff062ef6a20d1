package catalog_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/informe/informe/internal/catalog"
)

var update = flag.Bool("update", false, "rewrite docs/columns.md")

// TestColumnsDoc keeps docs/columns.md generated from the column lists.
func TestColumnsDoc(t *testing.T) {
	t.Parallel()
	var got bytes.Buffer
	if err := catalog.WriteMarkdown(&got); err != nil {
		t.Fatal(err)
	}
	const path = "../../docs/columns.md"
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("docs/columns.md is out of date with the column lists; run: go test ./internal/catalog -run TestColumnsDoc -update")
	}
}
