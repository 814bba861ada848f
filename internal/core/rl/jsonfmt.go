package rl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// formatHeader re-indents the compact JSON document js for diffs: objects
// nest with two-space indentation, one field a line; an array of objects
// puts one compact element on each line; other arrays stay on one line.
// Field order and number spelling are kept.
func formatHeader(js []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var b bytes.Buffer
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if err := formatValue(dec, &b, tok, "", false); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("format header: trailing data")
	}
	return b.Bytes(), nil
}

// formatValue writes the value starting with token tok, already read from
// dec; compact writes it on one line.
func formatValue(dec *json.Decoder, b *bytes.Buffer, tok json.Token, indent string, compact bool) error {
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return formatObject(dec, b, indent, compact)
		}
		return formatArray(dec, b, indent, compact)
	default:
		v, err := json.Marshal(t)
		if err != nil {
			return err
		}
		b.Write(v)
		return nil
	}
}

func formatObject(dec *json.Decoder, b *bytes.Buffer, indent string, compact bool) error {
	b.WriteByte('{')
	inner := indent + "  "
	for i := 0; dec.More(); i++ {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := json.Marshal(key)
		switch {
		case compact && i > 0:
			b.WriteString(", ")
		case !compact && i > 0:
			b.WriteString(",\n" + inner)
		case !compact:
			b.WriteString("\n" + inner)
		}
		b.Write(k)
		b.WriteString(": ")
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if err := formatValue(dec, b, tok, inner, compact); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return err
	}
	if !compact && b.Bytes()[b.Len()-1] != '{' {
		b.WriteString("\n" + indent)
	}
	b.WriteByte('}')
	return nil
}

func formatArray(dec *json.Decoder, b *bytes.Buffer, indent string, compact bool) error {
	b.WriteByte('[')
	inner := indent + "  "
	perLine := false
	for i := 0; dec.More(); i++ {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if i == 0 {
			d, ok := tok.(json.Delim)
			perLine = !compact && ok && d == '{'
		}
		switch {
		case perLine && i == 0:
			b.WriteString("\n" + inner)
		case perLine:
			b.WriteString(",\n" + inner)
		case i > 0:
			b.WriteString(", ")
		}
		if err := formatValue(dec, b, tok, inner, true); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return err
	}
	if perLine {
		b.WriteString("\n" + indent)
	}
	b.WriteByte(']')
	return nil
}
