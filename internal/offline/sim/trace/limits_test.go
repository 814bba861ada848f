package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// small are limits small enough to cross in a test.
var small = Limits{MaxBytes: 4096, MaxRows: 20, MaxLine: 256}

// zeros is an endless run of zero bytes, as /dev/zero reads.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// minuteRows is a timeseries trace of n rows, one a minute, with its header.
func minuteRows(n int) string {
	var b strings.Builder
	b.WriteString("period,count\n")
	t := utc("2020-01-01 00:00:00")
	for i := range n {
		b.WriteString(t.Add(time.Duration(i) * time.Minute).Format(time.DateTime))
		b.WriteString(",1\n")
	}
	return b.String()
}

func gzipBytes(t testing.TB, r io.Reader) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := io.Copy(zw, r); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadStopsAtEachLimitWithALocatedError(t *testing.T) {
	tests := []struct {
		name string
		r    io.Reader
		line int
		msg  string
	}{
		{"an endless stream of zeros is a line too long", zeros{}, 1, "line longer than 256 bytes; a trace line is at most that long (raise REGIMENT_TRACE_MAX_LINE"},
		{"a long line after the header is located at its line", strings.NewReader("period,count\n\n" + strings.Repeat("9", 300) + "\n"), 3, "line longer than 256 bytes"},
		{"a line of exactly the limit is read", strings.NewReader("period,count\n2020-01-01 00:00:00," + strings.Repeat("0", 256-20) + "\n"), 0, ""},
		{"rows past the limit", strings.NewReader(minuteRows(21)), 22, "more than 20 data rows; a trace has at most that many (raise REGIMENT_TRACE_MAX_ROWS"},
		{"rows at the limit are read", strings.NewReader(minuteRows(20)), 0, ""},
		{"text past the byte limit", strings.NewReader("period,count\n" + strings.Repeat("\n", 5000)), 4085, "the text passes 4 KiB; a trace is at most that long (raise REGIMENT_TRACE_MAX_BYTES"},
		{"a gzip bomb stops at the byte limit of its text", bytes.NewReader(gzipBytes(t, io.LimitReader(zeros{}, 1<<20))), 1, "line longer than 256 bytes"},
		{"a gzip file of empty members stops at the byte limit of the file", bytes.NewReader(append(gzipBytes(t, strings.NewReader(minuteRows(2))),
			bytes.Repeat(gzipBytes(t, strings.NewReader("")), 300)...)), 4, "the file passes 4 KiB; a trace is at most that long"},
		{"a gzip bomb of blank lines stops at the byte limit", bytes.NewReader(gzipBytes(t, strings.NewReader("period,count\n"+strings.Repeat("\n", 1<<20)))), 4085, "the text passes 4 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := small.Read(tt.r, "x.csv", ts)
			if tt.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if pe.Line != tt.line || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("err = %v, want line %d and %q", err, tt.line, tt.msg)
			}
		})
	}
}

func TestReadRefusesCountsOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		name, cell, msg string
	}{
		{"1e300 is above the most requests a minute", "1e300", `"1e300" is above 1e+09 requests a minute`},
		{"a count of plain digits above 1e9 is refused", "1000000001", `"1000000001" is above 1e+09`},
		{"sixteen digits take the slow path and are refused too", "1234567890123456", `is above 1e+09`},
		{"NaN is not finite", "NaN", `"NaN" is not a finite number`},
		{"Inf is not finite", "+Inf", `"+Inf" is not a finite number`},
		{"1e400 is out of range", "1e400", `"1e400" is out of range`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []struct {
				format  string
				text    string
				line    int
				col     string
				formatT string
			}{
				{"timeseries", "period,count\n2020-01-01 00:00:00,1\n2020-01-01 00:01:00," + tc.cell + "\n", 3, "count", string(ts)},
				{"azure", "HashFunction,minute_1,minute_2\r\nf,1,2\r\ng,3," + tc.cell + "\r\n", 3, "minute_2", string(azure)},
			} {
				_, err := Read(strings.NewReader(f.text), "x.csv", ts)
				if f.format == "azure" {
					_, err = Read(strings.NewReader(f.text), "x.csv", azure)
				}
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line != f.line || pe.Column != f.col || !strings.Contains(pe.Msg, tc.msg) {
					t.Errorf("%s: err = %v, want line %d column %q and %q", f.format, err, f.line, f.col, tc.msg)
				}
			}
		})
	}
	if got := read(t, ts, "period,count\n2020-01-01 00:00:00,1e9\n2020-01-01 00:01:00,1000000000\n"); got[0].Values[0] != 1e9 || got[0].Values[1] != 1e9 {
		t.Errorf("a count of exactly 1e9 reads as %v", got[0].Values)
	}
}

func TestReadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.csv")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil { // 3 GiB of zeros, none on disk
		t.Fatal(err)
	}
	f.Close()
	for _, tc := range []struct {
		name, path, want string
	}{
		{"a FIFO is refused without waiting for a writer", fifo, `read trace "` + fifo + `": is a named pipe (FIFO), not a regular file`},
		{"a directory is refused", dir, `read trace "` + dir + `": is a directory, not a regular file`},
		{"/dev/zero is refused", "/dev/zero", `read trace "/dev/zero": is a character device, not a regular file`},
		{"a 3 GiB sparse file stops at its first line", sparse, `read trace "` + sparse + `": line 1: line longer than 1 MiB`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := ReadFile(tc.path, ts)
			if err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %v, want %s", err, tc.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestLimitsFromEnv(t *testing.T) {
	t.Setenv(EnvMaxBytes, "1000")
	t.Setenv(EnvMaxRows, "")
	t.Setenv(EnvMaxLine, "77")
	got, err := LimitsFromEnv()
	if err != nil || got != (Limits{MaxBytes: 1000, MaxRows: DefaultMaxRows, MaxLine: 77}) {
		t.Fatalf("LimitsFromEnv = %+v, %v", got, err)
	}
	if _, err := Read(strings.NewReader(minuteRows(2)+strings.Repeat("9", 80)+"\n"), "x.csv", ts); err == nil || !strings.Contains(err.Error(), "line longer than 77 bytes") {
		t.Errorf("Read does not follow %s: %v", EnvMaxLine, err)
	}
	for _, bad := range []string{"x", "-1", "0", "1e6", "9999999999999999"} {
		t.Setenv(EnvMaxRows, bad)
		if _, err := LimitsFromEnv(); err == nil || !strings.Contains(err.Error(), EnvMaxRows) {
			t.Errorf("%s=%s: err = %v", EnvMaxRows, bad, err)
		}
	}
}

func TestShippedTracesPassTheDefaultLimitsWithMargin(t *testing.T) {
	// A tenth of each default still reads every shipped trace.
	tenth := Limits{MaxBytes: DefaultMaxBytes / 10, MaxRows: DefaultMaxRows / 10, MaxLine: DefaultMaxLine / 10}
	for _, p := range []struct {
		path string
		fmt  string
	}{{worldcupPath, string(ts)}, {azurePath, string(azure)}} {
		format := ts
		if p.fmt == string(azure) {
			format = azure
		}
		if _, err := tenth.ReadFile(p.path, format); err != nil {
			t.Errorf("%s: %v", p.path, err)
		}
	}
}
