package cli

import (
	"fmt"
	"io"

	"github.com/hashicorp/go-hclog"
)

// Log formats of --log-format.
const (
	LogText = "text" // go-hclog's default: "2026-12-04T22:41:07.123Z [INFO]  soldier: msg: key=value"
	LogJSON = "json" // one JSON object a line: "@timestamp", "@level", "@module", "@message", and the keys
)

// LogFormatUsage is the help of a --log-format flag.
const LogFormatUsage = "log `format`: text, or json (one object a line: @timestamp, @level, @module, @message and the keys)"

// NewLogger is a binary's root logger named name, at level, in format
// (LogText or LogJSON), written to out. An unknown level or format is an
// error naming the flag, for a usage error.
func NewLogger(name, level, format string, out io.Writer) (hclog.Logger, error) {
	l := hclog.LevelFromString(level)
	if l == hclog.NoLevel {
		return nil, fmt.Errorf("--log-level: unknown level %q (trace, debug, info, warn, error)", level)
	}
	var json bool
	switch format {
	case LogText, "":
	case LogJSON:
		json = true
	default:
		msg := fmt.Sprintf("--log-format: unknown format %q (text, json)", format)
		if s, ok := Suggest(format, []string{LogText, LogJSON}); ok {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return nil, fmt.Errorf("%s", msg)
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: l, Output: out, JSONFormat: json}), nil
}
