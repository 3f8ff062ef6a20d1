package export

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := bytes.SplitAfter(got, []byte("\n")), bytes.SplitAfter(want, []byte("\n"))
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w []byte
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if !bytes.Equal(g, w) {
				t.Fatalf("%s: line %d differs (run go test -update if the change is intended)\n got: %q\nwant: %q", path, i+1, g, w)
			}
		}
	}
}

// reportColumns is a copy of dataset.GeneralReport.Columns, the 74 fields of a general
// report row. It is copied rather than imported so that this package's tests
// build on their own; it only has to stay realistic, not in sync.
var reportColumns = []dataset.Column{
	{Name: "contract_id", Kind: dataset.Integer},
	{Name: "contract_status", Kind: dataset.Text},
	{Name: "code_contract", Kind: dataset.Text},
	{Name: "quantity_quotas", Kind: dataset.Integer},
	{Name: "date_first_payment", Kind: dataset.Date},
	{Name: "contract_creation_date", Kind: dataset.Timestamp},
	{Name: "attended_by", Kind: dataset.Text},
	{Name: "rut_client_contract", Kind: dataset.Text},
	{Name: "passport_client_contract", Kind: dataset.Text},
	{Name: "first_name_client_contract", Kind: dataset.Text},
	{Name: "second_name_client_contract", Kind: dataset.Text},
	{Name: "last_name_client_contract", Kind: dataset.Text},
	{Name: "second_last_name_client_contract", Kind: dataset.Text},
	{Name: "client_birth_date_contract", Kind: dataset.Date},
	{Name: "client_occupation_contract", Kind: dataset.Text},
	{Name: "client_email_contract", Kind: dataset.Text},
	{Name: "client_phone_contract", Kind: dataset.Text},
	{Name: "client_country_contract", Kind: dataset.Text},
	{Name: "client_marital_status_contract", Kind: dataset.Text},
	{Name: "client_gender_contract", Kind: dataset.Text},
	{Name: "client_region_contract", Kind: dataset.Text},
	{Name: "client_commune_contract", Kind: dataset.Text},
	{Name: "client_address_contract", Kind: dataset.Text},
	{Name: "rut_payer_contract", Kind: dataset.Text},
	{Name: "passport_payer_contract", Kind: dataset.Text},
	{Name: "first_name_payer_contract", Kind: dataset.Text},
	{Name: "second_name_payer_contract", Kind: dataset.Text},
	{Name: "last_name_payer_contract", Kind: dataset.Text},
	{Name: "second_last_name_payer_contract", Kind: dataset.Text},
	{Name: "payer_birth_date_contract", Kind: dataset.Date},
	{Name: "payer_occupation_contract", Kind: dataset.Text},
	{Name: "payer_email_contract", Kind: dataset.Text},
	{Name: "payer_phone_contract", Kind: dataset.Text},
	{Name: "payer_country_contract", Kind: dataset.Text},
	{Name: "payer_marital_status_contract", Kind: dataset.Text},
	{Name: "payer_gender_contract", Kind: dataset.Text},
	{Name: "payer_region_contract", Kind: dataset.Text},
	{Name: "payer_commune_contract", Kind: dataset.Text},
	{Name: "payer_address_contract", Kind: dataset.Text},
	{Name: "service", Kind: dataset.Text},
	{Name: "costo_servicio", Kind: dataset.Decimal},
	{Name: "benefit_center_id_service", Kind: dataset.Integer},
	{Name: "benefit_center_service", Kind: dataset.Text},
	{Name: "process_id", Kind: dataset.Integer},
	{Name: "process_role", Kind: dataset.Text},
	{Name: "caratulado_process", Kind: dataset.Text},
	{Name: "process_date", Kind: dataset.Date},
	{Name: "task", Kind: dataset.Text},
	{Name: "task_title", Kind: dataset.Text},
	{Name: "task_detail", Kind: dataset.Text},
	{Name: "task_code", Kind: dataset.Text},
	{Name: "task_end_date", Kind: dataset.Date},
	{Name: "task_duration", Kind: dataset.Integer},
	{Name: "task_status", Kind: dataset.Text},
	{Name: "task_progress", Kind: dataset.Integer},
	{Name: "task_executor", Kind: dataset.Text},
	{Name: "execution_date", Kind: dataset.Timestamptz},
	{Name: "client_id", Kind: dataset.Integer},
	{Name: "client_rut", Kind: dataset.Text},
	{Name: "client_passport", Kind: dataset.Text},
	{Name: "first_name_client", Kind: dataset.Text},
	{Name: "second_name_client", Kind: dataset.Text},
	{Name: "last_name_client", Kind: dataset.Text},
	{Name: "second_last_name_client", Kind: dataset.Text},
	{Name: "client_email", Kind: dataset.Text},
	{Name: "client_phone", Kind: dataset.Text},
	{Name: "client_occupation", Kind: dataset.Text},
	{Name: "client_birth_date", Kind: dataset.Date},
	{Name: "client_country", Kind: dataset.Text},
	{Name: "client_marital_status", Kind: dataset.Text},
	{Name: "client_gender", Kind: dataset.Text},
	{Name: "client_region", Kind: dataset.Text},
	{Name: "client_commune", Kind: dataset.Text},
	{Name: "client_address", Kind: dataset.Text},
}

// userColumns is a copy of dataset.Users.Columns, for the same reason.
var userColumns = []dataset.Column{
	{Name: "id", Kind: dataset.Integer},
	{Name: "name", Kind: dataset.Text},
	{Name: "email", Kind: dataset.Text},
	{Name: "username", Kind: dataset.Text},
	{Name: "rut", Kind: dataset.Text},
	{Name: "phone", Kind: dataset.Text},
	{Name: "last_entry", Kind: dataset.Timestamp, Nullable: true},
	{Name: "status", Kind: dataset.Text},
	{Name: "created_at", Kind: dataset.Timestamp},
	{Name: "updated_at", Kind: dataset.Timestamp, Nullable: true},
}

// userRows are users as the database would render them, with NULLs and
// text that needs escaping.
func userRows() [][][]byte {
	return rows(
		[]string{"1", "José Núñez", "jose@example.cl", "jnunez", "12.345.678-5", "+56 9 1234 5678", "2024-03-05 10:20:30", "active", "2023-01-02 03:04:05", "2024-03-05 10:20:30"},
		[]string{"2", `Ana "La Jefa" Pérez`, "ana@example.cl", "aperez", "9.876.543-2", "", "\x00", "inactive", "2023-06-30 23:59:59", "\x00"},
		[]string{"17", "Line\nbreak\ttab\\slash\u2028sep\x01ctl", "x@example.cl", "=cmd", "1-9", "-12", "\x00", "active", "2024-02-29 12:00:00", "\x00"},
	)
}

// rows turns string rows into byte rows; "\x00" stands for nil (NULL).
func rows(rs ...[]string) [][][]byte {
	out := make([][][]byte, len(rs))
	for i, r := range rs {
		out[i] = make([][]byte, len(r))
		for j, v := range r {
			if v != "\x00" {
				out[i][j] = []byte(v)
			}
		}
	}
	return out
}

// trickyColumns exercise every kind and the CSV rules.
var trickyColumns = []dataset.Column{
	{Name: "id", Kind: dataset.Integer},
	{Name: "name", Kind: dataset.Text},
	{Name: "phone", Kind: dataset.Text},
	{Name: "note", Kind: dataset.Text},
	{Name: "amount", Kind: dataset.Decimal},
	{Name: "day", Kind: dataset.Date},
	{Name: "created_at", Kind: dataset.Timestamp},
	{Name: "executed_at", Kind: dataset.Timestamptz},
	{Name: "last_entry", Kind: dataset.Timestamp, Nullable: true},
}

// trickyRows cover quoting, newlines, accents, formula neutralization and
// phone numbers, and values of non-text kinds that look like formulas.
func trickyRows() [][][]byte {
	return rows(
		[]string{"1", "José Núñez", "+56 9 1234 5678", "plain", "150000", "2024-03-05", "2024-03-05 10:20:30", "2024-03-05 10:20:30.123456+00", "2024-03-05 10:20:30"},
		[]string{"2", "Pérez, Ana", "+1 (555) 010-9999", `she said "hola"`, "1500.5", "1999-12-31", "1999-12-31 23:59:59", "1999-12-31 23:59:59+00", "\x00"},
		[]string{"3", "línea uno\nlínea dos", "-12", "crlf\r\nend", "-3.25", "", "", "", ""},
		[]string{"4", " leading space", "=1+1", "+SUM(A1:A9)", "0", "2000-02-29", "2000-02-29 00:00:00", "2000-02-29 00:00:00.5+00", "\x00"},
		[]string{"5", "trailing space ", "-2+3+cmd|' /C calc'!A0", "@HYPERLINK(\"http://x\")", "12", "2024-01-01", "2024-01-01 00:00:00", "2024-01-01 00:00:00+00", "\x00"},
		[]string{"6", "\ttab first", "\rcr first", "-", "+5", "2024-01-01", "2024-01-01 00:00:00", "2024-01-01 00:00:00+00", "\x00"},
		[]string{"-7", "año ñandú", "+56 (2) 2345-6789", "a;b\tc", "-0.5", "2024-12-31", "2024-12-31 08:00:00", "2024-12-31 08:00:00.000001+00", "2024-12-31 08:00:00"},
		[]string{"8", `\.`, "+ 56", "=", "1e3", "infinity", "2024-01-01 00:00:00", "2024-01-01 00:00:00+00", "\x00"},
	)
}

// reportRow returns a realistic general report row, different for each i,
// about 1.4 KB as CSV. Every 10th row has empty optional fields.
func reportRow(i int) [][]byte {
	row := make([][]byte, len(reportColumns))
	sparse := i%10 == 9
	for j, c := range reportColumns {
		var v string
		n := c.Name
		switch {
		case c.Kind == dataset.Integer:
			v = fmt.Sprint((i+1)*(j+7)%100000 + 1)
		case c.Kind == dataset.Decimal:
			v = fmt.Sprintf("%d.%d", 150000+i%9000, i%10)
		case c.Kind == dataset.Date:
			v = fmt.Sprintf("%04d-%02d-%02d", 1960+(i+j)%60, 1+(i+j)%12, 1+(i*7+j)%28)
		case c.Kind == dataset.Timestamp:
			v = fmt.Sprintf("2024-%02d-%02d %02d:%02d:%02d", 1+i%12, 1+i%28, i%24, (i*7)%60, (i*13)%60)
		case c.Kind == dataset.Timestamptz:
			v = fmt.Sprintf("2024-%02d-%02d %02d:%02d:%02d.%06d+00", 1+i%12, 1+i%28, i%24, (i*7)%60, (i*13)%60, (i*7919)%1000000)
		case strings.Contains(n, "passport"):
			if sparse || i%3 != 0 {
				v = ""
			} else {
				v = fmt.Sprintf("P%08d", i)
			}
		case strings.HasPrefix(n, "rut") || strings.HasSuffix(n, "_rut"):
			v = fmt.Sprintf("%d.%03d.%03d-%d", 10+i%15, i%1000, (i*31)%1000, i%10)
		case strings.Contains(n, "email"):
			v = fmt.Sprintf("persona.%d@correo-ejemplo.cl", i)
		case strings.Contains(n, "phone"):
			v = fmt.Sprintf("+56 9 %04d %04d", i%10000, (i*17)%10000)
		case strings.Contains(n, "second_name") || strings.Contains(n, "second_last_name"):
			if sparse {
				v = ""
			} else {
				v = []string{"María", "Ignacio", "Muñoz", "Peña"}[i%4]
			}
		case strings.Contains(n, "name"):
			v = []string{"José", "Valentina", "González", "Rodríguez", "Ñuñoa"}[(i+j)%5]
		case strings.Contains(n, "address"):
			v = fmt.Sprintf("Avenida Libertador Bernardo O'Higgins %d, depto %d, Santiago", 100+i%3000, i%90)
		case n == "task_detail":
			v = fmt.Sprintf("Revisión de antecedentes del proceso %d: se solicitó al cliente la documentación pendiente, "+
				"incluyendo certificado de nacimiento, \"poder simple\" y comprobante de domicilio; plazo de %d días.", i, 5+i%20)
		case n == "caratulado_process":
			v = fmt.Sprintf("González con Banco del Estado de Chile, Rol C-%d-2024", 1000+i%9000)
		case strings.Contains(n, "occupation"):
			v = []string{"Ingeniera comercial", "Profesor", "Técnico en enfermería"}[i%3]
		case strings.Contains(n, "country"):
			v = "Chile"
		case strings.Contains(n, "region"):
			v = "Región Metropolitana de Santiago"
		case strings.Contains(n, "commune"):
			v = []string{"Providencia", "Ñuñoa", "Las Condes", "Maipú"}[i%4]
		case strings.Contains(n, "marital"):
			v = []string{"Soltero/a", "Casado/a", "Divorciado/a"}[i%3]
		case strings.Contains(n, "gender"):
			v = []string{"Femenino", "Masculino"}[i%2]
		default:
			v = fmt.Sprintf("%s %d", strings.ReplaceAll(n, "_", " "), i%500)
		}
		row[j] = []byte(v)
	}
	return row
}
