package export

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
)

// zipEntries returns every entry of the zip b, name and content, in the
// archive's order, read through archive/zip, which checks each entry's
// CRC-32 and sizes at its end.
func zipEntries(t *testing.T, b []byte) (names []string, data map[string][]byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	data = make(map[string][]byte)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		d, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		rc.Close()
		names = append(names, f.Name)
		data[f.Name] = d
	}
	return names, data
}

// encodeParts encodes rs in format f (a [Joiner]'s: XLSX, Parquet) read
// in parts, each starting at
// its bound's row (the first part at 0): the first encoder encodes its
// rows, each continuation its own into a buffer of its own, and the first
// joins them in order, their output written in chunks of random sizes
// (below chunk) with flushes in between, as delivery copies a part's
// spool.
func encodeParts(t *testing.T, f Format, cols []dataset.Column, opts Options, rs [][][]byte, bounds []int, rng *rand.Rand, chunk int) []byte {
	t.Helper()
	var out bytes.Buffer
	head, err := NewEncoder(&out, f, cols, opts)
	if err != nil {
		t.Fatal(err)
	}
	ends := append(slices.Clone(bounds), len(rs))
	for _, r := range rs[:ends[0]] {
		if err := head.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if rng.IntN(2) == 0 {
		if err := head.(Flusher).Flush(); err != nil {
			t.Fatal(err)
		}
	}
	spec := Spec{Format: f, Columns: cols, Options: opts}
	for i, first := range bounds {
		var part bytes.Buffer
		cont, err := spec.Continuation(int64(first)).NewEncoder(&part)
		if err != nil {
			t.Fatal(err)
		}
		encodeAll(t, cont, rs[first:ends[i+1]])
		jw := head.(Joiner).Join()
		for b := part.Bytes(); len(b) > 0; {
			n := min(len(b), 1+rng.IntN(chunk))
			if rng.IntN(3) == 0 {
				n = len(b)
			}
			if _, err := jw.Write(b[:n]); err != nil {
				t.Fatal(err)
			}
			b = b[n:]
			if rng.IntN(4) == 0 {
				if err := head.(Flusher).Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := jw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := head.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// splits calls f with every way of cutting n rows into k parts, each the
// first row of a part after the first; parts may be empty.
func splits(n, k int, f func(bounds []int)) {
	var rec func(bounds []int, from int)
	rec = func(bounds []int, from int) {
		if len(bounds) == k-1 {
			f(bounds)
			return
		}
		for b := from; b <= n; b++ {
			rec(append(bounds, b), b)
		}
	}
	rec(nil, 0)
}

// sameWorkbook fails unless got's entries are want's, in the same order,
// each byte for byte.
func sameWorkbook(t *testing.T, got, want []byte, what string) {
	t.Helper()
	wantNames, wantData := zipEntries(t, want)
	gotNames, gotData := zipEntries(t, got)
	if !slices.Equal(gotNames, wantNames) {
		t.Fatalf("%s: entries %q, want %q", what, gotNames, wantNames)
	}
	for _, name := range wantNames {
		if !bytes.Equal(gotData[name], wantData[name]) {
			t.Fatalf("%s: %s:\n%s\nwant\n%s", what, name, gotData[name], wantData[name])
		}
	}
}

// TestXLSXParts checks that a workbook read in parts is the one-part
// workbook, every zip entry's XML byte for byte, and a valid archive, for
// every split of up to 10 rows into 1 to 4 parts over sheets of 3 rows:
// parts that start, end or cross a sheet's boundary, empty ones, the
// first one empty; with the count announced and not.
func TestXLSXParts(t *testing.T) {
	setSheetRows(t, 4)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 3, 4, 6, 7, 10} {
		rs := numberedRows(n)
		for _, announce := range []bool{true, false} {
			opts := Options{Sheet: "users", Rows: -1}
			if announce {
				opts.Rows = int64(n)
			}
			var want bytes.Buffer
			e, err := NewEncoder(&want, XLSX, userColumns, opts)
			if err != nil {
				t.Fatal(err)
			}
			encodeAll(t, e, rs)
			for k := 1; k <= 4; k++ {
				splits(n, k, func(bounds []int) {
					got := encodeParts(t, XLSX, userColumns, opts, rs, bounds, rng, 40)
					sameWorkbook(t, got, want.Bytes(), fmt.Sprintf("%d rows (announced %v), parts from %v", n, announce, bounds))
				})
			}
		}
	}
}

// TestXLSXPartsLarge checks parts whose pieces span many deflated chunks
// and frames, crossing sheets of 2,000 rows, with typed report columns.
func TestXLSXPartsLarge(t *testing.T) {
	setSheetRows(t, 2_001)
	const n = 6_000
	rs := make([][][]byte, n)
	for i := range rs {
		rs[i] = reportRow(i)
	}
	opts := Options{Sheet: "general-report", Rows: n}
	var want bytes.Buffer
	e, err := NewEncoder(&want, XLSX, reportColumns, opts)
	if err != nil {
		t.Fatal(err)
	}
	encodeAll(t, e, rs)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, bounds := range [][]int{{3_000}, {1_999, 2_000, 4_001}, {1, 2_500, 5_999}, {2_000, 4_000, 6_000}} {
		got := encodeParts(t, XLSX, reportColumns, opts, rs, bounds, rng, 100_000)
		sameWorkbook(t, got, want.Bytes(), fmt.Sprintf("parts from %v", bounds))
	}
}

// TestXLSXJoinErrors checks that what cannot be joined is refused: a part
// out of order, one cut short, rows past the count announced, and frames
// that are not a continuation's.
func TestXLSXJoinErrors(t *testing.T) {
	rs := numberedRows(6)
	opts := Options{Sheet: "users", Rows: 6}
	spec := Spec{Format: XLSX, Columns: userColumns, Options: opts}
	part := func(first int, rows [][][]byte, o Options) []byte {
		var b bytes.Buffer
		s := spec
		s.Options = o
		cont, err := s.Continuation(int64(first)).NewEncoder(&b)
		if err != nil {
			t.Fatal(err)
		}
		encodeAll(t, cont, rows)
		return b.Bytes()
	}
	good := part(3, rs[3:], opts)
	for _, tt := range []struct {
		name   string
		output []byte
		want   string
		is     error
	}{
		{"OutOfOrder", part(2, rs[2:], opts), "a part starting at row 2 cannot follow 3 rows", nil},
		{"CutShort", good[:len(good)-1], "ended early", errPartEnded},
		{"TooManyRows", part(3, numberedRows(5), Options{Sheet: "users", Rows: 8}), "rows encoded differ", ErrRowCount},
		{"NotFrames", []byte("PK\x03\x04"), "unknown frame", nil},
		{"NoBegin", good[9:], "does not begin with its first row", nil},
		{"PastItsEnd", append(slices.Clone(good), 'S'), "goes on past its end", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			joinFails(t, Spec{Format: XLSX, Columns: userColumns, Options: opts}, rs[:3], tt.output, tt.want, tt.is)
		})
	}
	if _, err := NewEncoder(io.Discard, XLSX, userColumns, Options{Sheet: "users", Rows: 6, Continue: true, First: 7}); err == nil {
		t.Fatal("a continuation past the rows announced was made")
	}
}

// joinFails has a first encoder of spec encode rows, then join output,
// and fails t unless the join fails with an error that says want (and
// wraps is, when not nil) and Close returns the same error.
func joinFails(t *testing.T, spec Spec, rows [][][]byte, output []byte, want string, is error) {
	t.Helper()
	head, err := spec.NewEncoder(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := head.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	jw := head.(Joiner).Join()
	_, err = jw.Write(output)
	if err == nil {
		err = jw.Close()
	}
	if err == nil || !strings.Contains(err.Error(), want) || (is != nil && !errors.Is(err, is)) {
		t.Fatalf("error %v, want %q", err, want)
	}
	if cerr := head.Close(); cerr != err {
		t.Fatalf("Close: %v, want the join's error %v", cerr, err)
	}
}

// crc32CombineRef is zlib 1.2.12's crc32_combine, a method other than
// crc32Combine's: multiplication modulo the CRC's polynomial by x to the
// power 8*len2, with powers of x^(2^k) squared up front.
func crc32CombineRef(crc1, crc2 uint32, len2 int64) uint32 {
	const poly = 0xedb88320
	multmodp := func(a, b uint32) uint32 {
		m, p := uint32(1)<<31, uint32(0)
		for {
			if a&m != 0 {
				p ^= b
				if a&(m-1) == 0 {
					break
				}
			}
			m >>= 1
			if b&1 != 0 {
				b = b>>1 ^ poly
			} else {
				b >>= 1
			}
		}
		return p
	}
	var x2n [32]uint32 // x^(2^k) modulo the polynomial
	x2n[0] = 1 << 30
	for k := 1; k < 32; k++ {
		x2n[k] = multmodp(x2n[k-1], x2n[k-1])
	}
	p, k := uint32(1)<<31, 3 // x^0; and len2 bytes are 2^3 * len2 bits
	for n := len2; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = multmodp(x2n[k&31], p)
		}
	}
	return multmodp(p, crc1) ^ crc2
}

// TestCRC32Combine checks crc32Combine against hash/crc32 on random data
// cut at random places, and, for lengths past 4 GiB that no test can
// hash, against zlib's other method and by its algebra: combining is
// associative, and combining with nothing changes nothing.
func TestCRC32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for range 300 {
		n := rng.IntN(len(data) + 1)
		if rng.IntN(3) == 0 {
			n = rng.IntN(100)
		}
		d := data[:n]
		cut := rng.IntN(n + 1)
		got := crc32Combine(crc32.ChecksumIEEE(d[:cut]), crc32.ChecksumIEEE(d[cut:]), int64(n-cut))
		if want := crc32.ChecksumIEEE(d); got != want {
			t.Fatalf("%d bytes cut at %d: %08x, want %08x", n, cut, got, want)
		}
	}
	lengths := []int64{0, 1, 255, 1 << 32, 1<<32 - 1, 1<<32 + 1, 5 << 30, 1<<40 + 12345, 1<<62 + 7}
	for range 50 {
		lengths = append(lengths, rng.Int64N(1<<45))
	}
	for _, l := range lengths {
		a, b, c := rng.Uint32(), rng.Uint32(), rng.Uint32()
		l2 := rng.Int64N(1 << 40)
		if got, want := crc32Combine(a, b, l), crc32CombineRef(a, b, l); got != want {
			t.Fatalf("length %d: %08x, want zlib's %08x", l, got, want)
		}
		left := crc32Combine(crc32Combine(a, b, l), c, l2)
		right := crc32Combine(a, crc32Combine(b, c, l2), l+l2)
		if left != right {
			t.Fatalf("lengths %d, %d: not associative: %08x, %08x", l, l2, left, right)
		}
		if got := crc32Combine(a, 0, 0); got != a {
			t.Fatalf("combined with nothing: %08x, want %08x", got, a)
		}
	}
}
