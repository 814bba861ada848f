package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/regimentd/regiment/wire/wiretest"
)

// TestThisBuildReadsThePreviousMinor: every message of release 1.0, as that
// release encoded it (the committed goldens in testdata/v1.0), decodes in
// this build to the same value as this build's own, and a 1.0 directive's
// signed bytes are the bytes this build verifies a signature against.
func TestThisBuildReadsThePreviousMinor(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.file, func(t *testing.T) {
			old, err := os.ReadFile(filepath.Join("testdata", "v1.0", g.file))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(old, []byte(`"minor"`)) {
				t.Fatalf("the 1.0 golden has a minor field: it is not release 1.0's")
			}
			got, err := g.decode(old)
			if err != nil {
				t.Fatalf("this build refuses a 1.0 message: %v", err)
			}
			if want := any(g.value()); !reflect.DeepEqual(got, want) {
				t.Errorf("1.0 message decoded as\n%+v\nwant\n%+v", got, want)
			}
		})
	}
	var d10 wiretest.Directive10
	old, err := os.ReadFile(filepath.Join("testdata", "v1.0", "directive.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := wiretest.Decode10(old, &d10); err != nil {
		t.Fatal(err)
	}
	d10.Signer, d10.Sig = "", ""
	signed10, _ := json.Marshal(d10)
	d, err := DecodeDirective(old)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.SignedBytes(); !bytes.Equal(got, signed10) {
		t.Fatalf("a 1.0 directive's signature covers\n%s\nthis build verifies it against\n%s", signed10, got)
	}
}

// TestThePreviousReleaseReadsWhatThisBuildWrites: the directive and report
// this build's daemons send (minor WriteMinor) pass release 1.0's decoder,
// with every field as sent; a message stamped with Minor, which that
// release cannot read, is refused by it (so WriteMinor must stay below
// Minor for one release).
func TestThePreviousReleaseReadsWhatThisBuildWrites(t *testing.T) {
	d := exampleDirective()
	d.Minor = WriteMinor
	d.Signer, d.Sig = "UEXAMPLE", strings.Repeat("A", 86)+"=="
	b, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var d10 wiretest.Directive10
	if err := wiretest.Decode10(b, &d10); err != nil {
		t.Fatalf("release 1.0 refuses this build's directive: %v\n%s", err, b)
	}
	if d10.Cores != d.Cores || d10.Term != d.Term || d10.Seq != d.Seq || !d10.IssuedAt.Equal(d.IssuedAt) || d10.Sig != d.Sig || d10.Reason != d.Reason {
		t.Errorf("release 1.0 read %+v from %+v", d10, d)
	}

	r := exampleReport()
	r.Minor = WriteMinor
	if b, err = r.Encode(); err != nil {
		t.Fatal(err)
	}
	var r10 wiretest.Report10
	if err := wiretest.Decode10(b, &r10); err != nil {
		t.Fatalf("release 1.0 refuses this build's report: %v\n%s", err, b)
	}
	if r10.DemandCores != r.DemandCores || r10.LivePods != r.LivePods || r10.Mode != r.Mode || r10.DirectiveSeq != r.DirectiveSeq {
		t.Errorf("release 1.0 read %+v from %+v", r10, r)
	}

	r.Minor = Minor
	if b, err = r.Encode(); err != nil {
		t.Fatal(err)
	}
	if err := wiretest.Decode10(b, &r10); err == nil || !strings.Contains(err.Error(), `unknown field "minor"`) {
		t.Fatalf("release 1.0 decoding a %d.%d report: %v, want an unknown field \"minor\"", Version, Minor, err)
	}
}

// TestTheVersionWindow pins the rule: the major must match; the minor must
// be Minor-1 or Minor (absent is 0); anything else is refused as a version
// (IsVersion), before strict decoding, so a newer sender's fields are
// reported as its version and not as malformed.
func TestTheVersionWindow(t *testing.T) {
	good, err := exampleDirective().Encode()
	if err != nil {
		t.Fatal(err)
	}
	body := string(good[len(`{"version":1,`):])
	msg := func(head string) []byte { return []byte(`{` + head + `,` + body) }
	tests := []struct {
		rule  string
		in    []byte
		minor int
		err   string // "" when accepted
	}{
		{"the previous minor (no minor field) is read", msg(`"version":1`), 0, ""},
		{"an explicit previous minor is read", msg(`"version":1,"minor":0`), 0, ""},
		{"this minor is read", msg(`"version":1,"minor":1`), 1, ""},
		{"the next minor is refused as a version", msg(`"version":1,"minor":2`), 0, "directive: minor 1.2 not supported (this build reads 1.0-1.1)"},
		{"the next minor is refused even with fields this build lacks", []byte(`{"version":1,"minor":2,"scope":"x"}`), 0, "directive: minor 1.2 not supported"},
		{"a negative minor is refused", msg(`"version":1,"minor":-1`), 0, "directive: minor 1.-1 not supported"},
		{"another major is refused", msg(`"version":2`), 0, "directive: version 2 not supported (this build reads 1.0-1.1)"},
		{"another major is refused whatever its minor", msg(`"version":2,"minor":1`), 0, "directive: version 2 not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			d, err := DecodeDirective(tt.in)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if d.Minor != tt.minor || d.Cores != exampleDirective().Cores {
					t.Fatalf("decoded %+v", d)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if !IsVersion(err) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err %v: IsVersion %v, ErrInvalid %v; want both", err, IsVersion(err), errors.Is(err, ErrInvalid))
			}
		})
	}
	if IsVersion(fmt.Errorf("x: %w", &FieldError{"directive", "share", "1.3 out of range [0,1]"})) {
		t.Fatal("a share error counts as a version")
	}
	d := exampleDirective()
	d.Minor = Minor + 1
	if _, err := d.Encode(); !IsVersion(err) {
		t.Fatalf("encoding minor %d: %v, want a version error", d.Minor, err)
	}
}

// TestContractVersionNamesTheWindow: --version prints what this build reads
// and writes.
func TestContractVersionNamesTheWindow(t *testing.T) {
	if got, want := ContractVersion(), "1.1 (reads 1.0-1.1, writes 1.0)"; got != want {
		t.Fatalf("ContractVersion() = %q, want %q", got, want)
	}
}
