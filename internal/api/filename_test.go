package api

import (
	"net/url"
	"testing"
	"time"
)

func TestFileName(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 11, 24, 23, 59, 0, 0, time.UTC)
	for _, tt := range []struct {
		name, base, query, want string
	}{
		{"Plain", "general-report", "format=csv", `attachment; filename="general-report-2026-11-24.csv"; filename*=UTF-8''general-report-2026-11-24.csv`},
		{"Client", "general-report", "client_id=7", `attachment; filename="general-report-client-7-2026-11-24.csv"; filename*=UTF-8''general-report-client-7-2026-11-24.csv`},
		{"FirstFilterWins", "general-report-page-2", "rut=12.345.678-5&contract_id=3", `attachment; filename="general-report-page-2-contract-3-2026-11-24.csv"; filename*=UTF-8''general-report-page-2-contract-3-2026-11-24.csv`},
		{"RUT", "general-report", "rut=12.345.678-5", `attachment; filename="general-report-rut-12.345.678-5-2026-11-24.csv"; filename*=UTF-8''general-report-rut-12.345.678-5-2026-11-24.csv`},
		{"Quote", "general-report", `code_contract=CT-"X`, `attachment; filename="general-report-code-CT-_X-2026-11-24.csv"; filename*=UTF-8''general-report-code-CT-_X-2026-11-24.csv`},
		{"Separators", "general-report", "code_contract=a=b,c@d%26e%2Bf", `attachment; filename="general-report-code-a=b,c@d&e+f-2026-11-24.csv"; filename*=UTF-8''general-report-code-a%3Db%2Cc%40d&e+f-2026-11-24.csv`},
		{"Accents", "general-report", "code_contract=Ñuñoa 1/2", `attachment; filename="general-report-code-_u_oa_1_2-2026-11-24.csv"; filename*=UTF-8''general-report-code-%C3%91u%C3%B1oa_1_2-2026-11-24.csv`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := url.ParseQuery(tt.query)
			if got := contentDisposition(fileName(tt.base, v, day) + ".csv"); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestPageFileName checks the names of the web page's own files: in its
// language, dated the day it is in Santiago (21:00 on the 27th there is
// the 28th in UTC).
func TestPageFileName(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC) // 21:00 on the 27th in Santiago (UTC-3)
	for _, tt := range []struct {
		name, path, base, query, lang, want string
	}{
		{"Spanish", "/api/general-report/export", "general-report", "client_id=1", "es", "informe-general-cliente-1-2026-11-27"},
		{"English", "/api/general-report/export", "general-report", "client_id=1", "en", "general-report-client-1-2026-11-27"},
		{"Page", "/api/general-report", "general-report-page-2", "code_contract=CT-1", "es", "informe-general-pagina-2-codigo-CT-1-2026-11-27"},
		{"Grain", "/api/contracts/export", "contracts", "", "es", "contratos-2026-11-27"},
		{"Users", "/users", "users", "", "es", "usuarios-2026-11-27"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := url.ParseQuery(tt.query)
			if got := pageFileName(tt.path, tt.base, v, at, tt.lang); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
