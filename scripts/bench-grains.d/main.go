// Command bench-grains measures the first page and the whole export of each
// dataset at its own grain next to the general report's, on a running
// informe. Run it through scripts/bench-grains.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
)

// dataset is what is measured of one dataset: its OData set, an $expand of
// it (none for the report) and its export's path.
type dataset struct {
	name, set, expand, export string
}

var datasets = []dataset{
	{"general-report", "GeneralReport", "", "/api/general-report/export"},
	{"contracts", "Contracts", "Client($select=client_rut,client_region)", "/api/contracts/export"},
	{"processes", "Processes", "Tasks($select=task_status)", "/api/processes/export"},
	{"tasks", "Tasks", "Process($select=process_role)", "/api/tasks/export"},
	{"clients", "Clients", "Contracts($select=costo_servicio)", "/api/clients/export"},
	{"services", "Services", "Contracts($select=contract_id)", "/api/services/export"},
}

// figure is one timing of a dataset: how to get it, by path.
type figure struct {
	name string
	path func(d dataset) string
}

var figures = []figure{
	{"first page (1,000)", func(d dataset) string { return "/odata/" + d.set }},
	{"first page, $expand", func(d dataset) string {
		if d.expand == "" {
			return ""
		}
		return "/odata/" + d.set + "?$expand=" + d.expand
	}},
	{"whole CSV export", func(d dataset) string { return d.export + "?format=csv" }},
}

func main() {
	base := flag.String("base", os.Getenv("BASE"), "informe's base URL")
	token := flag.String("token", os.Getenv("TOKEN"), "a token with report:read")
	runs := flag.Int("runs", 9, "runs of each figure; the median is reported, with the slowest")
	flag.Parse()
	if *base == "" || *token == "" {
		fmt.Fprintln(os.Stderr, "bench-grains: -base and -token are required")
		os.Exit(2)
	}
	get := func(path string) (time.Duration, int64, error) {
		req, err := http.NewRequest(http.MethodGet, *base+path, nil)
		if err != nil {
			return 0, 0, err
		}
		req.Header.Set("Authorization", "Bearer "+*token)
		req.Header.Set("Prefer", "odata.maxpagesize=1000")
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, 0, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		took := time.Since(start)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s: %.200s", path, resp.Status, body)
		}
		rows, _ := strconv.ParseInt(resp.Header.Get("X-Total-Count"), 10, 64) // an export's
		return took, rows, err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "dataset\trows\t")
	for _, f := range figures {
		fmt.Fprintf(w, "%s: median\tslowest\tx report\t", f.name)
	}
	fmt.Fprintln(w)
	report := make([]time.Duration, len(figures))
	for _, d := range datasets {
		var rows int64
		fmt.Fprintf(w, "%s\t", d.name)
		var cells []string
		for i, f := range figures {
			path := f.path(d)
			if path == "" {
				cells = append(cells, "-", "-", "-")
				continue
			}
			if _, _, err := get(path); err != nil { // warm
				fmt.Fprintln(os.Stderr, "bench-grains:", err)
				os.Exit(1)
			}
			var took []time.Duration
			for range *runs {
				t, n, err := get(path)
				if err != nil {
					fmt.Fprintln(os.Stderr, "bench-grains:", err)
					os.Exit(1)
				}
				if i == len(figures)-1 {
					rows = n
				}
				took = append(took, t)
			}
			slices.Sort(took)
			median := took[len(took)/2]
			if d.name == datasets[0].name {
				report[i] = median
				if i == 0 {
					report[1] = median // an $expand is compared with the report's page
				}
			}
			ratio := "-"
			if report[i] > 0 {
				ratio = fmt.Sprintf("%.2fx", float64(median)/float64(report[i]))
			}
			cells = append(cells, ms(median), ms(took[len(took)-1]), ratio)
		}
		fmt.Fprintf(w, "%d\t", rows)
		for _, c := range cells {
			fmt.Fprintf(w, "%s\t", c)
		}
		fmt.Fprintln(w)
	}
	w.Flush()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
