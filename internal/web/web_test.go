package web_test

import (
	"crypto/tls"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/informe/informe/internal/web"
)

func TestLanguage(t *testing.T) {
	for _, tt := range []struct {
		name, accept, cookie, want string
	}{
		{"None", "", "", "es"},
		{"Spanish", "es-CL,es;q=0.9,en;q=0.8", "", "es"},
		{"English", "en-GB,en;q=0.9", "", "en"},
		{"ByQuality", "fr;q=1, es;q=0.4, en;q=0.7", "", "en"},
		{"Unspoken", "de, fr", "", "es"},
		{"Refused", "en;q=0, es;q=0.1", "", "es"},
		{"Chosen", "en", "es", "es"},
		{"ChosenUnknown", "en", "de", "en"},
		{"BadQuality", "en;q=x, es", "", "es"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Accept-Language", tt.accept)
			if tt.cookie != "" {
				r.Header.Set("Cookie", web.LangCookie+"="+tt.cookie)
			}
			if got := web.Language(r); got != tt.want {
				t.Errorf("Language = %s, want %s", got, tt.want)
			}
		})
	}
}

func FuzzLanguage(f *testing.F) {
	for _, s := range []string{"", "es-CL,es;q=0.9", "en;q=0", "*;q=0.5", ";;,,q=", "en;q=1e308"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Language", accept)
		if got := web.Language(r); !slices.Contains(web.Languages, got) {
			t.Errorf("Language(%q) = %q", accept, got)
		}
	})
}

func TestSameOrigin(t *testing.T) {
	for _, tt := range []struct {
		name, target, origin, fetchSite string
		tls                             bool
		want                            bool
	}{
		{"Same", "http://informe.example.cl/web/sign-in", "http://informe.example.cl", "", false, true},
		{"SameTLS", "https://informe.example.cl:8443/web/sign-in", "https://informe.example.cl:8443", "", true, true},
		{"OtherHost", "http://informe.example.cl/web/sign-in", "http://evil.example", "", false, false},
		{"OtherScheme", "https://informe.example.cl/web/sign-in", "http://informe.example.cl", "", true, false},
		{"OtherPort", "http://informe.example.cl/web/sign-in", "http://informe.example.cl:8080", "", false, false},
		{"Null", "http://informe.example.cl/web/sign-in", "null", "", false, false},
		{"NoOriginSameSite", "http://informe.example.cl/web/sign-in", "", "same-origin", false, true},
		{"NoOriginCrossSite", "http://informe.example.cl/web/sign-in", "", "cross-site", false, false},
		{"Nothing", "http://informe.example.cl/web/sign-in", "", "", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", tt.target, nil)
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			if tt.fetchSite != "" {
				r.Header.Set("Sec-Fetch-Site", tt.fetchSite)
			}
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			} else {
				r.TLS = nil
			}
			if got := web.SameOrigin(r); got != tt.want {
				t.Errorf("SameOrigin = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSize keeps the page under its 100 KB target, uncompressed.
func TestSize(t *testing.T) {
	s, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Size(); n >= 100_000 {
		t.Errorf("page and assets = %d bytes, over 100 KB", n)
	}
}
