package odata

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"strconv"
	"time"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/httplist"
)

// A skip token is the position of the last row of a page, written so that
// it is short, URL-safe and checked. In the set's own order it is that
// row's key:
//
//	base64url(version 1 | zigzag varint per key part | CRC-32C)
//
// and under a $orderby it is the row's sort values, then its key:
//
//	base64url(version 2 | per sort value: 0 for null, or 1, uvarint length, text | key parts | CRC-32C)
//
// with no padding. The CRC covers the entity set's name, the order, the
// rest of the query that made the page ([Query.binding]: $filter,
// $select, $top and $skip) and the bytes before it, so that a token from
// another set or another query, an edited token or a garbled one is
// refused: a position is only meaningful in the rows of the query that
// reached it. It is a checksum, not a
// signature: the token says where a page starts, in values the client can
// read in that very row, so forging one grants nothing, and a signature
// would need a secret shared by every informe instance. Every value is
// checked against its property's type before it reaches the database.
const (
	skipTokenVersion       = 1
	sortedSkipTokenVersion = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendSkipToken appends the skip token of a row, for set in order and
// the query options bind ([Query.binding]), to dst: its sort values (one
// per order item, nil for null) and its key.
func appendSkipToken(dst []byte, set *EntitySet, order []orderItem, bind []byte, sort [][]byte, key []int64) []byte {
	b := make([]byte, 0, 1+maxKeyParts*binary.MaxVarintLen64+4+len(sort)*16)
	if len(order) == 0 {
		b = append(b, skipTokenVersion)
	} else {
		b = append(b, sortedSkipTokenVersion)
		for _, v := range sort {
			if v == nil {
				b = append(b, 0)
				continue
			}
			b = append(b, 1)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		}
	}
	for _, k := range key {
		b = binary.AppendVarint(b, k)
	}
	b = binary.BigEndian.AppendUint32(b, tokenSum(set, order, bind, b))
	return base64.RawURLEncoding.AppendEncode(dst, b)
}

func tokenSum(set *EntitySet, order []orderItem, bind, payload []byte) uint32 {
	sum := crc32.Update(0, castagnoli, []byte(set.def.Name))
	for _, o := range order {
		item := "," + set.props[o.prop].name
		if o.desc {
			item += " desc"
		}
		sum = crc32.Update(sum, castagnoli, []byte(item))
	}
	sum = crc32.Update(sum, castagnoli, bind)
	return crc32.Update(sum, castagnoli, payload)
}

// binding returns the query options a skip token is bound to, besides
// the order, in a normal form: $filter as written (less surrounding
// blanks), the properties $select chose, and top and skip, the $top and
// $skip of the request the token is used in (-1 for no $top). A next link
// carries $top less the rows already sent, and no $skip.
func (q *Query) binding(top, skip int64) []byte {
	b := append([]byte("filter="), httplist.TrimOWS(q.filter)...)
	b = append(b, 0)
	b = append(b, "select="...)
	for _, i := range q.sel {
		b = append(b, q.set.props[i].name...)
		b = append(b, ',')
	}
	if q.sel == nil {
		b = append(b, '*')
	}
	b = append(b, 0)
	b = append(b, "top="...)
	b = strconv.AppendInt(b, top, 10)
	b = append(b, 0)
	b = append(b, "skip="...)
	return strconv.AppendInt(b, skip, 10)
}

// decodeSkipToken returns the key and sort values a $skiptoken of set in
// order, for the query options bind ([Query.binding]), holds, or a 400.
func decodeSkipToken(tok string, set *EntitySet, order []orderItem, bind []byte) ([]int64, []*string, error) {
	bad := badRequest("$skiptoken", reasonBadSkipToken, "$skiptoken is not valid: use the @odata.nextLink of a previous response as it is, "+
		"with the same $filter, $orderby, $select and $top, and no $skip")
	b, err := base64.RawURLEncoding.Strict().DecodeString(tok)
	version := byte(skipTokenVersion)
	if len(order) > 0 {
		version = sortedSkipTokenVersion
	}
	if err != nil || len(b) < 1+4 || b[0] != version {
		return nil, nil, bad
	}
	payload, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if tokenSum(set, order, bind, payload) != sum {
		return nil, nil, bad
	}
	rest := payload[1:]
	var sort []*string
	for _, o := range order {
		if len(rest) == 0 {
			return nil, nil, bad
		}
		flag := rest[0]
		rest = rest[1:]
		if flag == 0 {
			sort = append(sort, nil)
			continue
		}
		n, k := binary.Uvarint(rest)
		if flag != 1 || k <= 0 || k != len(binary.AppendUvarint(nil, n)) || n > uint64(len(rest)-k) {
			return nil, nil, bad
		}
		v := string(rest[k : k+int(n)])
		rest = rest[k+int(n):]
		if !validSortValue(set.props[o.prop].kind, v) {
			return nil, nil, bad
		}
		sort = append(sort, &v)
	}
	key := make([]int64, set.keyParts())
	for i := range key {
		v, n := binary.Varint(rest)
		// Only the shortest encoding is accepted, so that each key has one
		// token.
		if n <= 0 || n != len(binary.AppendVarint(nil, v)) {
			return nil, nil, bad
		}
		key[i], rest = v, rest[n:]
	}
	if len(rest) != 0 {
		return nil, nil, bad
	}
	return key, sort, nil
}

// validSortValue reports whether v is a sort value of kind k as
// [dataset.Query.Position] writes it.
func validSortValue(k dataset.Kind, v string) bool {
	var err error
	switch k {
	case dataset.Integer:
		_, err = strconv.ParseInt(v, 10, 64)
	case dataset.Decimal:
		if !isDecimal([]byte(v)) {
			return false
		}
	case dataset.Date:
		_, err = time.Parse("2006-01-02", v)
	case dataset.Timestamp:
		_, err = time.Parse("2006-01-02T15:04:05.000000", v)
	case dataset.Timestamptz:
		_, err = time.Parse("2006-01-02T15:04:05.000000Z", v)
	default:
		return validText(v)
	}
	return err == nil
}
