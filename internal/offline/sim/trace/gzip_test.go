package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func gz(t *testing.T, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadGzip(t *testing.T) {
	const good = "period,count\n1998-04-30 21:30:00,2\n1998-04-30 21:31:00,11\n1998-04-30 21:32:00,16\n"
	plain := read(t, ts, good)

	t.Run("gzip is detected by its magic bytes, not its name", func(t *testing.T) {
		for _, name := range []string{"x.csv", "x.csv.gz", "x"} {
			got, err := Read(bytes.NewReader(gz(t, good)), name, ts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !slices.Equal(got[0].Values, plain[0].Values) || !got[0].Start.Equal(plain[0].Start) {
				t.Errorf("%s: got %v from %v, want %v from %v", name, got[0].Values, got[0].Start, plain[0].Values, plain[0].Start)
			}
		}
	})
	t.Run("a plain file named .gz is read as plain text", func(t *testing.T) {
		if _, err := Read(strings.NewReader(good), "x.csv.gz", ts); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ReadFile reads a gzip file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "trace.csv.gz")
		if err := os.WriteFile(path, gz(t, good), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path, ts)
		if err != nil || !slices.Equal(got[0].Values, plain[0].Values) {
			t.Fatalf("got %v, %v", got, err)
		}
	})

	// Each broken file is a *ParseError naming the file and a line, as a
	// malformed row is.
	long := "period,count\n" + strings.Repeat("1998-04-30 21:30:00,2\n", 1) // header + 1 row
	// One day: the times stay increasing.
	for i := 1; i < 1440; i++ {
		long += "1998-05-01 " + twoDigits(i/60%24) + ":" + twoDigits(i%60) + ":00,7\n"
	}
	whole := gz(t, long)
	corrupt := slices.Clone(whole)
	corrupt[len(corrupt)-6] ^= 0xff // inside the CRC-32 trailer
	for _, tc := range []struct {
		rule      string
		data      []byte
		line      int // 0: any line > 1
		msgHas    string
		sameAsCSV bool
	}{
		{rule: "a truncated stream is located at the line it reached", data: whole[:len(whole)/2], msgHas: "ends early (truncated)"},
		{rule: "a stream cut inside its header is line 1", data: whole[:5], line: 1, msgHas: "corrupt gzip header"},
		{rule: "a bad checksum is reported as corrupt", data: corrupt, msgHas: "fails its checksum"},
		{rule: "a malformed CSV inside gzip has the plain file's error", data: gz(t, "period,count\n1998-04-30 21:30:00,x\n"), sameAsCSV: true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.data), "dir/x.csv.gz", ts)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if tc.sameAsCSV {
				_, plainErr := Read(strings.NewReader("period,count\n1998-04-30 21:30:00,x\n"), "dir/x.csv.gz", ts)
				if err.Error() != plainErr.Error() {
					t.Fatalf("gzip: %v\nplain: %v", err, plainErr)
				}
				return
			}
			if pe.Name != "dir/x.csv.gz" || !strings.Contains(pe.Msg, tc.msgHas) {
				t.Errorf("err = %v, want name dir/x.csv.gz and %q", err, tc.msgHas)
			}
			if (tc.line == 0 && pe.Line <= 1) || (tc.line != 0 && pe.Line != tc.line) {
				t.Errorf("line %d, want %d (0: past the header)", pe.Line, tc.line)
			}
		})
	}
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }
