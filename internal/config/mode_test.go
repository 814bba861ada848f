package config

import (
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/core/domains"
)

// TestDomainMode pins the mode attribute of a domain block: it overrides the
// soldier block's mode for that domain only, unset leaves it to the soldier
// block, and an unknown mode is reported at its position with a suggestion.
func TestDomainMode(t *testing.T) {
	src := base + "soldier {\n  mode = \"active\"\n}\n" + strings.Replace(domainB, "floor = 0.1", "floor = 0.1\n  mode  = \"shadow\"", 1)
	cfg, err := Parse([]byte(src), "cluster.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Soldier.Mode != domains.ModeActive || cfg.Domains[0].Mode != "" || cfg.Domains[1].Mode != domains.ModeShadow {
		t.Fatalf("soldier mode %q, domain modes %q and %q; want active, unset and shadow",
			cfg.Soldier.Mode, cfg.Domains[0].Mode, cfg.Domains[1].Mode)
	}

	for _, tc := range []struct {
		name, mode, hint string
	}{
		{"a misspelt domain mode suggests the nearest", `"shadw"`, `did you mean "shadow"?`},
		{"an empty domain mode lists the modes", `""`, `"active", "recommend", "shadow" or "off"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(base, "floor = 0.2", "floor = 0.2\n  mode = "+tc.mode, 1)
			_, err := Parse([]byte(src), "cluster.hcl")
			ds := diagnostics(t, err)
			if len(ds) != 1 {
				t.Fatalf("want 1 diagnostic, got %d: %v", len(ds), err)
			}
			d := ds[0]
			if d.Line != 6 || d.Column != 10 || d.Summary != "Invalid mode" || !strings.Contains(d.Hint, tc.hint) {
				t.Errorf("got %s; want cluster.hcl:6,10 Invalid mode with hint containing %q", d, tc.hint)
			}
		})
	}
}
