// Package trace reads real traffic traces, the request rates that drive the
// simulator, into per-minute Series.
//
// Two layouts are read (domains.TraceFormat):
//
//   - timeseries: a header line with any two column names (e.g. "period,count"),
//     then "time,count" rows, one per minute, in strictly increasing time. Time is
//     "YYYY-MM-DD HH:MM:SS" (read as UTC) or RFC 3339. Minutes without a row had
//     no requests and read as 0. One Series, named after the file's base name,
//     starting at the first row's time.
//   - azure-functions: the Azure Functions 2019 invocation layout, one row per
//     function. The header names a HashFunction column and count columns
//     minute_1..minute_N (or 1..N, as in Microsoft's original files) in any
//     order; they are found by name. Other columns (HashOwner, HashApp, Trigger)
//     are ignored. One Series per row, named by its HashFunction, with a zero
//     Start: the trace's day has no calendar date.
//
// Invariants of every Series returned by Read: Values[i] is the request count
// in minute i after Start (counts per minute, one value per minute, no gaps),
// every value is finite, >= 0 and at most MaxCount (1e9 requests a minute;
// a larger one is refused as a unit mistake), and len(Values) >= 1. All Series of one
// azure-functions trace have the same length. A timeseries trace spans at most
// 2^22 minutes (about 8 years).
//
// A malformed trace is rejected whole with a *ParseError naming the file, the
// 1-based line and, where it helps, the column. Reading the other layout by
// mistake is detected from the header. Quoting follows RFC 4180 only as far as
// these layouts need: a field may be wrapped in double quotes, but may not
// contain commas, quotes or line breaks. Blank lines are skipped. CRLF line
// endings and a leading UTF-8 byte order mark, as spreadsheet tools on
// Windows write, are accepted on purpose and dropped: the rows read exactly
// as with LF endings and no mark.
//
// A trace is streamed a line at a time, never read whole, within Limits: at
// most MaxBytes of text (256 MiB by default, counted after decompression,
// and of the file too), MaxRows data rows (2^22) and MaxLine bytes a line
// (1 MiB). The environment variables REGIMENT_TRACE_MAX_BYTES,
// REGIMENT_TRACE_MAX_ROWS and REGIMENT_TRACE_MAX_LINE raise or lower them
// for every command (LimitsFromEnv). Crossing one is a *ParseError at the
// line that crossed it, so /dev/zero behind a link, a sparse file of
// gigabytes or a gzip bomb costs a few hundred kilobytes and stops at line
// 1. ReadFile and Load open only regular files (package infile): a FIFO, a
// device or a directory is refused at once, without blocking.
//
// A trace may be gzip-compressed (RFC 1952), as the shipped ones in the
// repository's traces/ folder are: a stream that opens with gzip's magic
// bytes is decompressed first, whatever the file is named. A corrupt or
// truncated stream is a *ParseError at the line the text had reached.
//
// Load reads every trace a scenario names, each file once; domains that
// share a file share its Series, so callers must treat Series as read-only.
//
// Functions here keep no state and are safe for concurrent use. Package trace
// imports only the standard library, domains and infile.
package trace
