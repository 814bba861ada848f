package trace

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/regimentd/regiment/domains"
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
