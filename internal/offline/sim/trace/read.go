package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/infile"
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

// ReadFile reads the trace at path in the given format, within the limits
// of LimitsFromEnv; see Limits.Read. path must name a regular file: a FIFO,
// a device or a directory is refused at once, without reading it.
func ReadFile(path string, format domains.TraceFormat) ([]Series, error) {
	lim, err := LimitsFromEnv()
	if err != nil {
		return nil, fmt.Errorf("read trace %q: %w", path, err)
	}
	return lim.ReadFile(path, format)
}

// ReadFile reads the trace at path in the given format within l; see Read.
func (l Limits) ReadFile(path string, format domains.TraceFormat) ([]Series, error) {
	if err := checkFormat(path, format); err != nil {
		return nil, err
	}
	f, err := infile.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == path {
			err = pe.Err // the path is in the message already
		}
		return nil, fmt.Errorf("read trace %q: %w", path, err)
	}
	defer f.Close()
	return l.Read(f, path, format)
}

// Read reads a whole trace from r in the given format, within the limits of
// LimitsFromEnv; see Limits.Read.
func Read(r io.Reader, name string, format domains.TraceFormat) ([]Series, error) {
	lim, err := LimitsFromEnv()
	if err != nil {
		return nil, fmt.Errorf("read trace %q: %w", name, err)
	}
	return lim.Read(r, name, format)
}

// Read reads a whole trace from r in the given format, streaming it a line
// at a time within l. name labels errors and, for a timeseries trace, names
// the Series (its base name). A malformed trace, or one past a limit,
// returns a *ParseError; nothing is returned for it in part.
func (l Limits) Read(r io.Reader, name string, format domains.TraceFormat) ([]Series, error) {
	if err := checkFormat(name, format); err != nil {
		return nil, err
	}
	lr, err := newLineReader(r, name, l.withDefaults())
	if err != nil {
		return nil, err
	}
	if format == domains.FormatAzureFunctions {
		return parseAzure(lr, name)
	}
	return parseTimeseries(lr, name)
}

func checkFormat(name string, format domains.TraceFormat) error {
	switch format {
	case domains.FormatTimeseries, domains.FormatAzureFunctions:
		return nil
	}
	return fmt.Errorf("read trace %q: unknown format %q (want %q or %q)",
		name, format, domains.FormatTimeseries, domains.FormatAzureFunctions)
}

// gzipMagic opens every gzip stream (RFC 1952, section 2.3.1).
var gzipMagic = []byte{0x1f, 0x8b}

// bom is the UTF-8 byte order mark some tools write at a file's start.
var bom = []byte("\xef\xbb\xbf")

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

// lineReader streams the non-blank lines of a trace with their line numbers,
// within its limits: a line, the text and the rows are each bounded, and
// crossing a bound is a *ParseError at the line that crossed it. The text
// is the file's bytes, decompressed when it is gzip; a leading byte order
// mark and the CR of CRLF line endings are dropped.
type lineReader struct {
	name  string
	lim   Limits
	br    *bufio.Reader
	gz    bool   // br reads decompressed gzip
	buf   []byte // a line longer than br's buffer, assembled
	n     int    // number of the line last returned
	text  int64  // bytes of text read so far
	lines int    // non-blank lines returned so far (the header included)
	err   error  // why next stopped early: a *ParseError; nil at the end of the text
}

// readBuf is the size of a lineReader's buffer: lines up to it are
// returned without copying.
const readBuf = 64 << 10

func newLineReader(r io.Reader, name string, lim Limits) (*lineReader, error) {
	// The file itself is bounded too: a gzip stream can be long and
	// inflate to nothing.
	raw := &limitedReader{r: r, n: lim.MaxBytes + 1}
	br := bufio.NewReaderSize(raw, readBuf)
	lr := &lineReader{name: name, lim: lim, br: br}
	if magic, _ := br.Peek(len(gzipMagic)); bytes.Equal(magic, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &ParseError{Name: name, Line: 1, Msg: "corrupt gzip header: " + gzipReason(err)}
		}
		lr.br, lr.gz = bufio.NewReaderSize(zr, readBuf), true
	}
	if b, _ := lr.br.Peek(len(bom)); bytes.Equal(b, bom) {
		lr.br.Discard(len(bom))
	}
	return lr, nil
}

// limitedReader is io.LimitReader that fails, rather than ends, past its
// limit, so that a file cut short is not taken for a whole one.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errFileTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// errFileTooLarge is what limitedReader returns past its limit.
var errFileTooLarge = errors.New("file past the byte limit")

// next returns the next non-blank line without its line ending, or ok false
// at the end of the text or at a limit or read error (then l.err is set).
// The line is valid until the next call.
func (l *lineReader) next() (line []byte, ok bool) {
	for l.err == nil {
		line, err := l.readLine()
		if err != nil {
			if err != io.EOF || len(line) == 0 {
				return nil, false
			}
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if err == io.EOF {
				return nil, false
			}
			continue
		}
		if l.lines++; l.lines > l.lim.MaxRows+1 { // + the header
			l.err = &ParseError{Name: l.name, Line: l.n,
				Msg: fmt.Sprintf("more than %d data rows; a trace has at most that many (raise %s to read a larger one)",
					l.lim.MaxRows, EnvMaxRows)}
			return nil, false
		}
		return line, true
	}
	return nil, false
}

// readLine reads the next line, blank or not, without its '\n', and counts
// it. It returns io.EOF at the end of the text (with the last line if it
// had no '\n'), and another error, set in l.err too, at a limit or a read
// error.
func (l *lineReader) readLine() ([]byte, error) {
	l.n++
	l.buf = l.buf[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		l.text += int64(len(chunk))
		switch {
		case len(l.buf)+len(chunk) > l.lim.MaxLine+1: // + its '\n'
			return nil, l.fail(fmt.Sprintf("line longer than %s; a trace line is at most that long (raise %s to read longer ones)",
				byteSize(int64(l.lim.MaxLine)), EnvMaxLine))
		case l.text > l.lim.MaxBytes:
			return nil, l.fail(fmt.Sprintf("the text passes %s; a trace is at most that long (raise %s to read a larger one)",
				byteSize(l.lim.MaxBytes), EnvMaxBytes))
		}
		switch {
		case err == nil && len(l.buf) == 0:
			return chunk[:len(chunk)-1], nil
		case err == nil:
			l.buf = append(l.buf, chunk...)
			return l.buf[:len(l.buf)-1], nil
		case err == bufio.ErrBufferFull:
			l.buf = append(l.buf, chunk...)
			continue
		case err == io.EOF:
			if len(l.buf) == 0 {
				return chunk, io.EOF
			}
			l.buf = append(l.buf, chunk...)
			return l.buf, io.EOF
		case errors.Is(err, errFileTooLarge):
			return nil, l.fail(fmt.Sprintf("the file passes %s; a trace is at most that long (raise %s to read a larger one)",
				byteSize(l.lim.MaxBytes), EnvMaxBytes))
		case l.gz:
			return nil, l.fail("gzip stream " + gzipReason(err) + "; the compressed file is damaged or cut short (copy it again)")
		default:
			return nil, l.fail("read failed: " + err.Error())
		}
	}
}

// fail records why reading stopped, at the line being read, and returns it.
func (l *lineReader) fail(msg string) error {
	l.err = &ParseError{Name: l.name, Line: l.n, Msg: msg}
	return l.err
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
		if i == len(b) && u <= MaxCount {
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
	case v > MaxCount:
		return 0, fmt.Sprintf("%q is above %g requests a minute, the most a trace may hold (a unit mistake?)", clip(b), float64(MaxCount))
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

func parseTimeseries(lr *lineReader, name string) ([]Series, error) {
	perr := func(line int, col, format string, args ...any) error {
		return &ParseError{Name: name, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
	}
	hline, ok := lr.next()
	if !ok {
		if lr.err != nil {
			return nil, lr.err
		}
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

	var vals []float64
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
	if lr.err != nil {
		return nil, lr.err
	}
	if prevLine == 0 {
		return nil, perr(hdrLine+1, "", "no data rows after the header")
	}
	return []Series{{Name: filepath.Base(name), Start: time.Unix(start, 0).UTC(), Values: vals}}, nil
}

// azureChunk is the most rows of an azure-functions trace whose values are
// allocated at once; chunks double up to it, so a short trace takes little.
const azureChunk = 256

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

func parseAzure(lr *lineReader, name string) ([]Series, error) {
	perr := func(line int, col, format string, args ...any) error {
		return &ParseError{Name: name, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
	}
	const want = "want HashFunction, HashOwner, HashApp and minute_1..minute_N columns"
	hline, ok := lr.next()
	if !ok {
		if lr.err != nil {
			return nil, lr.err
		}
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

	// Values are allocated azureChunk rows at a time.
	var backing []float64
	var series []Series
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if n := fieldCount(line); n != len(cols) {
			return nil, perr(lr.n, "", "row has %s, header has %d", plural(n, "field"), len(cols))
		}
		if len(backing) < minutes {
			backing = make([]float64, min(azureChunk, max(1, len(series)))*minutes)
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
				if n := p - from; n > 0 && n <= 15 && u <= MaxCount && (p == len(line) || line[p] == ',') {
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
	if lr.err != nil {
		return nil, lr.err
	}
	if len(series) == 0 {
		return nil, perr(hdrLine+1, "", "no data rows after the header")
	}
	return series, nil
}
