package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// TestSoldierGuardRules pins each rule of the ladder and fallback blocks: the
// base config with a soldier block appended (from line 12) yields exactly one
// diagnostic at line:col.
func TestSoldierGuardRules(t *testing.T) {
	soldier := func(body string) string { return "soldier {\n" + body + "}\n" }
	cases := []ruleCase{
		{name: "an unknown tier label is refused with the tier range",
			add:  soldier("  ladder \"gold\" {\n    alert = 1.3\n  }\n"),
			line: 13, col: 10, summary: `Invalid ladder tier "gold"`, hint: `tiers are "p0" (P0, the most important) to "p9"`},
		{name: "a tier beyond p9 is refused",
			add:  soldier("  ladder \"p12\" {\n    alert = 1.3\n  }\n"),
			line: 13, col: 10, summary: `Invalid ladder tier "p12"`, hint: `"p9"`},
		{name: "an upper-case tier suggests the lower-case one",
			add:  soldier("  ladder \"P1\" {\n    alert = 1.4\n  }\n"),
			line: 13, col: 10, summary: `Invalid ladder tier "P1"`, hint: `did you mean "p1"?`},
		{name: "a tier set twice is a duplicate",
			add:  soldier("  ladder \"p0\" {\n    alert = 1.1\n  }\n  ladder \"p0\" {\n    alert = 1.3\n  }\n"),
			line: 16, col: 10, summary: `Duplicate ladder "p0"`, hint: "the first is at line 13"},
		{name: "a ladder block needs its tier label",
			add:  soldier("  ladder {\n    alert = 1.3\n  }\n"),
			line: 13, col: 3, summary: "Missing tier of ladder block", hint: `ladder "p0"`},
		{name: "an unknown ladder key suggests the nearest",
			add:  soldier("  ladder \"p0\" {\n    cooloff = \"5m\"\n  }\n"),
			line: 14, col: 5, summary: `Unknown key "cooloff" in ladder "p0"`, hint: `did you mean "cool_off"?`},
		{name: "a threshold must be above 1",
			add:  soldier("  ladder \"p0\" {\n    alert = 0.9\n  }\n"),
			line: 14, col: 13, summary: "Invalid alert", hint: "alert must be > 1, got 0.9"},
		{name: "a threshold of 0 would be replaced by the default",
			add:  soldier("  ladder \"p2\" {\n    revert = 0\n  }\n"),
			line: 14, col: 14, summary: "Invalid revert", hint: "must be > 1, got 0"},
		{name: "freeze must be above alert, reported at freeze",
			add:  soldier("  ladder \"p0\" {\n    alert  = 1.4\n    freeze = 1.3\n  }\n"),
			line: 15, col: 14, summary: "Invalid freeze", hint: "freeze 1.3 must be above alert 1.4"},
		{name: "freeze below the tier's default alert names the default",
			add:  soldier("  ladder \"p1\" {\n    freeze = 1.25\n  }\n"),
			line: 14, col: 14, summary: "Invalid freeze", hint: "must be above alert 1.3, the p1 default"},
		{name: "an alert over the default freeze asks for freeze too",
			add:  soldier("  ladder \"p0\" {\n    alert = 1.6\n  }\n"),
			line: 14, col: 13, summary: "Invalid alert", hint: "alert 1.6 must be below freeze 1.5, the p0 default (thresholds ascend: 1 < alert < freeze < revert); set freeze too"},
		{name: "revert equal to freeze does not ascend",
			add:  soldier("  ladder \"p3\" {\n    freeze = 2\n    revert = 2\n  }\n"),
			line: 15, col: 14, summary: "Invalid revert", hint: "revert 2 must be above freeze 2"},
		{name: "sustain must not be negative",
			add:  soldier("  ladder \"p0\" {\n    sustain = \"-1s\"\n  }\n"),
			line: 14, col: 15, summary: "Invalid sustain", hint: "sustain must be >= 0s, got -1s"},
		{name: "a cool_off of 0s would be replaced by the default",
			add:  soldier("  ladder \"p0\" {\n    cool_off = \"0s\"\n  }\n"),
			line: 14, col: 16, summary: "Invalid cool_off", hint: "0 means unset and is replaced by the default 5m0s"},
		{name: "a bad sustain duration gives an example",
			add:  soldier("  ladder \"p0\" {\n    sustain = \"15\"\n  }\n"),
			line: 14, col: 15, summary: "Invalid sustain", hint: `"15" has no unit (example: "15s")`},
		{name: "a second fallback block is a duplicate",
			add:  soldier("  fallback {\n  }\n  fallback {\n  }\n"),
			line: 15, col: 3, summary: "Duplicate fallback block", hint: "the first is at line 13"},
		{name: "the fallback window must not be negative",
			add:  soldier("  fallback {\n    window = \"-30m\"\n  }\n"),
			line: 14, col: 14, summary: "Invalid window", hint: "window must be >= 0"},
		{name: "the fallback window must be at least a soldier tick",
			add:  soldier("  tick = \"10s\"\n  fallback {\n    window = \"5s\"\n  }\n"),
			line: 15, col: 14, summary: "Invalid window", hint: "window 5s is shorter than the soldier tick 10s"},
		{name: "the fallback window must be a whole number of ticks",
			add:  soldier("  tick = \"20s\"\n  fallback {\n    window = \"30m10s\"\n  }\n"),
			line: 15, col: 14, summary: "Invalid window", hint: `whole number of soldier ticks of 20s (example: "30m0s" or "30m20s")`},
		{name: "the window is checked against the default tick",
			add:  soldier("  fallback {\n    window = \"95s\"\n  }\n"),
			line: 14, col: 14, summary: "Invalid window", hint: "ticks of 10s"},
		{name: "breach_fraction must be in (0, 1]",
			add:  soldier("  fallback {\n    breach_fraction = 1.5\n  }\n"),
			line: 14, col: 23, summary: "Invalid breach_fraction", hint: "must be in (0, 1], got 1.5"},
		{name: "cost_margin must not be negative",
			add:  soldier("  fallback {\n    cost_margin = -0.1\n  }\n"),
			line: 14, col: 19, summary: "Invalid cost_margin", hint: "must be >= 0, got -0.1"},
		{name: "short_tolerance must be in [0, 1]",
			add:  soldier("  fallback {\n    short_tolerance = 2\n  }\n"),
			line: 14, col: 23, summary: "Invalid short_tolerance", hint: "must be in [0, 1], got 2"},
		{name: "hold must not be negative",
			add:  soldier("  fallback {\n    hold = \"-1m\"\n  }\n"),
			line: 14, col: 12, summary: "Invalid hold", hint: "hold must be >= 0s, got -1m0s"},
		{name: "ladder written as an attribute",
			add:  soldier("  ladder = 1.2\n"),
			line: 13, col: 3, summary: `Unknown key "ladder" in soldier`, hint: "ladder is a block, not an attribute"},
	}
	runRules(t, cases)
}

func TestSoldierGuardsReportEveryProblem(t *testing.T) {
	src := base + `soldier {
  tick = "10s"
  ladder "p0" {
    alert   = 1.5
    freeze  = 1.4
    sustain = "15x"
  }
  ladder "gold" {
    alert = 1.1
  }
  ladder "p0" {
  }
  fallback {
    window          = "45s"
    breach_fraction = 0
  }
}
`
	_, err := Parse([]byte(src), "cluster.hcl")
	ds := diagnostics(t, err)
	want := []string{
		`cluster.hcl:16,15-18: Invalid freeze; freeze 1.4 must be above alert 1.5 (thresholds ascend: 1 < alert < freeze < revert).`,
		`cluster.hcl:17,15-20: Invalid sustain; "15x" is not a duration (example: "30s").`,
		`cluster.hcl:19,10-16: Invalid ladder tier "gold"; tiers are "p0" (P0, the most important) to "p9", matching the domains' priority.`,
		`cluster.hcl:22,10-14: Duplicate ladder "p0"; one ladder block per tier; the first is at line 14.`,
		`cluster.hcl:25,23-28: Invalid window; window 45s is not a whole number of soldier ticks of 10s (example: "40s" or "50s").`,
		`cluster.hcl:26,23-24: Invalid breach_fraction; breach_fraction must be in (0, 1], got 0.`,
	}
	got := strings.Split(ds.Error(), "\n")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSoldierGuardsTranslate(t *testing.T) {
	cases := []struct {
		name     string
		soldier  string
		ladders  map[int]domains.Ladder // tiers not listed: their defaults
		fallback domains.Fallback
	}{
		{name: "no blocks keep every default", soldier: "",
			fallback: domains.DefaultFallback()},
		{name: "a tier's unset attributes keep that tier's defaults",
			soldier:  "  ladder \"p1\" {\n    revert  = 3\n    sustain = \"1m\"\n  }\n",
			ladders:  map[int]domains.Ladder{1: {Alert: 1.3, Freeze: 1.3 * 1.25, Revert: 3, Sustain: time.Minute, CoolOff: 5 * time.Minute}},
			fallback: domains.DefaultFallback()},
		{name: "a full ladder and fallback are taken as written",
			soldier: "  ladder \"p9\" {\n    alert    = 1.1\n    freeze   = 1.2\n    revert   = 1.3\n    sustain  = \"5s\"\n    cool_off = \"1m\"\n  }\n" +
				"  fallback {\n    window          = \"10m\"\n    breach_fraction = 0.2\n    cost_margin     = 0.3\n    short_tolerance = 0.4\n    hold            = \"1h\"\n  }\n",
			ladders:  map[int]domains.Ladder{9: {Alert: 1.1, Freeze: 1.2, Revert: 1.3, Sustain: 5 * time.Second, CoolOff: time.Minute}},
			fallback: domains.Fallback{Window: 10 * time.Minute, BreachFraction: 0.2, CostMargin: 0.3, ShortTolerance: 0.4, Hold: time.Hour}},
		{name: "a window of 0s turns the fallback off and keeps the other defaults",
			soldier:  "  fallback {\n    window = \"0s\"\n  }\n",
			fallback: func() domains.Fallback { f := domains.DefaultFallback(); f.Off = true; return f }()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(base+"soldier {\n"+tc.soldier+"}\n"), "cluster.hcl")
			if err != nil {
				t.Fatal(err)
			}
			for tier, got := range cfg.Soldier.Ladders {
				want, ok := tc.ladders[tier]
				if !ok {
					want = domains.DefaultLadder(tier)
				}
				if got != want {
					t.Errorf("tier %d: got %+v, want %+v", tier, got, want)
				}
				if l := cfg.Soldier.Ladder(tier); l != want {
					t.Errorf("Soldier.Ladder(%d) = %+v, want %+v", tier, l, want)
				}
			}
			if cfg.Soldier.Fallback != tc.fallback {
				t.Errorf("fallback %+v, want %+v", cfg.Soldier.Fallback, tc.fallback)
			}
		})
	}
}
