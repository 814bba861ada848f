package store

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendStep appends the stored JSON form of st: what encoding/json writes
// for st with its Episode left out (the id is the sub-bucket name). It is
// the Appender's hot path, written out by hand because reflection and map
// sorting doubled the cost of recording a step. keys is scratch space for
// sorting map keys and is returned for reuse. encoding/json decodes the
// result (see TestAppendStepMatchesEncodingJSON).
func appendStep(b []byte, st *Step, keys []string) ([]byte, []string) {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, st.Seq, 10)
	b = append(b, `,"at":"`...)
	b = st.At.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","obs":`...)
	if st.Obs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, v := range st.Obs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendFloat(b, v)
		}
		b = append(b, ']')
	}
	b, keys = appendMap(b, `,"action":`, st.Action, keys)
	if len(st.Guards) > 0 {
		b = append(b, `,"guards":[`...)
		for i, g := range st.Guards {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendString(b, g.Name)
			b = append(b, `,"target":`...)
			b = appendString(b, g.Target)
			b = append(b, `,"before":`...)
			b = appendFloat(b, g.Before)
			b = append(b, `,"after":`...)
			b = appendFloat(b, g.After)
			if g.Reason != "" {
				b = append(b, `,"reason":`...)
				b = appendString(b, g.Reason)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b, keys = appendMap(b, `,"reward":`, st.Reward, keys)
	b, keys = appendMap(b, `,"outcome":`, st.Outcome, keys)
	return append(b, '}'), keys
}

// decodeStep decodes a stored step of episode id.
func decodeStep(id string, v []byte) (Step, error) {
	var st Step
	err := json.Unmarshal(v, &st)
	st.Episode = id
	return st, err
}

// appendMap appends field and m with sorted keys, or nothing for an empty
// map (the fields are omitempty).
func appendMap(b []byte, field string, m map[string]float64, keys []string) ([]byte, []string) {
	if len(m) == 0 {
		return b, keys
	}
	keys = keys[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, field...)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendFloat(b, m[k])
	}
	return append(b, '}'), keys
}

// appendFloat formats a finite v as encoding/json does: shortest
// representation, exponent form outside [1e-6, 1e21) with a trimmed
// exponent ("1e-07" becomes "1e-7").
func appendFloat(b []byte, v float64) []byte {
	abs := math.Abs(v)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string with encoding/json's escaping:
// control characters, quotes, backslashes, <, >, &, U+2028 and U+2029 are
// escaped, invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
