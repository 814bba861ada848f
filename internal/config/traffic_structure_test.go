package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Traffic structure and warm-up (issue 31, traffic): the scenario keys
// arrival_noise and warmup, the traffic keys burst_sigma,
// burst_correlation, app_own and app_shift.

func TestParseScenarioTrafficStructureRules(t *testing.T) {
	cfg := loadTestConfig(t)
	functions := []string{"traces/timeseries.csv", "traces/functions.csv", `format   = "timeseries"`, `format   = "azure-functions"`}
	cases := []struct {
		ruleCase
		edit2 []string
	}{
		{ruleCase: ruleCase{name: "arrival_noise is multiplicative or poisson",
			edit: []string{`duration = "72h"`, "duration = \"72h\"\n  arrival_noise = \"poison\""},
			line: 3, col: 19, summary: "Invalid arrival_noise", hint: `"poisson"`}},
		{ruleCase: ruleCase{name: "warmup is shorter than the scenario",
			edit: []string{`duration = "72h"`, "duration = \"72h\"\n  warmup = \"80h\""},
			line: 3, col: 12, summary: "Invalid warmup", hint: "shorter than the scenario's duration"}},
		{ruleCase: ruleCase{name: "warmup is not negative",
			edit: []string{`duration = "72h"`, "duration = \"72h\"\n  warmup = \"-1m\""},
			line: 3, col: 12, summary: "Invalid warmup"}},
		{ruleCase: ruleCase{name: "burst_sigma is at most 1",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    burst_sigma = 2"},
			line: 7, col: 19, summary: "Invalid burst_sigma", hint: "[0, 1]"}},
		{ruleCase: ruleCase{name: "burst_correlation is below 1",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    burst_correlation = 1"},
			line: 7, col: 25, summary: "Invalid burst_correlation", hint: "0.999"}},
		{ruleCase: ruleCase{name: "app_own is a fraction",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    app_own = 1.5"},
			line: 7, col: 15, summary: "Invalid app_own", hint: "[0, 1]"}},
		{ruleCase: ruleCase{name: "app_shift is whole minutes",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    app_shift = \"90s\""},
			line: 7, col: 17, summary: "Invalid app_shift", hint: "whole number of minutes"}},
		{ruleCase: ruleCase{name: "app_shift is at most 6h",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    app_shift = \"7h\""},
			line: 7, col: 17, summary: "Invalid app_shift"}},
		{ruleCase: ruleCase{name: "app_own needs a domain-level shape",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    app_own = 0.5"},
			line: 7, col: 15, summary: "Invalid app_own", hint: "applies only to a domain-level shape"}, edit2: functions},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.NewReplacer(tc.edit2...).Replace(scenarioBase)
			if !strings.Contains(src, tc.edit[0]) {
				t.Fatalf("edit %q does not apply", tc.edit[0])
			}
			src = strings.NewReplacer(tc.edit...).Replace(src)
			_, err := ParseScenario([]byte(src), "testdata/s.hcl", cfg)
			ds := diagnostics(t, err)
			if len(ds) != 1 {
				t.Fatalf("want 1 diagnostic, got %d:\n%v\nsource:\n%s", len(ds), err, src)
			}
			d := ds[0]
			if d.Line != tc.line || d.Column != tc.col {
				t.Errorf("at %d,%d, want %d,%d: %s", d.Line, d.Column, tc.line, tc.col, d)
			}
			if !strings.Contains(d.Summary, tc.summary) || !strings.Contains(d.Hint, tc.hint) {
				t.Errorf("got %q; want summary containing %q and hint containing %q", d, tc.summary, tc.hint)
			}
		})
	}
}

func TestParseScenarioArrivalNoiseAndWarmup(t *testing.T) {
	cfg := loadTestConfig(t)
	s, err := ParseScenario([]byte(scenarioBase), "testdata/s.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.ArrivalNoise != domains.NoiseMultiplicative || s.Warmup != 0 {
		t.Errorf("defaults: arrival_noise %q warmup %s, want %q and 0", s.ArrivalNoise, s.Warmup, domains.NoiseMultiplicative)
	}
	src := strings.Replace(scenarioBase, `duration = "72h"`, "duration = \"72h\"\n  arrival_noise = \"poisson\"\n  warmup = \"15m\"", 1)
	if s, err = ParseScenario([]byte(src), "testdata/s.hcl", cfg); err != nil {
		t.Fatal(err)
	}
	if s.ArrivalNoise != domains.NoisePoisson || s.Warmup != 15*time.Minute {
		t.Errorf("got arrival_noise %q warmup %s, want poisson and 15m", s.ArrivalNoise, s.Warmup)
	}
}

func TestScenarioExtendsInheritArrivalNoiseAndWarmup(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("a.csv", "time,count\n")
	write("base.hcl", `scenario "base" {
  duration      = "24h"
  arrival_noise = "poisson"
  warmup        = "15m"
  traffic "payment" {
    trace    = "a.csv"
    format   = "timeseries"
    peak_rps = 100
  }
}
`)
	child := write("child.hcl", `scenario "child" {
  extends  = "base.hcl"
  duration = "6h"
}
`)
	s, err := LoadScenarioFile(child, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.ArrivalNoise != domains.NoisePoisson || s.Warmup != 15*time.Minute {
		t.Errorf("child: arrival_noise %q warmup %s, want the base's poisson and 15m", s.ArrivalNoise, s.Warmup)
	}
	short := write("short.hcl", `scenario "short" {
  extends  = "base.hcl"
  duration = "10m"
}
`)
	_, err = LoadScenarioFile(short, nil)
	ds := diagnostics(t, err)
	if len(ds) != 1 || ds[0].Line != 3 || !strings.Contains(ds[0].Summary, "Invalid duration") || !strings.Contains(ds[0].Hint, "warm-up 15m0s") {
		t.Errorf("a duration within the inherited warm-up: got %v, want one Invalid duration at line 3 naming the warm-up", err)
	}
}
