package trace

import (
	"fmt"
	"os"
	"strconv"
)

// Limits bound what reading one trace may cost, so that no file (a huge or
// sparse one, /dev/zero behind a link, a gzip bomb, a file of one endless
// line) can exhaust memory. A zero field takes its default.
//
// Memory is about the text's values, not its bytes: a timeseries trace
// holds at most 2^22 minutes (32 MiB of values), and an azure-functions
// trace 8 bytes for every value cell, each at least 2 bytes of text, so at
// most 4 times MaxBytes (a real Azure day of 46,000 functions: about
// 530 MB).
type Limits struct {
	// MaxBytes is the most bytes of text, after decompression, and the most
	// bytes of the file itself. Default DefaultMaxBytes.
	MaxBytes int64
	// MaxRows is the most data rows, the header and blank lines not
	// counted. Default DefaultMaxRows.
	MaxRows int
	// MaxLine is the longest line in bytes, its line ending not counted.
	// Default DefaultMaxLine.
	MaxLine int
}

const (
	// DefaultMaxBytes is 256 MiB: 60 times the largest shipped trace
	// (azure-functions-2019, 4.2 MB of text), and above a whole day of the
	// original Azure Functions 2019 data.
	DefaultMaxBytes = 256 << 20
	// DefaultMaxRows is 2^22 rows, as many minutes as a timeseries trace
	// may span (about 8 years): 48 times the shipped worldcup98 trace's
	// 86,390 rows.
	DefaultMaxRows = maxMinutes
	// DefaultMaxLine is 1 MiB: 64 times the longest shipped line (an azure
	// row of 1,440 minutes, 16 KB).
	DefaultMaxLine = 1 << 20

	// MaxCount is the largest request count a cell may hold, per minute: a
	// billion requests a minute, 16.7 million a second, well past any one
	// service. A larger value is a unit mistake or a corrupt file, and would
	// overflow the simulator's sums.
	MaxCount = 1e9
)

// The environment variables LimitsFromEnv reads, one per Limits field.
const (
	EnvMaxBytes = "REGIMENT_TRACE_MAX_BYTES"
	EnvMaxRows  = "REGIMENT_TRACE_MAX_ROWS"
	EnvMaxLine  = "REGIMENT_TRACE_MAX_LINE"
)

// DefaultLimits returns the default Limits.
func DefaultLimits() Limits {
	return Limits{MaxBytes: DefaultMaxBytes, MaxRows: DefaultMaxRows, MaxLine: DefaultMaxLine}
}

// withDefaults returns l with its zero fields set to their defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxRows <= 0 {
		l.MaxRows = d.MaxRows
	}
	if l.MaxLine <= 0 {
		l.MaxLine = d.MaxLine
	}
	return l
}

// LimitsFromEnv returns the default Limits with each of
// REGIMENT_TRACE_MAX_BYTES, REGIMENT_TRACE_MAX_ROWS and
// REGIMENT_TRACE_MAX_LINE that is set (a positive integer) in place of its
// default. Every command and daemon that reads traces reads them within
// these. A value that is not a positive integer is an error.
func LimitsFromEnv() (Limits, error) {
	l := DefaultLimits()
	for _, v := range []struct {
		name string
		set  func(int64)
	}{
		{EnvMaxBytes, func(n int64) { l.MaxBytes = n }},
		{EnvMaxRows, func(n int64) { l.MaxRows = int(n) }},
		{EnvMaxLine, func(n int64) { l.MaxLine = int(n) }},
	} {
		s, ok := os.LookupEnv(v.name)
		if !ok || s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n > 1<<40 {
			return Limits{}, fmt.Errorf("%s=%q is not a positive whole number (of up to 2^40)", v.name, s)
		}
		v.set(n)
	}
	return l, nil
}

// byteSize writes n bytes for a message: "256 MiB", "1 MiB", "100 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
