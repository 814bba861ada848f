package main

import (
	"path/filepath"
	"testing"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// The seed-scale training and evaluation sets hold the same regimes
// (quiet, tournament and per-function days) and read no minute or function
// in common.
func TestSeedScaleSetsHoldTheSameRegimesOnDisjointDays(t *testing.T) {
	cfg, err := config.LoadFile("../../examples/seedscale.hcl")
	if err != nil {
		t.Fatal(err)
	}
	traces := map[string][]trace.Series{}
	sets := map[string][]window{}
	for _, set := range []string{"train", "eval"} {
		files, err := filepath.Glob(filepath.Join("../../examples/scenarios/seed", set, "*.hcl"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v, %d files", set, err, len(files))
		}
		for _, f := range files {
			sc, err := config.LoadScenarioFile(f, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ws, err := windows(cfg, sc, filepath.Base(f), traces)
			if err != nil {
				t.Fatal(err)
			}
			sets[set] = append(sets[set], ws...)
		}
		for _, rg := range regimes {
			n := 0
			for _, w := range sets[set] {
				if w.regime == rg {
					n++
				}
			}
			if n == 0 {
				t.Errorf("the %s set has no %s window", set, rg)
			}
		}
	}
	for _, o := range overlaps(sets["train"], sets["eval"]) {
		t.Errorf("training and evaluation overlap: %s", o)
	}
}
