package export

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/informe/informe/internal/dataset"
)

// A Parquet file read in parts: each continuation (Options.Continue)
// writes its rows as row groups of a file of its own, and sends the first
// encoder, in frames (see frames.go), that file's bytes between its
// leading magic number and its footer, then its footer's metadata, which
// indexes its row groups. The first encoder ends its own last row group
// before the first part it joins, writes each part's row groups as they
// come, and at Close writes one footer: its own row groups', then each
// part's, moved to where their bytes landed in the body. A row group
// holds rows of one part only, so a file read in parts has a short row
// group where each part ends; its rows and values are those of a file
// written by one encoder.

// parquetMagic begins and ends every Parquet file.
var parquetMagic = []byte("PAR1")

// newParquetContinuation returns an encoder continuing a Parquet file from
// its row first (counted from 0), writing frames to w for the first
// encoder to join.
func newParquetContinuation(w io.Writer, cols []dataset.Column, first int64) (*parquetEncoder, error) {
	if first < 0 {
		return nil, fmt.Errorf("export: parquet: a continuation cannot start at row %d", first)
	}
	e, err := newParquet(w, cols, ParquetRowGroupRows)
	if err != nil {
		return nil, err
	}
	e.part = &frames{w: w}
	e.part.frame(frameBegin, uint64(first))
	return e, nil
}

// end writes out the file's last bytes, now that the writing goroutine
// has ended the file: its footer as arrow-go wrote it when no part was
// joined; with joined parts, one footer indexing their row groups too; in
// a continuation, its footer's metadata and its rows, in frames.
func (e *parquetEncoder) end() error {
	if err := e.drainTo(e.pw.footerAt); err != nil {
		return err
	}
	if e.part == nil && len(e.parts) == 0 {
		return e.drain()
	}
	var footer []byte
	if err := e.pw.sink.moveTo(func(p []byte) error { footer = bytes.Clone(p); return nil }, math.MaxInt64); err != nil {
		return err
	}
	meta, err := footerMetadata(footer)
	if err != nil {
		return fmt.Errorf("export: parquet: %w", err)
	}
	if e.part != nil {
		e.part.payload(frameMeta, meta)
		e.part.frame(frameRows, uint64(e.encoded))
		return e.part.flush()
	}
	md, err := metadata.NewFileMetaData(meta, nil)
	if err != nil {
		return fmt.Errorf("export: parquet: reading its own footer: %w", err)
	}
	for _, p := range e.parts {
		if err := md.AppendRowGroups(p); err != nil {
			return fmt.Errorf("export: parquet: %w", err)
		}
	}
	for i, rg := range md.RowGroups {
		ordinal := int16(i)
		rg.Ordinal = &ordinal
	}
	var buf bytes.Buffer
	n, err := md.WriteTo(&buf, nil)
	if err != nil {
		return fmt.Errorf("export: parquet: writing the footer: %w", err)
	}
	buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(n)))
	buf.Write(parquetMagic)
	if err := e.emit(buf.Bytes()); err != nil {
		return fmt.Errorf("export: parquet: %w", err)
	}
	return nil
}

// footerMetadata returns the metadata of a file's footer: the footer
// without its length and closing magic number.
func footerMetadata(footer []byte) ([]byte, error) {
	n := len(footer) - 8
	if n < 0 || !bytes.Equal(footer[n+4:], parquetMagic) || binary.LittleEndian.Uint32(footer[n:]) != uint32(n) {
		return nil, errors.New("the file's footer is not its metadata alone")
	}
	return footer[:n], nil
}

// Join returns the writer joining a continuation's frames into e's file;
// see [Joiner].
func (e *parquetEncoder) Join() io.WriteCloser {
	return newPartJoin("parquet", &e.state, &e.encoded, e.part != nil, &parquetJoin{e: e})
}

// parquetJoin writes the row groups of one continuation into the file.
type parquetJoin struct {
	e     *parquetEncoder
	start int64  // where the part's bytes begin in the body
	data  int64  // the part's bytes written so far
	meta  []byte // its footer's metadata
}

// payload writes a part's bytes into the body, or gathers its metadata.
func (j *parquetJoin) payload(kind byte, p []byte) error {
	switch kind {
	case frameData:
		j.data += int64(len(p))
		return j.e.emit(p)
	case frameMeta:
		j.meta = append(j.meta, p...)
		return nil
	}
	return fmt.Errorf("a part's output holds a frame %q, not one of a Parquet file", kind)
}

// begin ends this encoder's own row group: its rows go before the
// part's, in row groups of their own.
func (j *parquetJoin) begin() error {
	if err := j.e.endGroup(); err != nil {
		return err
	}
	j.e.joined = true
	j.start = j.e.pos
	return nil
}

// frame handles the complete frame f.
func (j *parquetJoin) frame(f []byte) error {
	e := j.e
	switch f[0] {
	case frameRows:
		rows := int64(binary.BigEndian.Uint64(f[1:]))
		md, err := metadata.NewFileMetaData(j.meta, nil)
		if err != nil {
			return fmt.Errorf("a part's metadata: %w", err)
		}
		if md.NumRows != rows {
			return fmt.Errorf("a part's metadata holds %d rows, its end says %d", md.NumRows, rows)
		}
		if err := place(md, j.start-int64(len(parquetMagic)), j.data); err != nil {
			return err
		}
		e.parts = append(e.parts, md)
		e.encoded += rows
	case framePiece, frameSheet:
		return fmt.Errorf("a part's output holds a workbook's frame %q", f[0])
	}
	return nil
}

// place moves a part's row groups by shift bytes, from where they were in
// the part's own file to where they are in the body. It checks that each
// column chunk lies within the part's size bytes written after its magic
// number, and refuses what the encoders never write (page indexes, bloom
// filters, file paths), which would lie elsewhere.
func place(md *metadata.FileMetaData, shift, size int64) error {
	lo, hi := int64(len(parquetMagic)), int64(len(parquetMagic))+size
	for _, rg := range md.RowGroups {
		if rg.FileOffset != nil {
			*rg.FileOffset += shift
		}
		for _, c := range rg.Columns {
			m := c.MetaData
			if m == nil || c.FilePath != nil || c.OffsetIndexOffset != nil || c.ColumnIndexOffset != nil || m.BloomFilterOffset != nil || m.IndexPageOffset != nil {
				return errors.New("a part's column chunk is not one this encoder writes")
			}
			first := m.DataPageOffset
			if m.DictionaryPageOffset != nil {
				first = min(first, *m.DictionaryPageOffset)
				*m.DictionaryPageOffset += shift
			}
			if first < lo || first+m.TotalCompressedSize > hi {
				return fmt.Errorf("a part's column chunk at %d, %d bytes, lies outside its %d bytes", first, m.TotalCompressedSize, size)
			}
			m.DataPageOffset += shift
			c.FileOffset += shift
		}
	}
	return nil
}

// endGroup ends the row group being gathered, if any, and writes out
// every row group.
func (e *parquetEncoder) endGroup() error {
	if e.group > 0 {
		j := parquetJob{endGroup: true}
		if e.cur.rows > 0 {
			j.batch = e.cur
		}
		e.group = 0
		e.ended++
		if err := e.handOff(j); err != nil {
			return err
		}
	}
	return e.Flush()
}
