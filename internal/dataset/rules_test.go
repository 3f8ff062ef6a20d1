package dataset_test

import (
	"testing"

	"github.com/informe/informe/internal/dataset"
)

func TestMaskApply(t *testing.T) {
	for _, tt := range []struct {
		name  string
		mask  dataset.Mask
		value []byte
		want  []byte
	}{
		{"RUTDotted", dataset.MaskRUT, []byte("12.345.678-5"), []byte("12.***.***-5")},
		{"RUTPlain", dataset.MaskRUT, []byte("9876543-3"), []byte("98.***.***-3")},
		{"RUTK", dataset.MaskRUT, []byte("17000003-k"), []byte("17.***.***-k")},
		{"RUTShort", dataset.MaskRUT, []byte("5"), []byte("***")},
		{"Email", dataset.MaskEmail, []byte("carlos@dominio.cl"), []byte("c***@dominio.cl")},
		{"EmailAccented", dataset.MaskEmail, []byte("ñandú@dominio.cl"), []byte("ñ***@dominio.cl")},
		{"EmailWithoutAt", dataset.MaskEmail, []byte("carlos"), []byte("***")},
		{"Phone", dataset.MaskPhone, []byte("+56 9 1234 5678"), []byte("***78")},
		{"PhoneOneDigit", dataset.MaskPhone, []byte("x7"), []byte("***7")},
		{"Name", dataset.MaskName, []byte("Carlos"), []byte("C***")},
		{"NameAccented", dataset.MaskName, []byte("Álvaro"), []byte("Á***")},
		{"NameNotALetter", dataset.MaskName, []byte("-"), []byte("***")},
		{"Withheld", dataset.MaskWithheld, []byte("1980-02-29"), nil},
		{"Other", dataset.MaskOther, []byte("Av. Irarrázaval 1234"), []byte("***")},
		{"Null", dataset.MaskRUT, nil, nil},
		{"Empty", dataset.MaskEmail, []byte{}, []byte{}},
		{"Unmasked", dataset.Unmasked, []byte("12.345.678-5"), []byte("12.345.678-5")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.mask.Apply(make([]byte, 0, 4), tt.value)
			if string(got) != string(tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("%s.Apply(%q) = %q, want %q", tt.mask, tt.value, got, tt.want)
			}
		})
	}
}

func TestMaskOf(t *testing.T) {
	for _, d := range dataset.All {
		for _, c := range d.Columns {
			if c.Personal == dataset.NotPersonal {
				continue
			}
			m := dataset.MaskOf(c)
			if c.Kind != dataset.Text && m != dataset.MaskWithheld {
				t.Errorf("%s.%s (%s) masked %s, want withheld", d.Name, c.Name, c.Kind, m)
			}
		}
	}
	for name, want := range map[string]dataset.Mask{
		"client_rut": dataset.MaskRUT, "rut_payer_contract": dataset.MaskRUT, "rut": dataset.MaskRUT,
		"client_email": dataset.MaskEmail, "payer_phone_contract": dataset.MaskPhone,
		"first_name_client": dataset.MaskName, "second_last_name_payer_contract": dataset.MaskName, "name": dataset.MaskName,
		"attended_by": dataset.MaskName, "client_address": dataset.MaskOther, "client_passport": dataset.MaskOther,
	} {
		if got := dataset.MaskOf(dataset.Column{Name: name}); got != want {
			t.Errorf("MaskOf(%s) = %s, want %s", name, got, want)
		}
	}
}
