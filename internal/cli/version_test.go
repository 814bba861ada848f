package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionNamesTheBuildAndTheContract(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/regimentd/regiment", Version: "v0.4.1-0.20261204224107-5dbd662e8b1c"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "5dbd662e8b1c9a3f00aa11bb22cc33dd44ee55ff"}, {Key: "vcs.time", Value: "2026-12-04T22:41:07Z"}, {Key: "vcs.modified", Value: "true"}}}
	plat := runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		rule     string
		bi       *debug.BuildInfo
		rel, rev string
		want     string
	}{
		{"go build in a checkout: module version, revision, time, modified", bi, "", "",
			"soldier v0.4.1-0.20261204224107-5dbd662e8b1c (revision 5dbd662e8b1c, 2026-12-04T22:41:07Z, modified)\nwire contract 1.1 (reads 1.0-1.1, writes 1.0)\ngo1.26.8 " + plat + "\n"},
		{"values set at link time win", bi, "v0.5.0", "0123456789abcdef0123",
			"soldier v0.5.0 (revision 0123456789ab)\nwire contract 1.1 (reads 1.0-1.1, writes 1.0)\ngo1.26.8 " + plat + "\n"},
		{"no build info says so", nil, "", "",
			"soldier (devel) (revision unknown)\nwire contract 1.1 (reads 1.0-1.1, writes 1.0)\n" + runtime.Version() + " " + plat + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if got := versionOf("soldier", tt.bi, tt.rel, tt.rev); got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	// The test binary's own build info: the module's path is there, and the
	// text names the binary and the contract.
	if got := Version("regiment"); !strings.HasPrefix(got, "regiment ") || !strings.Contains(got, "wire contract 1.1") {
		t.Fatalf("Version = %q", got)
	}
}
