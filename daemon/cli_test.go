package daemon

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		rule     string
		args     []string
		code     int
		ok       bool
		out, err string
	}{
		{"flags parse", []string{"--config", "c.hcl"}, 0, true, "", ""},
		{"help prints usage and defaults to stdout", []string{"--help"}, 0, false, "Usage: d\n", ""},
		{"an unknown flag is a usage error", []string{"--bogus"}, 2, false, "", "d: flag provided but not defined: -bogus\nRun 'd --help' for usage.\n"},
		{"a stray argument is a usage error", []string{"extra"}, 2, false, "", `d: unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			fs := flag.NewFlagSet("d", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.String("config", "", "config `file`")
			var stdout, stderr bytes.Buffer
			code, ok := ParseFlags(fs, tt.args, "d", "Usage: d\n", &stdout, &stderr)
			if code != tt.code || ok != tt.ok {
				t.Fatalf("ParseFlags = %d, %v; want %d, %v (stderr %q)", code, ok, tt.code, tt.ok, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tt.out) || !strings.Contains(stderr.String(), tt.err) {
				t.Errorf("stdout %q, stderr %q; want stdout starting %q, stderr containing %q", stdout.String(), stderr.String(), tt.out, tt.err)
			}
			if tt.rule == "help prints usage and defaults to stdout" && !strings.Contains(stdout.String(), "-config file") {
				t.Errorf("help lacks the flags' defaults: %q", stdout.String())
			}
		})
	}
}

func TestLogLevelRefusesUnknownLevels(t *testing.T) {
	if _, err := LogLevel("debug"); err != nil {
		t.Fatal(err)
	}
	if _, err := LogLevel("loud"); err == nil || !strings.Contains(err.Error(), `unknown level "loud"`) {
		t.Fatalf("err = %v, want an unknown level error", err)
	}
}
