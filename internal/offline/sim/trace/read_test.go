package trace

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

const (
	ts    = domains.FormatTimeseries
	azure = domains.FormatAzureFunctions
)

func read(t *testing.T, format domains.TraceFormat, text string) []Series {
	t.Helper()
	s, err := Read(strings.NewReader(text), "dir/x.csv", format)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return s
}

func utc(s string) time.Time {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestReadTimeseries(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		wantStart time.Time
		want      []float64
	}{
		{
			name:      "one row per minute",
			text:      "period,count\n1998-04-30 21:30:00,2\n1998-04-30 21:31:00,11\n1998-04-30 21:32:00,16\n",
			wantStart: utc("1998-04-30 21:30:00"),
			want:      []float64{2, 11, 16},
		},
		{
			name:      "minutes without a row are zero",
			text:      "period,count\n2020-01-01 00:00:00,5\n2020-01-01 00:01:00,6\n2020-01-01 00:04:00,7\n2020-01-01 00:06:00,8\n",
			wantStart: utc("2020-01-01 00:00:00"),
			want:      []float64{5, 6, 0, 0, 7, 0, 8},
		},
		{
			name:      "a gap across midnight and a month end is filled",
			text:      "t,n\n2020-01-31 23:59:00,1\n2020-02-01 00:02:00,2\n",
			wantStart: utc("2020-01-31 23:59:00"),
			want:      []float64{1, 0, 0, 2},
		},
		{
			name:      "RFC 3339 times are read and Start is UTC",
			text:      "time,requests\n2020-06-01T12:00:00+02:00,1\n2020-06-01T10:01:00Z,2\n",
			wantStart: utc("2020-06-01 10:00:00"),
			want:      []float64{1, 2},
		},
		{
			name:      "CRLF, BOM, quotes, blank lines and fractional counts are accepted",
			text:      "\xef\xbb\xbf\"period\",\"count\"\r\n\r\n\"1998-04-30 21:30:00\",\"2\"\r\n1998-04-30 21:31:00, 2.5\r\n\r\n",
			wantStart: utc("1998-04-30 21:30:00"),
			want:      []float64{2, 2.5},
		},
		{
			name:      "a single row is a one-minute series",
			text:      "period,count\n1998-04-30 21:30:00,0",
			wantStart: utc("1998-04-30 21:30:00"),
			want:      []float64{0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := read(t, ts, tt.text)
			if len(got) != 1 {
				t.Fatalf("got %d series, want 1", len(got))
			}
			s := got[0]
			if s.Name != "x.csv" {
				t.Errorf("Name = %q, want the base name %q", s.Name, "x.csv")
			}
			if !s.Start.Equal(tt.wantStart) || s.Start.Location() != time.UTC {
				t.Errorf("Start = %v, want %v in UTC", s.Start, tt.wantStart)
			}
			if !slices.Equal(s.Values, tt.want) {
				t.Errorf("Values = %v, want %v", s.Values, tt.want)
			}
		})
	}
}

// azureText builds an azure-functions trace with the given header and rows.
func azureText(header string, rows ...string) string {
	return header + "\n" + strings.Join(rows, "\n") + "\n"
}

func TestReadAzure(t *testing.T) {
	base := read(t, azure, azureText("HashFunction,HashOwner,HashApp,minute_1,minute_2,minute_3",
		"f1,o1,a1,1,2,3",
		"f2,o2,a2,0,10,0",
	))
	want := []Series{
		{Name: "f1", Values: []float64{1, 2, 3}},
		{Name: "f2", Values: []float64{0, 10, 0}},
	}
	equal := func(t *testing.T, got []Series) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("got %d series, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i].Name != want[i].Name || !got[i].Start.IsZero() || !slices.Equal(got[i].Values, want[i].Values) {
				t.Errorf("series %d = %+v, want %+v", i, got[i], want[i])
			}
		}
	}
	equal(t, base)

	t.Run("hash columns are read by name in any order", func(t *testing.T) {
		hash := []string{"HashFunction", "HashOwner", "HashApp"}
		cell := map[string][2]string{"HashFunction": {"f1", "f2"}, "HashOwner": {"o1", "o2"}, "HashApp": {"a1", "a2"}}
		for _, perm := range permutations(hash) {
			// The hash columns go first, last, or around the minute columns.
			layouts := [][]string{
				append(slices.Clone(perm), "minute_1", "minute_2", "minute_3"),
				append([]string{"minute_1", "minute_2", "minute_3"}, perm...),
				{perm[0], "minute_1", perm[1], "minute_2", "minute_3", perm[2]},
			}
			for _, cols := range layouts {
				row := func(r int) string {
					var f []string
					for _, c := range cols {
						if v, ok := cell[c]; ok {
							f = append(f, v[r])
						} else {
							f = append(f, fmt.Sprint(want[r].Values[c[len(c)-1]-'1']))
						}
					}
					return strings.Join(f, ",")
				}
				name := strings.Join(cols, ",")
				t.Run(name, func(t *testing.T) {
					equal(t, read(t, azure, azureText(name, row(0), row(1))))
				})
			}
		}
	})
	t.Run("minute columns are placed by number, not position", func(t *testing.T) {
		equal(t, read(t, azure, azureText("minute_3,HashFunction,minute_1,minute_2",
			"3,f1,1,2",
			"0,f2,0,10",
		)))
	})
	t.Run("original Microsoft layout: bare minute numbers and a Trigger column", func(t *testing.T) {
		equal(t, read(t, azure, azureText("HashOwner,HashApp,HashFunction,Trigger,1,2,3",
			"o1,a1,f1,http,1,2,3",
			"o2,a2,f2,timer,0,10,0",
		)))
	})
	t.Run("CRLF, BOM, quotes and blank lines are accepted", func(t *testing.T) {
		equal(t, read(t, azure, "\xef\xbb\xbf\"HashFunction\",HashOwner,HashApp,minute_1,minute_2,minute_3\r\n"+
			"\"f1\",o1,a1,1,2,\"3\"\r\n\r\nf2,o2,a2,0,1e1,0\r\n"))
	})
}

func permutations(s []string) [][]string {
	if len(s) <= 1 {
		return [][]string{slices.Clone(s)}
	}
	var out [][]string
	for i := range s {
		rest := slices.Concat(s[:i], s[i+1:])
		for _, p := range permutations(rest) {
			out = append(out, append([]string{s[i]}, p...))
		}
	}
	return out
}

// rows returns n well-formed azure-functions rows with 3 minutes each.
func rows(n int) []string {
	var r []string
	for i := range n {
		r = append(r, fmt.Sprintf("f%d,o,a,%d,0,1", i, i))
	}
	return r
}

func TestReadMalformed(t *testing.T) {
	const azHeader = "HashFunction,HashOwner,HashApp,minute_1,minute_2,minute_3"
	tests := []struct {
		name     string
		format   domains.TraceFormat
		text     string
		wantLine int
		wantCol  string
		wantMsg  string // substring of the message
	}{
		// timeseries
		{"empty timeseries file", ts, "", 1, "", "empty trace"},
		{"timeseries file of blank lines", ts, "\n \r\n\t\n", 1, "", "empty trace"},
		{"timeseries without a header", ts, "1998-04-30 21:30:00,2\n1998-04-30 21:31:00,3\n", 1, "", "missing header"},
		{"azure trace read as timeseries", ts, azureText(azHeader, rows(2)...), 1, "", "this is an azure-functions trace"},
		{"timeseries header with three columns", ts, "a,b,c\n", 1, "", "header has 3 columns, want 2"},
		{"timeseries header only", ts, "period,count\n\n", 2, "", "no data rows"},
		{"timeseries count not a number", ts, "period,count\n2020-01-01 00:00:00,1\n2020-01-01 00:01:00,abc\n", 3, "count", `"abc" is not a number`},
		{"timeseries count empty", ts, "period,count\n2020-01-01 00:00:00,\n", 2, "count", `"" is not a number`},
		{"timeseries count negative", ts, "period,count\n2020-01-01 00:00:00,-1\n", 2, "count", "negative"},
		{"timeseries count NaN", ts, "period,count\n2020-01-01 00:00:00,NaN\n", 2, "count", "not a finite number"},
		{"timeseries count infinite", ts, "period,count\n2020-01-01 00:00:00,+Inf\n", 2, "count", "not a finite number"},
		{"timeseries count out of range", ts, "period,count\n2020-01-01 00:00:00,1e999\n", 2, "count", "out of range"},
		{"timeseries time not a time", ts, "period,count\n2020-01-01 00:00:00,1\nyesterday,2\n", 3, "period", `"yesterday" is not a time`},
		{"timeseries time not a date", ts, "period,count\n2020-02-30 00:00:00,1\n", 2, "period", "is not a time"},
		{"timeseries time between minutes", ts, "period,count\n2020-01-01 00:00:30,1\n", 2, "period", "not on a whole minute"},
		{"timeseries time duplicated", ts, "period,count\n2020-01-01 00:00:00,1\n2020-01-01 00:01:00,1\n2020-01-01 00:01:00,1\n", 4, "period", "duplicate time \"2020-01-01 00:01:00\" (also on line 3)"},
		{"timeseries time going backwards", ts, "period,count\n2020-01-01 00:05:00,1\n\n2020-01-01 00:04:00,1\n", 4, "period", "goes backwards (line 2 is 2020-01-01 00:05:00)"},
		{"timeseries span too long", ts, "period,count\n1990-01-01 00:00:00,1\n2020-01-01 00:00:00,1\n", 3, "period", "a trace spans at most"},
		{"timeseries row with one field", ts, "period,count\n2020-01-01 00:00:00,1\n2020-01-01 00:01:00\n", 3, "", "row has 1 field, header has 2"},
		{"timeseries row with three fields", ts, "period,count\n2020-01-01 00:00:00,1,2\n", 2, "", "row has 3 fields, header has 2"},
		// azure-functions
		{"empty azure file", azure, "", 1, "", "empty trace"},
		{"timeseries trace read as azure", azure, "period,count\n1998-04-30 21:30:00,2\n", 1, "", "looks like a timeseries trace"},
		{"azure without a header", azure, azureText("f0,o,a,1,2,3", rows(2)...), 1, "", "no HashFunction column; is the header missing?"},
		{"azure durations file read as invocations", azure, "HashOwner,HashApp,HashFunction,Average,Count\no,a,f,1,2\n", 1, "", "no minute_N columns"},
		{"azure minute columns with a gap", azure, "HashFunction,minute_1,minute_3\nf,1,2\n", 1, "minute_3", "want minute_1..minute_2 without gaps"},
		{"azure minute column twice", azure, "HashFunction,minute_1,minute_2,minute_1\nf,1,2,3\n", 1, "minute_1", "duplicate minute 1 (also column 2)"},
		{"azure HashFunction column twice", azure, "HashFunction,HashFunction,minute_1\nf,f,1\n", 1, "HashFunction", "duplicate column (also column 1)"},
		{"azure header only", azure, azHeader + "\n", 2, "", "no data rows"},
		{"azure short row", azure, azureText(azHeader, "f0,o,a,1,2,3", "f1,o,a,1,2"), 3, "", "row has 5 fields, header has 6"},
		{"azure long row", azure, azureText(azHeader, "f0,o,a,1,2,3,4"), 2, "", "row has 7 fields, header has 6"},
		{"azure cell not a number", azure, azureText(azHeader, append(rows(15), "f,o,a,1,2,abc")...), 17, "minute_3", `"abc" is not a number`},
		{"azure cell empty", azure, azureText(azHeader, "f0,o,a,1,,3"), 2, "minute_2", `"" is not a number`},
		{"azure cell negative", azure, azureText(azHeader, "f0,o,a,-4,2,3"), 2, "minute_1", `"-4" is negative`},
		{"azure function name empty", azure, azureText(azHeader, "f0,o,a,1,2,3", `"",o,a,1,2,3`), 3, "HashFunction", "empty function name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Read(strings.NewReader(tt.text), "x.csv", tt.format)
			if err == nil {
				t.Fatalf("Read = %v, nil; want an error", s)
			}
			if s != nil {
				t.Errorf("Read returned %d series with its error, want none", len(s))
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %q is a %T, want *ParseError", err, err)
			}
			if pe.Name != "x.csv" || pe.Line != tt.wantLine || pe.Column != tt.wantCol {
				t.Errorf("error at %q line %d column %q, want %q line %d column %q (%v)",
					pe.Name, pe.Line, pe.Column, "x.csv", tt.wantLine, tt.wantCol, err)
			}
			if !strings.Contains(pe.Msg, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", pe.Msg, tt.wantMsg)
			}
			prefix := fmt.Sprintf("read trace %q: line %d: ", "x.csv", tt.wantLine)
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error %q does not start with %q", err, prefix)
			}
		})
	}
}

func TestParseErrorText(t *testing.T) {
	text := azureText("HashFunction,HashOwner,HashApp,minute_1,minute_2,minute_3", append(rows(15), "f,o,a,1,2,abc")...)
	_, err := Read(strings.NewReader(text), "x.csv", azure)
	want := `read trace "x.csv": line 17: column "minute_3": "abc" is not a number`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestReadUnknownFormat(t *testing.T) {
	for _, f := range []domains.TraceFormat{"", "csv"} {
		_, err := Read(strings.NewReader("period,count\n"), "x.csv", f)
		if err == nil || !strings.Contains(err.Error(), "unknown format") {
			t.Errorf("format %q: error = %v, want unknown format", f, err)
		}
	}
}

func TestReadFileMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.csv")
	_, err := ReadFile(path, ts)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("error = %v, want one naming %s and wrapping fs.ErrNotExist", err, path)
	}
}

func TestReadFileSamples(t *testing.T) {
	t.Run("worldcup98 gaps are filled with zeros", func(t *testing.T) {
		got, err := ReadFile(filepath.Join("testdata", "worldcup98_sample.csv"), ts)
		if err != nil {
			t.Fatal(err)
		}
		s := got[0]
		if s.Name != "worldcup98_sample.csv" || !s.Start.Equal(utc("1998-05-17 05:09:00")) {
			t.Errorf("Name, Start = %q, %v", s.Name, s.Start)
		}
		// 300 rows from 05:09 to 10:16: 308 minutes, 8 of them without a row.
		if len(s.Values) != 308 {
			t.Fatalf("len(Values) = %d, want 308", len(s.Values))
		}
		for _, tm := range []string{"06:09", "06:19", "06:20", "06:25", "09:43", "09:44", "09:45", "09:47"} {
			if i := s.Index(utc("1998-05-17 " + tm + ":00")); s.Values[i] != 0 {
				t.Errorf("minute %s (index %d) = %v, want 0 (no row)", tm, i, s.Values[i])
			}
		}
		if s.Values[0] != 737 || s.Values[307] != 798 {
			t.Errorf("first, last = %v, %v; want 737, 798", s.Values[0], s.Values[307])
		}
	})
	t.Run("azure functions sample", func(t *testing.T) {
		got, err := ReadFile(filepath.Join("testdata", "azure_functions_sample.csv"), azure)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 200 {
			t.Fatalf("got %d series, want 200", len(got))
		}
		total := 0.0
		for _, s := range got {
			if len(s.Values) != 120 {
				t.Fatalf("series %s has %d minutes, want 120", s.Name, len(s.Values))
			}
			for _, v := range s.Values {
				total += v
			}
		}
		if total != 12405 {
			t.Errorf("total invocations = %v, want 12405", total)
		}
		// Row 117 (line 118) is the busiest: 118 invocations in minute 46.
		top := got[Rank(got)[0]]
		if !strings.HasPrefix(top.Name, "4695bfb40a0a") || top.Max() != 118 || top.Values[45] != 118 {
			t.Errorf("busiest = %s with peak %v, want 4695bfb40a0a... with 118 at minute 46", top.Name, top.Max())
		}
	})
}
