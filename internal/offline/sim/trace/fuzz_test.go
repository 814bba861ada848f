package trace

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/core/domains"
)

// FuzzRead feeds arbitrary bytes to Read in both formats. Read must not
// panic; it either fails with a *ParseError or returns Series that keep the
// package invariants.
func FuzzRead(f *testing.F) {
	for _, seed := range []struct {
		file  string
		azure bool
	}{
		{"worldcup98_sample.csv", false},
		{"azure_functions_sample.csv", true},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", seed.file))
		if err != nil {
			f.Fatal(err)
		}
		lines := bytes.SplitAfter(data, []byte{'\n'})
		head := bytes.Join(lines[:min(12, len(lines))], nil)
		f.Add(head, seed.azure)
		f.Add(head, !seed.azure) // the wrong format
	}
	for _, s := range []string{
		"",
		"period,count\n2020-01-01 00:00:00,1\n2020-01-01 00:05:00,2\n",
		"period,count\n2020-01-01T00:00:00+01:00,1.5\r\n2019-12-31T23:01:00Z,\"2\"\n",
		"period,count\n2020-01-01 00:01:00,1\n2020-01-01 00:00:00,2\n",
		"HashApp,minute_2,HashFunction,minute_1\na,1,f,2\n",
		"HashOwner,HashApp,HashFunction,Trigger,1,2\no,a,f,http,3,4\n",
		"HashFunction,minute_1,minute_3\nf,1,2\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, azure bool) {
		format := domains.FormatTimeseries
		if azure {
			format = domains.FormatAzureFunctions
		}
		got, err := Read(bytes.NewReader(data), "fuzz.csv", format)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v is not a *ParseError with a line", err)
			}
			if got != nil {
				t.Fatalf("Read returned series with error %v", err)
			}
			return
		}
		if len(got) == 0 || (!azure && len(got) != 1) {
			t.Fatalf("got %d series", len(got))
		}
		for _, s := range got {
			if len(s.Values) == 0 || len(s.Values) != len(got[0].Values) {
				t.Fatalf("series %q has %d values, first has %d", s.Name, len(s.Values), len(got[0].Values))
			}
			for i, v := range s.Values {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("series %q value %d = %v", s.Name, i, v)
				}
			}
		}
	})
}

// FuzzReadBounded feeds arbitrary bytes, plain or gzip-compressed, to Read
// within small limits. Read must not panic, and must either fail with a
// *ParseError located at a line the text has, or return Series within the
// limits: at most MaxRows rows, every value finite, >= 0 and <= MaxCount.
func FuzzReadBounded(f *testing.F) {
	lim := Limits{MaxBytes: 2048, MaxRows: 16, MaxLine: 128}
	for _, s := range []string{
		"\xef\xbb\xbfperiod,count\r\n2020-01-01 00:00:00,1\r\n2020-01-01 00:01:00,2\r\n", // BOM and CRLF: accepted
		"period,count\n2020-01-01 00:00:00,1e300\n",                                      // above MaxCount
		"period,count\n2020-01-01 00:00:00,NaN\n",                                        // not finite
		"period,count\n2020-01-01 00:00:00,1000000001\n",                                 // above MaxCount, plain digits
		"period,count\n" + strings.Repeat("9", 200) + "\n",                               // a line too long
		string(make([]byte, 300)),                                                        // zeros, as /dev/zero or a sparse file
		"period,count\n" + strings.Repeat("\n", 2100),                                    // past the byte limit
		minuteRows(17), // past the row limit
		"HashFunction,minute_1,minute_2\r\nf,1,1e300\r\n",             // azure, above MaxCount
		"HashFunction,minute_1\nf," + strings.Repeat("1", 140) + "\n", // azure, a line too long
	} {
		for _, gz := range []bool{false, true} {
			f.Add([]byte(s), false, gz)
			f.Add([]byte(s), true, gz)
		}
	}
	f.Fuzz(func(t *testing.T, text []byte, azure, compress bool) {
		format := domains.FormatTimeseries
		if azure {
			format = domains.FormatAzureFunctions
		}
		data := text
		if compress {
			data = gzipBytes(t, bytes.NewReader(text))
		}
		got, err := lim.Read(bytes.NewReader(data), "fuzz.csv", format)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v is not a *ParseError with a line", err)
			}
			if lines := bytes.Count(text, []byte{'\n'}) + 2; pe.Line > lines {
				t.Fatalf("error at line %d of a text of %d lines: %v", pe.Line, lines, err)
			}
			if got != nil {
				t.Fatalf("Read returned series with error %v", err)
			}
			return
		}
		if len(text) > int(lim.MaxBytes) {
			t.Fatalf("read %d bytes of text, limit %d", len(text), lim.MaxBytes)
		}
		if azure && len(got) > lim.MaxRows {
			t.Fatalf("%d rows, limit %d", len(got), lim.MaxRows)
		}
		for _, s := range got {
			for i, v := range s.Values {
				if !(v >= 0 && v <= MaxCount) {
					t.Fatalf("series %q value %d = %v", s.Name, i, v)
				}
			}
		}
	})
}
