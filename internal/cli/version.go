package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/regimentd/regiment/wire"
)

// release and revision, when set at link time (the Makefile's image target,
// built with -buildvcs=false for a reproducible image: -X
// github.com/regimentd/regiment/internal/cli.release=v1.2.0), take the place of the
// build info's module version and VCS revision.
var release, revision string

// Version is the text of `name --version`: the module version and VCS
// revision the binary was built from (runtime/debug.ReadBuildInfo, or the
// values set at link time), the wire contract it speaks, and the Go
// toolchain and platform. For example:
//
//	regiment v0.4.0 (revision 5dbd662e8b1c, 2026-12-04T22:41:07Z)
//	wire contract 1.1 (reads 1.0-1.1, writes 1.0)
//	go1.26.8 linux/amd64
func Version(name string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return versionOf(name, bi, release, revision)
}

// versionOf is Version for the build info bi (nil: none) and the link-time
// values rel and rev ("" when not set).
func versionOf(name string, bi *debug.BuildInfo, rel, rev string) string {
	mod, vcsRev, vcsTime, modified, toolchain := "", "", "", false, runtime.Version()
	if bi != nil {
		mod = bi.Main.Version
		toolchain = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsRev = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if rel != "" {
		mod = rel
	}
	if mod == "" || mod == "(devel)" {
		mod = "(devel)"
	}
	if rev != "" {
		vcsRev, vcsTime, modified = rev, "", false
	}
	var build []string
	switch {
	case vcsRev != "":
		build = append(build, "revision "+short(vcsRev))
	default:
		build = append(build, "revision unknown")
	}
	if vcsTime != "" {
		build = append(build, vcsTime)
	}
	if modified {
		build = append(build, "modified")
	}
	return fmt.Sprintf("%s %s (%s)\nwire contract %s\n%s %s/%s\n",
		name, mod, strings.Join(build, ", "), wire.ContractVersion(), toolchain, runtime.GOOS, runtime.GOARCH)
}

// short is the first 12 characters of a revision hash.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
