package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/regimentd/regiment/domains"
)

// maxMinutes bounds the span of a timeseries trace (2^22 minutes, about 8
// years, 32 MiB of values), so that a stray date cannot ask for terabytes.
const maxMinutes = 1 << 22

// ParseError reports a malformed trace: which file, line and column, and what
// is wrong with it.
type ParseError struct {
	Name   string // the name given to Read, or the path given to ReadFile
	Line   int    // 1-based line number
	Column string // header name of the offending column; "" when the line as a whole is at fault
	Msg    string // what is wrong, and a hint where one helps
}

func (e *ParseError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("read trace %q: line %d: column %q: %s", e.Name, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("read trace %q: line %d: %s", e.Name, e.Line, e.Msg)
}

// ReadFile reads the trace at path in the given format; see Read.
func ReadFile(path string, format domains.TraceFormat) ([]Series, error) {
	if err := checkFormat(path, format); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == path {
			err = pe.Err // the path is in the message already
		}
		return nil, fmt.Errorf("read trace %q: %w", path, err)
	}
	return parse(data, path, format)
}

// Read reads a whole trace from r in the given format. name labels errors and,
// for a timeseries trace, names the Series (its base name). A malformed trace
// returns a *ParseError; nothing is returned for it in part.
func Read(r io.Reader, name string, format domains.TraceFormat) ([]Series, error) {
	if err := checkFormat(name, format); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read trace %q: %w", name, err)
	}
	return parse(data, name, format)
}

func checkFormat(name string, format domains.TraceFormat) error {
	switch format {
	case domains.FormatTimeseries, domains.FormatAzureFunctions:
		return nil
	}
	return fmt.Errorf("read trace %q: unknown format %q (want %q or %q)",
		name, format, domains.FormatTimeseries, domains.FormatAzureFunctions)
}

func parse(data []byte, name string, format domains.TraceFormat) ([]Series, error) {
	data, err := gunzip(data, name)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if format == domains.FormatAzureFunctions {
		return parseAzure(data, name)
	}
	return parseTimeseries(data, name)
}

// maxInflated bounds a gzip trace's decompressed size (1 GiB), so that a
// small crafted file cannot exhaust memory; the largest shipped trace
// inflates to 4 MB.
const maxInflated = 1 << 30

// gzipMagic opens every gzip stream (RFC 1952, section 2.3.1).
var gzipMagic = []byte{0x1f, 0x8b}

// gunzip returns data decompressed when it is a gzip stream, told by its magic
// bytes and not by name, and data itself otherwise. A corrupt or truncated
// stream is a *ParseError located at the line the decompressed text had
// reached, as for a malformed row.
func gunzip(data []byte, name string) ([]byte, error) {
	if !bytes.HasPrefix(data, gzipMagic) {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, &ParseError{Name: name, Line: 1, Msg: "corrupt gzip header: " + gzipReason(err)}
	}
	var out bytes.Buffer
	out.Grow(min(4*len(data), maxInflated))
	n, err := io.Copy(&out, io.LimitReader(zr, maxInflated+1))
	if err == nil && n > maxInflated {
		return nil, &ParseError{Name: name, Line: bytes.Count(out.Bytes(), []byte{'\n'}) + 1,
			Msg: fmt.Sprintf("decompresses to more than %d MiB; a trace is at most that", maxInflated>>20)}
	}
	if err != nil {
		return nil, &ParseError{Name: name, Line: bytes.Count(out.Bytes(), []byte{'\n'}) + 1,
			Msg: "gzip stream " + gzipReason(err) + "; the compressed file is damaged or cut short (copy it again)"}
	}
	return out.Bytes(), nil
}

// gzipReason says what a gzip error means for a trace file.
func gzipReason(err error) string {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "ends early (truncated)"
	case errors.Is(err, gzip.ErrChecksum):
		return "fails its checksum (corrupt)"
	}
	return "is corrupt (" + err.Error() + ")"
}

// lineReader yields the non-blank lines of a trace with their line numbers.
type lineReader struct {
	rest []byte
	n    int // number of the line last returned
}

// next returns the next non-blank line without its line ending, or ok false at
// the end of the data.
func (l *lineReader) next() (line []byte, ok bool) {
	for len(l.rest) > 0 {
		l.n++
		if i := bytes.IndexByte(l.rest, '\n'); i >= 0 {
			line, l.rest = l.rest[:i], l.rest[i+1:]
		} else {
			line, l.rest = l.rest, nil
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, true
		}
	}
	return nil, false
}

// header splits a header line into column names, trimmed and unquoted.
func header(line []byte) []string {
	f := strings.Split(string(line), ",")
	for i, s := range f {
		f[i] = unquote(s)
	}
	return f
}

// unquote trims blanks and one pair of surrounding double quotes.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	return s
}

// fieldCount is the number of comma-separated fields in line.
func fieldCount(line []byte) int { return bytes.Count(line, []byte{','}) + 1 }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// clip shortens a cell for an error message.
func clip(b []byte) string {
	const n = 40
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// parseCount parses one count cell. It returns a message, not an error, so
// that the hot path allocates nothing.
func parseCount(b []byte) (v float64, msg string) {
	// Fast path: plain digits, exact in a float64.
	if len(b) > 0 && len(b) <= 15 {
		var u uint64
		i := 0
		for ; i < len(b); i++ {
			d := b[i] - '0'
			if d > 9 {
				break
			}
			u = u*10 + uint64(d)
		}
		if i == len(b) {
			return float64(u), ""
		}
	}
	s := unquote(string(b))
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Sprintf("%q is out of range", clip(b))
	case err != nil:
		return 0, fmt.Sprintf("%q is not a number", clip(b))
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Sprintf("%q is not a finite number", clip(b))
	case v < 0:
		return 0, fmt.Sprintf("%q is negative; counts are >= 0", clip(b))
	}
	return v + 0, "" // + 0 turns -0 into 0
}

// timeLayouts are the accepted timeseries time formats, for messages.
const timeLayouts = "want YYYY-MM-DD HH:MM:SS or RFC 3339"

// parseTime parses a timeseries time cell to Unix seconds and nanoseconds.
func parseTime(b []byte) (secs int64, nsec int, ok bool) {
	if secs, ok := parseDateTime(b); ok {
		return secs, 0, true
	}
	s := unquote(string(b))
	if secs, ok := parseDateTime([]byte(s)); ok {
		return secs, 0, true
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, 0, false
	}
	return t.Unix(), t.Nanosecond(), true
}

// parseDateTime parses "YYYY-MM-DD HH:MM:SS" as UTC to Unix seconds, without
// allocating.
func parseDateTime(b []byte) (secs int64, ok bool) {
	if len(b) != 19 || b[4] != '-' || b[7] != '-' || b[10] != ' ' || b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	year, ok1 := atoi(b[0:4])
	month, ok2 := atoi(b[5:7])
	day, ok3 := atoi(b[8:10])
	hour, ok4 := atoi(b[11:13])
	minute, ok5 := atoi(b[14:16])
	sec, ok6 := atoi(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	if t.Day() != day { // time.Date normalised a day past the month's end
		return 0, false
	}
	return t.Unix(), true
}

// atoi parses a short run of decimal digits.
func atoi(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func parseTimeseries(data []byte, name string) ([]Series, error) {
	perr := func(line int, col, format string, args ...any) error {
		return &ParseError{Name: name, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
	}
	lr := lineReader{rest: data}
	hline, ok := lr.next()
	if !ok {
		return nil, perr(1, "", "empty trace; want a header line such as period,count, then time,count rows")
	}
	hdrLine := lr.n
	cols := header(hline)
	if _, azure := azureColumns(cols); azure {
		return nil, perr(hdrLine, "", "header has HashFunction and minute_N columns: this is an azure-functions trace, not timeseries")
	}
	if _, _, ok := parseTime(bytes.SplitN(hline, []byte{','}, 2)[0]); ok {
		return nil, perr(hdrLine, "", "missing header: the first line is a data row; want a header line such as period,count")
	}
	if len(cols) != 2 {
		return nil, perr(hdrLine, "", "header has %s, want 2 (time,count)", plural(len(cols), "column"))
	}

	vals := make([]float64, 0, min(bytes.Count(lr.rest, []byte{'\n'})+1, maxMinutes))
	var start, prev int64 // Unix seconds of the first and previous rows
	prevLine := 0
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		comma := bytes.IndexByte(line, ',')
		if comma < 0 || bytes.IndexByte(line[comma+1:], ',') >= 0 {
			return nil, perr(lr.n, "", "row has %s, header has 2", plural(fieldCount(line), "field"))
		}
		tcell, vcell := line[:comma], line[comma+1:]
		secs, nsec, ok := parseTime(tcell)
		if !ok {
			return nil, perr(lr.n, cols[0], "%q is not a time (%s)", clip(tcell), timeLayouts)
		}
		if nsec != 0 || secs%60 != 0 {
			return nil, perr(lr.n, cols[0], "%q is not on a whole minute; rows are one per minute", clip(tcell))
		}
		v, msg := parseCount(vcell)
		if msg != "" {
			return nil, perr(lr.n, cols[1], "%s", msg)
		}
		if prevLine == 0 {
			start = secs
		} else {
			switch {
			case secs == prev:
				return nil, perr(lr.n, cols[0], "duplicate time %q (also on line %d)", clip(tcell), prevLine)
			case secs < prev:
				return nil, perr(lr.n, cols[0], "time %q goes backwards (line %d is %s); rows must be in increasing time",
					clip(tcell), prevLine, time.Unix(prev, 0).UTC().Format(time.DateTime))
			}
		}
		i := (secs - start) / 60
		if i >= maxMinutes {
			return nil, perr(lr.n, cols[0], "time %q is %d minutes after the first row; a trace spans at most %d minutes",
				clip(tcell), i, maxMinutes)
		}
		for int64(len(vals)) < i {
			vals = append(vals, 0) // a minute without a row had no requests
		}
		vals = append(vals, v)
		prev, prevLine = secs, lr.n
	}
	if prevLine == 0 {
		return nil, perr(hdrLine+1, "", "no data rows after the header")
	}
	return []Series{{Name: filepath.Base(name), Start: time.Unix(start, 0).UTC(), Values: vals}}, nil
}

// Column roles in an azure-functions header, besides minute indices >= 0.
const (
	colIgnore = -1
	colName   = -2
)

// azureColumns classifies header columns: the minute index (0-based) for a
// minute_K or K column, colName for HashFunction, colIgnore otherwise. azure
// reports whether the header looks like an azure-functions header.
func azureColumns(cols []string) (kind []int, azure bool) {
	kind = make([]int, len(cols))
	hasName, hasMinute := false, false
	for j, c := range cols {
		kind[j] = colIgnore
		if c == "HashFunction" {
			kind[j] = colName
			hasName = true
			continue
		}
		if k, ok := minuteNumber(c); ok {
			kind[j] = k - 1
			hasMinute = true
		}
	}
	return kind, hasName && hasMinute
}

// minuteNumber parses a count column name, "minute_K" or "K", K >= 1 in
// canonical decimal.
func minuteNumber(c string) (int, bool) {
	c = strings.TrimPrefix(c, "minute_")
	if c == "" || c[0] == '0' || len(c) > 9 {
		return 0, false
	}
	k, ok := atoi([]byte(c))
	return k, ok
}

func parseAzure(data []byte, name string) ([]Series, error) {
	perr := func(line int, col, format string, args ...any) error {
		return &ParseError{Name: name, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
	}
	const want = "want HashFunction, HashOwner, HashApp and minute_1..minute_N columns"
	lr := lineReader{rest: data}
	hline, ok := lr.next()
	if !ok {
		return nil, perr(1, "", "empty trace; %s", want)
	}
	hdrLine := lr.n
	cols := header(hline)
	kind, _ := azureColumns(cols)

	nameCol, minutes := -1, 0
	for j, k := range kind {
		switch {
		case k == colName && nameCol >= 0:
			return nil, perr(hdrLine, cols[j], "duplicate column (also column %d)", nameCol+1)
		case k == colName:
			nameCol = j
		case k >= 0:
			minutes++
		}
	}
	if nameCol < 0 {
		switch {
		case len(cols) == 2:
			return nil, perr(hdrLine, "", "no HashFunction column in a 2-column header: this looks like a timeseries trace, not azure-functions")
		default:
			return nil, perr(hdrLine, "", "no HashFunction column; is the header missing? %s", want)
		}
	}
	if minutes == 0 {
		return nil, perr(hdrLine, "", "no minute_N columns: this is not an invocations trace; %s", want)
	}
	// The minute columns must be exactly minute_1..minute_N, in any order.
	seen := make([]int, minutes) // 1 + the column holding each minute
	for j, k := range kind {
		switch {
		case k < 0:
		case k >= minutes:
			return nil, perr(hdrLine, cols[j], "minute %d is past the last of %s; want minute_1..minute_%d without gaps",
				k+1, plural(minutes, "minute column"), minutes)
		case seen[k] != 0:
			return nil, perr(hdrLine, cols[j], "duplicate minute %d (also column %d)", k+1, seen[k])
		default:
			seen[k] = j + 1
		}
	}

	// One allocation for all values: a row has at least minutes cells of one
	// digit and minutes commas, which bounds the row count.
	rows := min(bytes.Count(lr.rest, []byte{'\n'})+1, len(lr.rest)/(2*minutes)+1)
	backing := make([]float64, rows*minutes)
	series := make([]Series, 0, rows)
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if n := fieldCount(line); n != len(cols) {
			return nil, perr(lr.n, "", "row has %s, header has %d", plural(n, "field"), len(cols))
		}
		if len(backing) < minutes { // unreachable given the bound above; kept for safety
			backing = make([]float64, minutes)
		}
		vals := backing[:minutes:minutes]
		backing = backing[minutes:]
		// The field count is checked, so each column's cell is there: p is
		// the start of cell j, and each case leaves p on the comma after it.
		var fn string
		p := 0
		for j, k := range kind {
			from := p
			if k >= 0 {
				// Fast path: plain digits up to the comma, as in parseCount.
				var u uint64
				for ; p < len(line); p++ {
					d := line[p] - '0'
					if d > 9 {
						break
					}
					u = u*10 + uint64(d)
				}
				if n := p - from; n > 0 && n <= 15 && (p == len(line) || line[p] == ',') {
					vals[k] = float64(u)
					p++
					continue
				}
			}
			end := bytes.IndexByte(line[from:], ',')
			if end < 0 {
				end = len(line) - from
			}
			cell := line[from : from+end]
			p = from + end + 1
			switch {
			case k >= 0:
				v, msg := parseCount(cell)
				if msg != "" {
					return nil, perr(lr.n, cols[j], "%s", msg)
				}
				vals[k] = v
			case k == colName:
				fn = unquote(string(cell))
				if fn == "" {
					return nil, perr(lr.n, cols[j], "empty function name")
				}
			}
		}
		series = append(series, Series{Name: fn, Values: vals})
	}
	if len(series) == 0 {
		return nil, perr(hdrLine+1, "", "no data rows after the header")
	}
	return series, nil
}
