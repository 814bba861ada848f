package daemon

import (
	"bytes"
	"strings"
	"testing"

	"github.com/regimentd/regiment/wire"
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
		{"an unknown flag is a usage error", []string{"--bogus"}, 2, false, "", "d: flag provided but not defined: --bogus\nRun 'd --help' for usage.\n"},
		{"a misspelt flag names the closest", []string{"--confg", "c.hcl"}, 2, false, "", "d: flag provided but not defined: --confg; did you mean --config?\n"},
		{"version prints the build and the contract to stdout", []string{"--version"}, 0, false, "d ", ""},
		{"a stray argument is a usage error", []string{"extra"}, 2, false, "", `d: unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			var config string
			fs, _ := NewFlagSet("d", &config)
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
			if tt.rule == "version prints the build and the contract to stdout" && !strings.Contains(stdout.String(), "\nwire contract "+wire.ContractVersion()+"\n") {
				t.Errorf("version lacks the wire contract: %q", stdout.String())
			}
		})
	}
}
