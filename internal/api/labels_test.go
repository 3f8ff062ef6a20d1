package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// TestHeaderLabels checks header=labels: the header row of CSV holds the
// columns' labels in lang, in the order asked for; a JSON body keeps the
// field names.
func TestHeaderLabels(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name, query, want string
	}{
		{"Spanish", "columns=code_contract,contract_id,rut_client_contract&header=labels", "Código de contrato,N° de contrato,RUT del cliente (contrato)"},
		{"English", "columns=code_contract,contract_id,client_rut&header=labels&lang=en", "Contract code,Contract id,Client's RUT"},
		{"Names", "columns=code_contract,contract_id&lang=en", "code_contract,contract_id"},
		{"Semicolon", "columns=task_end_date,costo_servicio&header=labels&delimiter=semicolon", "Término de la tarea;Costo del servicio"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/api/general-report/export", "/api/general-report"} {
				r := ts.Get(t, path+"?format=csv&"+tt.query)
				if r.Status != http.StatusOK {
					t.Fatalf("%s: status %d: %s", path, r.Status, r.Body)
				}
				if got, _, _ := strings.Cut(string(r.Body), "\r\n"); got != tt.want {
					t.Errorf("%s: header row = %q, want %q", path, got, tt.want)
				}
			}
		})
	}
	t.Run("Users", func(t *testing.T) {
		r := ts.Get(t, "/users?format=csv&columns=id,last_entry&header=labels")
		if got, _, _ := strings.Cut(string(r.Body), "\r\n"); got != "N° de usuario,Último ingreso" {
			t.Errorf("header row = %q", got)
		}
	})
	t.Run("JSONKeepsNames", func(t *testing.T) {
		r := ts.Get(t, "/api/general-report/export?format=ndjson&columns=contract_id&header=labels")
		line, _, _ := strings.Cut(string(r.Body), "\n")
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil || row["contract_id"] == nil {
			t.Errorf("first line %q (%v), want a contract_id key", line, err)
		}
	})
}

// TestErrorCodes checks the stable code and target beside the message of a
// 400 about a parameter, and that a 401 stays exactly the spec's body.
func TestErrorCodes(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name, path, code, target string
	}{
		{"RUTCheckDigit", "/api/general-report?rut=12.345.678-0", "rut_check_digit", "rut"},
		{"RUTMalformed", "/api/general-report/export?rut=hola", "rut_malformed", "rut"},
		{"NotInteger", "/api/general-report/export?client_id=x", "not_integer", "client_id"},
		{"Empty", "/api/general-report?code_contract=", "empty", "code_contract"},
		{"Repeated", "/api/general-report?contract_id=1&contract_id=2", "repeated", "contract_id"},
		{"Header", "/api/general-report/export?header=yes", "not_allowed", "header"},
		{"Lang", "/api/general-report/export?lang=fr", "not_allowed", "lang"},
		{"Column", "/users?columns=id,nope", "bad_column", "columns"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Get(t, tt.path)
			r.WantError(t, http.StatusBadRequest, "")
			var body struct{ Message, Code, Target string }
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			if body.Code != tt.code || body.Target != tt.target {
				t.Errorf("code, target = %q, %q; want %q, %q (body %s)", body.Code, body.Target, tt.code, tt.target, r.Body)
			}
		})
	}
	t.Run("Unauthorized", func(t *testing.T) {
		r := ts.Do(t, http.MethodGet, "/api/general-report?rut=12.345.678-0")
		if got, want := string(r.Body), `{"message":"Invalid Token"}`; r.Status != 401 || got != want {
			t.Errorf("%d %s, want 401 %s", r.Status, got, want)
		}
	})
}
