package odata

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
)

// A skip token is the key of the last row of a page, written so that it is
// short, URL-safe and checked:
//
//	base64url(version 1 | zigzag varint per key part | CRC-32C)
//
// with no padding; the CRC covers the entity set's name and the bytes
// before it, so that a token from another set, an edited token or a
// garbled one is refused. It is a checksum, not a signature: the token
// only says where a page starts, which a client may as well say with
// $skip, so forging one grants nothing, and a signature would need a
// secret shared by every informe instance.
const skipTokenVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendSkipToken appends the skip token of key, for set, to dst.
func appendSkipToken(dst []byte, set *EntitySet, key []int64) []byte {
	var raw [1 + maxKeyParts*binary.MaxVarintLen64 + 4]byte
	b := append(raw[:0], skipTokenVersion)
	for _, k := range key {
		b = binary.AppendVarint(b, k)
	}
	b = binary.BigEndian.AppendUint32(b, tokenSum(set, b))
	return base64.RawURLEncoding.AppendEncode(dst, b)
}

func tokenSum(set *EntitySet, payload []byte) uint32 {
	sum := crc32.Update(0, castagnoli, []byte(set.def.Name))
	return crc32.Update(sum, castagnoli, payload)
}

// decodeSkipToken returns the key a $skiptoken of set holds, or a 400.
func decodeSkipToken(tok string, set *EntitySet) ([]int64, error) {
	bad := badRequest("$skiptoken", "$skiptoken is not valid: use the @odata.nextLink of a previous response as it is")
	b, err := base64.RawURLEncoding.Strict().DecodeString(tok)
	if err != nil || len(b) < 1+4 || b[0] != skipTokenVersion {
		return nil, bad
	}
	payload, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if tokenSum(set, payload) != sum {
		return nil, bad
	}
	key := make([]int64, set.keyParts())
	rest := payload[1:]
	for i := range key {
		v, n := binary.Varint(rest)
		// Only the shortest encoding is accepted, so that each key has one
		// token.
		if n <= 0 || n != len(binary.AppendVarint(nil, v)) {
			return nil, bad
		}
		key[i], rest = v, rest[n:]
	}
	if len(rest) != 0 {
		return nil, bad
	}
	return key, nil
}
