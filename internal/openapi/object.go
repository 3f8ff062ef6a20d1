package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// object is a JSON object whose members keep the order they were given in,
// so that the document reads top down (openapi, info, paths, components)
// and a row's properties come in column order, as the encoders write them.
type object []member

type member struct {
	key   string
	value any
}

// obj returns an object of key, value pairs. A key that is not a string is
// a bug in the builder: obj panics, and every test of the package fails.
func obj(kv ...any) object {
	if len(kv)%2 != 0 {
		panic(fmt.Sprintf("openapi: obj given %d arguments", len(kv)))
	}
	o := make(object, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			panic(fmt.Sprintf("openapi: obj key %v is not a string", kv[i]))
		}
		o = append(o, member{k, kv[i+1]})
	}
	return o
}

// with returns o with the members kv appended; o itself is not changed.
func (o object) with(kv ...any) object {
	return append(append(object(nil), o...), obj(kv...)...)
}

// MarshalJSON writes the members in order. Nothing is HTML-escaped: the
// document is served as JSON, never embedded in HTML, and `<` reads better
// than \u003c in a pattern.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encode(&b, m.key); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := encode(&b, m.value); err != nil {
			return nil, fmt.Errorf("%s: %w", m.key, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encode appends v to b as compact JSON without HTML escaping.
func encode(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}
