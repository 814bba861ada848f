package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/regimentd/regiment/wire"
)

// TestVersionAndMisspeltFlags: --version prints this program's version and
// the wire contract and builds nothing; the image's own version is
// --image-version, and a misspelt flag names the closest.
func TestVersionAndMisspeltFlags(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"--version"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "image ") || !strings.Contains(out.String(), "\nwire contract "+wire.ContractVersion()+"\n") {
		t.Fatalf("--version printed %q", out.String())
	}
	err := run([]string{"--image-versoin", "v1"}, &out)
	if err == nil || err.Error() != "flag provided but not defined: --image-versoin; did you mean --image-version?" {
		t.Fatalf("a misspelt flag: %v", err)
	}
}
