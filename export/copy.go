package export

// Rows is a source of rows, driven like pgx.Rows: Next advances, Values
// holds the current row (valid until the next call to Next), Err reports
// what ended the iteration. The stores' cursors are Rows.
type Rows interface {
	Next() bool
	Values() [][]byte
	Err() error
}

// Copy encodes every row of src with enc, in order, and returns the number
// of rows encoded. It stops at the first error of enc or src and returns
// it; it does not close enc, whose Close the caller still owes.
func Copy(enc Encoder, src Rows) (int64, error) {
	var n int64
	for src.Next() {
		if err := enc.Encode(src.Values()); err != nil {
			return n, err
		}
		n++
	}
	return n, src.Err()
}
