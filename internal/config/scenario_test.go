package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// scenarioBase is the smallest valid scenario for testdata/cluster.hcl, read
// as testdata/s.hcl. Rule tests edit it or add blocks from line 8.
const scenarioBase = `scenario "s" {
  duration = "72h"
  traffic "payment" {
    trace    = "traces/timeseries.csv"
    format   = "timeseries"
    peak_rps = 100
  }
}
`

// event formats an event block to add to scenarioBase: the block starts at
// line 8 and its attributes at line 9, each indented by four spaces.
func event(kind string, attrs ...string) string {
	return "  event \"" + kind + "\" {\n    " + strings.Join(attrs, "\n    ") + "\n  }\n"
}

func loadTestConfig(t *testing.T) *domains.Config {
	t.Helper()
	cfg, err := LoadFile("testdata/cluster.hcl")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestParseScenarioRules(t *testing.T) {
	cfg := loadTestConfig(t)
	cases := []ruleCase{
		{name: "missing trace file is reported on the trace attribute",
			edit: []string{"traces/timeseries.csv", "traces/nope.csv"},
			line: 4, col: 16, summary: "Trace file not found", hint: filepath.Join("testdata", "traces", "nope.csv")},
		{name: "unknown trace format",
			edit: []string{`format   = "timeseries"`, `format   = "csv"`},
			line: 5, col: 16, summary: "Invalid format", hint: `"csv" is not one of "timeseries" or "azure-functions"`},
		{name: "traffic for a domain not in the config",
			edit: []string{`traffic "payment"`, `traffic "paymnt"`},
			line: 3, col: 11, summary: `Unknown domain "paymnt"`, hint: `the nearest is "payment"`},
		{name: "duplicate traffic for a domain",
			add:  "  traffic \"payment\" {\n    trace = \"traces/timeseries.csv\"\n    format = \"timeseries\"\n    peak_rps = 1\n  }\n",
			line: 8, col: 11, summary: `Duplicate traffic for domain "payment"`, hint: "line 3"},
		{name: "duration is required",
			edit: []string{"  duration = \"72h\"\n", ""},
			line: 1, col: 1, summary: "Missing duration"},
		{name: "duration must be positive",
			edit: []string{`duration = "72h"`, `duration = "0s"`},
			line: 2, col: 14, summary: "Invalid duration", hint: "must be in (0s, 8784h0m0s], got 0s"},
		{name: "start must be an RFC 3339 time",
			edit: []string{`duration = "72h"`, "duration = \"72h\"\n  start = \"1998-06-10\""},
			line: 3, col: 11, summary: "Invalid start", hint: `(example: "1998-06-10T00:00:00Z")`},
		{name: "unknown scenario key suggests the nearest",
			edit: []string{`duration = "72h"`, "duration = \"72h\"\n  sed = 3"},
			line: 3, col: 3, summary: `Unknown key "sed" in scenario "s"`, hint: `did you mean "seed"?`},
		{name: "peak_rps must be positive",
			edit: []string{"peak_rps = 100", "peak_rps = -1"},
			line: 6, col: 16, summary: "Invalid peak_rps", hint: "must be in (0, 1000000000], got -1"},
		{name: "peak_rps is required",
			edit: []string{"    peak_rps = 100\n", ""},
			line: 3, col: 3, summary: "Missing peak_rps"},
		{name: "function_offset applies only to azure-functions traces",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    function_offset = 2"},
			line: 7, col: 23, summary: "Invalid function_offset", hint: "azure-functions"},
		{name: "peak_rps_of is trace or window",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    peak_rps_of = \"windw\""},
			line: 7, col: 19, summary: "Invalid peak_rps_of", hint: `did you mean "window"?`},
		{name: "app_skew must be >= 0",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    app_skew = -1"},
			line: 7, col: 16, summary: "Invalid app_skew", hint: "app_skew must be in [0, 10] (0: equal shares), got -1"},
		{name: "app_skew is at most 10",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    app_skew = 11"},
			line: 7, col: 16, summary: "Invalid app_skew", hint: "got 11"},
		{name: "app_skew applies only to timeseries traces",
			edit: []string{"traces/timeseries.csv", "traces/functions.csv", `format   = "timeseries"`, `format   = "azure-functions"`,
				"peak_rps = 100", "peak_rps = 100\n    app_skew = 2"},
			line: 7, col: 16, summary: "Invalid app_skew", hint: `applies only to format "timeseries"`},
		{name: "functions is one-per-app or summed",
			edit: []string{"traces/timeseries.csv", "traces/functions.csv", `format   = "timeseries"`, `format   = "azure-functions"`,
				"peak_rps = 100", "peak_rps = 100\n    functions = \"sum\""},
			line: 7, col: 17, summary: "Invalid functions", hint: `is not one of "one-per-app" or "summed"`},
		{name: "functions applies only to azure-functions traces",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    functions = \"summed\""},
			line: 7, col: 17, summary: "Invalid functions", hint: `applies only to format "azure-functions"`},
		{name: "function_rows is all, even or odd",
			edit: []string{"traces/timeseries.csv", "traces/functions.csv", `format   = "timeseries"`, `format   = "azure-functions"`,
				"peak_rps = 100", "peak_rps = 100\n    function_rows = \"evens\""},
			line: 7, col: 21, summary: "Invalid function_rows", hint: `did you mean "even"?`},
		{name: "function_rows applies only to azure-functions traces",
			edit: []string{"peak_rps = 100", "peak_rps = 100\n    function_rows = \"even\""},
			line: 7, col: 21, summary: "Invalid function_rows", hint: `applies only to format "azure-functions"`},
		{name: "a second scenario block is a duplicate",
			add:  "}\nscenario \"t\" {\n  duration = \"1h\"\n",
			line: 9, col: 1, summary: "Duplicate scenario block"},
		{name: "unknown event kind suggests the nearest",
			add:  event("flash_sale", `domain = "payment"`, `at = "1h"`, `multiplier = 2`, `hold = "1m"`),
			line: 8, col: 9, summary: `Unknown event kind "flash_sale"`, hint: `did you mean "flash-sale"?`},
		{name: "flash-sale needs a multiplier",
			add:  event("flash-sale", `domain = "payment"`, `at = "1h"`, `hold = "1m"`),
			line: 8, col: 3, summary: "Missing multiplier in flash-sale event", hint: "domain, at, multiplier, hold"},
		{name: "batch-window needs a domain",
			add:  event("batch-window", `at = "1h"`, `multiplier = 3`, `hold = "1m"`),
			line: 8, col: 3, summary: "Missing domain in batch-window event"},
		{name: "slow-dependency needs an app",
			add:  event("slow-dependency", `at = "1h"`, `service_time_factor = 3`, `hold = "1m"`),
			line: 8, col: 3, summary: "Missing app in slow-dependency event"},
		{name: "event hold is required",
			add:  event("flash-sale", `domain = "payment"`, `at = "1h"`, `multiplier = 2`),
			line: 8, col: 3, summary: "Missing hold in flash-sale event"},
		{name: "event attribute of another kind",
			add:  event("flash-sale", `domain = "payment"`, `at = "1h"`, `multiplier = 2`, `hold = "1m"`, `app = "fraud/scoring"`),
			line: 13, col: 11, summary: "Invalid app in flash-sale event"},
		{name: "event for a domain not in the config",
			add:  event("flash-sale", `domain = "fruad"`, `at = "1h"`, `multiplier = 2`, `hold = "1m"`),
			line: 9, col: 14, summary: `Unknown domain "fruad"`, hint: `the nearest is "fraud"`},
		{name: "event for an app set not in the config",
			add:  event("slow-dependency", `app = "fraud/scorin"`, `at = "1h"`, `service_time_factor = 3`, `hold = "1m"`),
			line: 9, col: 11, summary: `Unknown app set "fraud/scorin"`, hint: `the nearest is "fraud/scoring"`},
		{name: "event after the scenario ends",
			add:  event("flash-sale", `domain = "payment"`, `at = "80h"`, `multiplier = 2`, `hold = "1m"`),
			line: 10, col: 10, summary: "Invalid at", hint: "after the scenario's duration 72h0m0s"},
		{name: "event repeating before it ends",
			add:  event("batch-window", `domain = "payment"`, `at = "1h"`, `multiplier = 2`, `hold = "2h"`, `every = "1h"`),
			line: 13, col: 13, summary: "Invalid every", hint: "longer than 2 x ramp + hold = 2h0m0s"},
		{name: "event multiplier must be positive",
			add:  event("flash-sale", `domain = "payment"`, `at = "1h"`, `multiplier = 0`, `hold = "1m"`),
			line: 11, col: 18, summary: "Invalid multiplier", hint: "must be in (0, 1000], got 0"},
		{name: "event hold must be positive",
			add:  event("flash-sale", `domain = "payment"`, `at = "1h"`, `multiplier = 2`, `hold = "-1m"`),
			line: 12, col: 12, summary: "Invalid hold", hint: "must be > 0s"},
		{name: "duration is at most a leap year",
			edit: []string{`duration = "72h"`, `duration = "9000h"`},
			line: 2, col: 14, summary: "Invalid duration", hint: "must be in (0s, 8784h0m0s], got 9000h0m0s"},
		{name: "peak_rps is at most a billion",
			edit: []string{"peak_rps = 100", "peak_rps = 1e12"},
			line: 6, col: 16, summary: "Invalid peak_rps", hint: "must be in (0, 1000000000], got 1000000000000"},
		{name: "noise is a fraction",
			edit: []string{`duration = "72h"`, "duration = \"72h\"\n  noise = 1e300"},
			line: 3, col: 11, summary: "Invalid noise", hint: "noise must be in [0, 1], got 1e+300"},
		{name: "event multiplier is at most 1000",
			add:  event("flash-sale", `domain = "payment"`, `at = "1h"`, `multiplier = 1e9`, `hold = "1m"`),
			line: 11, col: 18, summary: "Invalid multiplier", hint: "must be in (0, 1000], got 1000000000"},
		{name: "service_time_factor is at most 1000",
			add:  event("slow-dependency", `app = "fraud/scoring"`, `at = "1h"`, `service_time_factor = 1e9`, `hold = "1m"`),
			line: 11, col: 27, summary: "Invalid service_time_factor", hint: "must be in (0, 1000], got 1000000000"},
		{name: "announced is for flash sales and batch windows",
			add:  event("slow-dependency", `app = "fraud/scoring"`, `at = "1h"`, `service_time_factor = 2`, `hold = "1m"`, `announced = "1h"`),
			line: 13, col: 17, summary: "Invalid announced in slow-dependency event", hint: "belongs to other event kinds"},
		{name: "announced is an offset like at",
			add:  event("flash-sale", `domain = "payment"`, `at = "1h"`, `multiplier = 2`, `hold = "1m"`, `announced = "-5m"`),
			line: 13, col: 17, summary: "Invalid announced", hint: "must be >= 0s, got -5m0s"},
		{name: "only a rise is announced",
			add:  event("flash-sale", `domain = "payment"`, `at = "1h"`, `multiplier = 0.5`, `hold = "1m"`, `announced = "1h"`),
			line: 13, col: 17, summary: "Invalid announced", hint: "multiplier 0.5 is not above 1"},
		{name: "event duration with a bad unit",
			add:  event("flash-sale", `domain = "payment"`, `at = "1hr"`, `multiplier = 2`, `hold = "1m"`),
			line: 10, col: 10, summary: "Invalid at", hint: `"1hr" is not a duration (example: "30s")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := scenarioBase
			if len(tc.edit) > 0 {
				for i := 0; i < len(tc.edit); i += 2 {
					if !strings.Contains(src, tc.edit[i]) {
						t.Fatalf("edit %q does not apply", tc.edit[i])
					}
				}
				src = strings.NewReplacer(tc.edit...).Replace(src)
			}
			src = strings.TrimSuffix(src, "}\n") + tc.add + "}\n"
			s, err := ParseScenario([]byte(src), "testdata/s.hcl", cfg)
			if s != nil {
				t.Errorf("got a scenario with an error")
			}
			ds := diagnostics(t, err)
			if len(ds) != 1 {
				t.Fatalf("want 1 diagnostic, got %d:\n%v\nsource:\n%s", len(ds), err, src)
			}
			d := ds[0]
			if d.File != "testdata/s.hcl" || d.Line != tc.line || d.Column != tc.col {
				t.Errorf("at %s:%d,%d, want testdata/s.hcl:%d,%d: %s", d.File, d.Line, d.Column, tc.line, tc.col, d)
			}
			if !strings.Contains(d.Summary, tc.summary) || !strings.Contains(d.Hint, tc.hint) {
				t.Errorf("got %q; want summary containing %q and hint containing %q", d, tc.summary, tc.hint)
			}
		})
	}
}

func TestParseScenarioReportsEveryProblem(t *testing.T) {
	src := `scenario "s" {
  duration = "3d"
  traffic "shop" {
    trace  = "traces/missing.csv"
    format = "csv"
  }
  event "slow-dependency" {
    app                 = "fraud/scoring"
    at                  = "1h"
    service_time_factor = 3
  }
}
`
	_, err := ParseScenario([]byte(src), "testdata/s.hcl", loadTestConfig(t))
	ds := diagnostics(t, err)
	var got []string
	for _, d := range ds {
		got = append(got, d.Summary)
	}
	want := []string{
		"Invalid duration",
		"Missing peak_rps",
		`Unknown domain "shop"`,
		"Trace file not found",
		"Invalid format",
		"Missing hold in slow-dependency event",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%v\nwant\n%v", ds, want)
	}
}

func TestParseScenarioTranslatesWithDefaults(t *testing.T) {
	s, err := LoadScenarioFile("testdata/scenario.hcl", loadTestConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	want := &domains.Scenario{
		Name:     "worldcup-group-stage",
		Start:    time.Date(1998, 6, 10, 0, 0, 0, 0, time.UTC),
		Duration: 72 * time.Hour,
		Seed:     7,
		Noise:    0.05,
		// Traffic structure (issue 31, traffic): defaults.
		ArrivalNoise: domains.NoiseMultiplicative,
		Traffic: []domains.Traffic{
			{Domain: "payment", Trace: filepath.Join("testdata", "traces", "timeseries.csv"), Format: domains.FormatTimeseries, PeakRPS: 20000,
				PeakRPSOf: domains.PeakOfTrace, AppSkew: 1, FunctionRows: domains.RowsAll, FunctionStride: 1, Functions: domains.FunctionsOnePerApp, AppShift: time.Hour},
			{Domain: "fraud", Trace: filepath.Join("testdata", "traces", "functions.csv"), Format: domains.FormatAzureFunctions, PeakRPS: 8000,
				PeakRPSOf: domains.PeakOfTrace, AppSkew: 1, FunctionRows: domains.RowsAll, FunctionOffset: 1, FunctionStride: 2, Functions: domains.FunctionsOnePerApp, AppShift: time.Hour},
		},
		Events: []domains.Event{
			{Kind: domains.EventFlashSale, Domain: "payment", At: 14 * time.Hour, Multiplier: 2, Ramp: time.Minute, Hold: 20 * time.Minute},
			{Kind: domains.EventBatchWindow, Domain: "fraud", At: time.Hour, Multiplier: 3, Hold: 2 * time.Hour, Every: 24 * time.Hour},
			{Kind: domains.EventSlowDependency, App: "fraud/scoring", At: 30 * time.Hour, ServiceTimeFactor: 3, Hold: 10 * time.Minute},
		},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got\n%+v\nwant\n%+v", s, want)
	}
}

func TestParseScenarioResolvesTracesAgainstItsDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"traces/a.csv", "abs/b.csv", "scenarios/s.hcl"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	abs := filepath.Join(dir, "abs", "b.csv")
	for _, p := range []string{filepath.Join(dir, "traces", "a.csv"), abs} {
		if err := os.WriteFile(p, []byte("time,count\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := `scenario "s" {
  duration = "1h"
  traffic "payment" {
    trace    = "../traces/a.csv"
    format   = "timeseries"
    peak_rps = 1
  }
  traffic "fraud" {
    trace    = "` + abs + `"
    format   = "timeseries"
    peak_rps = 1
  }
}
`
	path := filepath.Join(dir, "scenarios", "s.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadScenarioFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Traffic[0].Trace, filepath.Join(dir, "traces", "a.csv"); got != want {
		t.Errorf("relative trace resolved to %q, want %q", got, want)
	}
	if got := s.Traffic[1].Trace; got != abs {
		t.Errorf("absolute trace became %q, want %q", got, abs)
	}
}

func TestParseScenarioWithoutConfigSkipsReferences(t *testing.T) {
	src := strings.Replace(scenarioBase, `traffic "payment"`, `traffic "anything"`, 1)
	src = strings.TrimSuffix(src, "}\n") + event("slow-dependency", `app = "no/such"`, `at = "1h"`, `service_time_factor = 2`, `hold = "1m"`) + "}\n"
	if _, err := ParseScenario([]byte(src), "testdata/s.hcl", nil); err != nil {
		t.Errorf("nil config: %v", err)
	}
	if _, err := ParseScenario([]byte(src), "testdata/s.hcl", loadTestConfig(t)); err == nil {
		t.Errorf("with a config: want unknown domain and app set errors")
	}
}

// FuzzParseScenario feeds arbitrary text to ParseScenario without a config. It
// must not panic, and returns either a scenario or a non-empty Diagnostics.
func FuzzParseScenario(f *testing.F) {
	f.Add([]byte(scenarioBase))
	f.Add([]byte(strings.TrimSuffix(scenarioBase, "}\n") + event("slow-dependency", `app = "a/b"`, `at = "1h"`, `hold = "1m"`, `every = "1m"`) + "}\n"))
	if src, err := os.ReadFile("testdata/scenario.hcl"); err == nil {
		f.Add(src)
	}
	for _, edit := range []string{`duration = ` + deep(1000), `duration = "1000000h"`, "duration = " + strings.Repeat("!", 500) + "1",
		"duration = \"72h\"\n  noise = 1e300", "duration = \"72h\"\n  seed = -1", "duration = \"\x00\xff\""} {
		f.Add([]byte(strings.Replace(scenarioBase, `duration = "72h"`, edit, 1)))
	}
	f.Add([]byte(strings.Replace(scenarioBase, "peak_rps = 100", "peak_rps = 1e300", 1)))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := ParseScenario(src, "testdata/fuzz.hcl", nil)
		if (s == nil) == (err == nil) {
			t.Fatalf("scenario %v and error %v: want exactly one", s, err)
		}
		if err == nil && (s.Duration <= 0 || s.Duration > domains.MaxScenarioDuration) {
			t.Fatalf("valid scenario with duration %v", s.Duration)
		}
		if err != nil && len(diagnostics(t, err)) == 0 {
			t.Fatalf("empty Diagnostics")
		}
	})
}

func TestScenarioExtendsABase(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, n := range []string{"a.csv", "b.csv"} {
		write(n, "time,count\n")
	}
	write("base.hcl", `scenario "base" {
  start    = "1998-06-10T00:00:00Z"
  duration = "24h"
  seed     = 3
  traffic "payment" {
    trace    = "a.csv"
    format   = "timeseries"
    peak_rps = 100
  }
  traffic "fraud" {
    trace    = "a.csv"
    format   = "timeseries"
    peak_rps = 50
  }
  event "flash-sale" {
    domain     = "payment"
    at         = "1h"
    multiplier = 2
    hold       = "10m"
  }
}
`)
	child := write("child.hcl", `scenario "child" {
  extends = "base.hcl"
  seed    = 9
  traffic "fraud" {
    trace    = "b.csv"
    format   = "timeseries"
    peak_rps = 70
  }
  event "slow-dependency" {
    app                 = "fraud/scoring"
    at                  = "2h"
    service_time_factor = 3
    hold                = "5m"
  }
}
`)
	s, err := LoadScenarioFile(child, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "child" || s.Duration != 24*time.Hour || s.Seed != 9 || s.Start.IsZero() {
		t.Fatalf("settings: name %q duration %s seed %d start %s", s.Name, s.Duration, s.Seed, s.Start)
	}
	if len(s.Traffic) != 2 || s.Traffic[0].PeakRPS != 100 || s.Traffic[1].PeakRPS != 70 || filepath.Base(s.Traffic[1].Trace) != "b.csv" {
		t.Fatalf("traffic: %+v", s.Traffic)
	}
	if len(s.Events) != 2 || s.Events[0].Kind != domains.EventFlashSale || s.Events[1].Kind != domains.EventSlowDependency {
		t.Fatalf("events: %+v", s.Events)
	}

	loop := write("loop.hcl", "scenario \"loop\" {\n  extends = \"loop.hcl\"\n}\n")
	_, err = LoadScenarioFile(loop, nil)
	var ds Diagnostics
	if !errors.As(err, &ds) || ds[0].Line != 2 || ds[0].Column != 13 || !strings.Contains(ds[0].String(), "Invalid extends") {
		t.Fatalf("a scenario extending itself: %v", err)
	}
	missing := write("missing.hcl", "scenario \"m\" {\n  extends = \"nope.hcl\"\n}\n")
	if _, err = LoadScenarioFile(missing, nil); !errors.As(err, &ds) || ds[0].Line != 2 || !strings.Contains(ds[0].String(), "does not load") {
		t.Fatalf("a missing base: %v", err)
	}
}

// TestParseScenarioTrafficOptions pins how the traffic block's optional
// attributes translate, defaults included.
func TestParseScenarioTrafficOptions(t *testing.T) {
	cfg := loadTestConfig(t)
	functions := []string{"traces/timeseries.csv", "traces/functions.csv", `format   = "timeseries"`, `format   = "azure-functions"`}
	cases := []struct {
		name string
		edit []string
		add  string // attributes after peak_rps
		want domains.Traffic
	}{
		{name: "unset attributes keep today's behaviour",
			want: domains.Traffic{PeakRPSOf: domains.PeakOfTrace, AppSkew: 1, FunctionRows: domains.RowsAll, FunctionStride: 1, Functions: domains.FunctionsOnePerApp, AppShift: time.Hour}},
		{name: "app_skew = 0 is equal shares, not unset",
			add:  "app_skew = 0",
			want: domains.Traffic{PeakRPSOf: domains.PeakOfTrace, AppSkew: 1, EqualShares: true, FunctionRows: domains.RowsAll, FunctionStride: 1, Functions: domains.FunctionsOnePerApp, AppShift: time.Hour}},
		{name: "app_skew sets the sigma of the weights",
			add:  "app_skew = 2.5",
			want: domains.Traffic{PeakRPSOf: domains.PeakOfTrace, AppSkew: 2.5, FunctionRows: domains.RowsAll, FunctionStride: 1, Functions: domains.FunctionsOnePerApp, AppShift: time.Hour}},
		{name: "peak_rps_of window maps the window's maximum",
			add:  `peak_rps_of = "window"`,
			want: domains.Traffic{PeakRPSOf: domains.PeakOfWindow, AppSkew: 1, FunctionRows: domains.RowsAll, FunctionStride: 1, Functions: domains.FunctionsOnePerApp, AppShift: time.Hour}},
		{name: "function_rows picks the even or odd rows of an azure-functions trace",
			edit: functions, add: `function_rows = "odd"`,
			want: domains.Traffic{PeakRPSOf: domains.PeakOfTrace, AppSkew: 1, FunctionRows: domains.RowsOdd, FunctionStride: 1, Functions: domains.FunctionsOnePerApp, AppShift: time.Hour}},
		{name: "functions summed makes one shape that app_skew splits",
			edit: functions, add: "functions = \"summed\"\n    app_skew = 1.6",
			want: domains.Traffic{PeakRPSOf: domains.PeakOfTrace, AppSkew: 1.6, FunctionRows: domains.RowsAll, FunctionStride: 1, Functions: domains.FunctionsSummed, AppShift: time.Hour}},
		// Traffic structure (issue 31, traffic).
		{name: "burst_sigma and burst_correlation size the domain's burst",
			add:  "burst_sigma = 0.03\n    burst_correlation = 0.4",
			want: domains.Traffic{PeakRPSOf: domains.PeakOfTrace, AppSkew: 1, FunctionRows: domains.RowsAll, FunctionStride: 1, Functions: domains.FunctionsOnePerApp, AppShift: time.Hour, BurstSigma: 0.03, BurstCorrelation: 0.4}},
		{name: "app_own and app_shift give each app a component of its own",
			add:  "app_own = 0.5\n    app_shift = \"45m\"",
			want: domains.Traffic{PeakRPSOf: domains.PeakOfTrace, AppSkew: 1, FunctionRows: domains.RowsAll, FunctionStride: 1, Functions: domains.FunctionsOnePerApp, AppShift: 45 * time.Minute, AppOwn: 0.5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.NewReplacer(tc.edit...).Replace(scenarioBase)
			src = strings.Replace(src, "peak_rps = 100", "peak_rps = 100\n    "+tc.add, 1)
			s, err := ParseScenario([]byte(src), "testdata/s.hcl", cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := s.Traffic[0]
			got.Domain, got.Trace, got.Format, got.PeakRPS = "", "", "", 0
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// Every example scenario loads against the config of the world it was
// written for, its trace files present: an example that no longer parses
// (a renamed attribute, a moved trace) fails here rather than in a user's
// first eval.
func TestExampleScenariosLoad(t *testing.T) {
	world := func(path string) string {
		name := filepath.Base(path)
		switch {
		case strings.Contains(path, "/seed/"):
			return "seedscale.hcl"
		case strings.HasPrefix(name, "small-"):
			return "small.hcl"
		case strings.HasPrefix(name, "tenth-"):
			return "tenth.hcl"
		}
		return "paymentscale.hcl"
	}
	var paths []string
	for _, glob := range []string{"*.hcl", "*/*.hcl", "*/*/*.hcl"} {
		m, err := filepath.Glob(filepath.Join("../../examples/scenarios", glob))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 30 {
		t.Fatalf("found %d example scenarios, want the 30 or more of examples/scenarios", len(paths))
	}
	cfgs := map[string]*domains.Config{}
	for _, p := range paths {
		w := world(p)
		if cfgs[w] == nil {
			cfg, err := LoadFile(filepath.Join("../../examples", w))
			if err != nil {
				t.Fatal(err)
			}
			cfgs[w] = cfg
		}
		if _, err := LoadScenarioFile(p, cfgs[w]); err != nil {
			t.Errorf("%s (for examples/%s): %v", p, w, err)
		}
	}
}

func TestParseScenarioAnnouncedEvents(t *testing.T) {
	cfg := loadTestConfig(t)
	src := strings.TrimSuffix(strings.Replace(scenarioBase, `duration = "72h"`, "start = \"2026-11-27T00:00:00Z\"\n  duration = \"72h\"", 1), "}\n") +
		event("flash-sale", `domain = "payment"`, `at = "1h40m"`, `multiplier = 2`, `ramp = "1m"`, `hold = "40m"`, `announced = "2h"`) +
		event("batch-window", `domain = "payment"`, `at = "10h"`, `multiplier = 3`, `hold = "1h"`, `every = "24h"`, `announced = "10h"`) +
		event("flash-sale", `domain = "payment"`, `at = "5h"`, `multiplier = 4`, `hold = "10m"`) +
		event("flash-sale", `domain = "payment"`, `at = "71h"`, `multiplier = 2`, `hold = "10m"`, `announced = "74h"`) + "}\n"
	s, err := ParseScenario([]byte(src), "testdata/s.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	want := []domains.Planned{
		// The sale as the calendar had it: 20 minutes later than it came.
		{Name: "flash-sale", Domain: "payment", Start: day.Add(2 * time.Hour), Duration: 41 * time.Minute, Load: 2},
		// A nightly window, once a night of the three; the unannounced
		// sale is in no calendar.
		{Name: "batch-window", Domain: "payment", Start: day.Add(10 * time.Hour), Duration: time.Hour, Load: 3},
		{Name: "batch-window", Domain: "payment", Start: day.Add(34 * time.Hour), Duration: time.Hour, Load: 3},
		{Name: "batch-window", Domain: "payment", Start: day.Add(58 * time.Hour), Duration: time.Hour, Load: 3},
	}
	// A sale in the last hour announced for after the end: its lead may
	// open within the scenario, so it is in the calendar.
	want = append(want, domains.Planned{Name: "flash-sale", Domain: "payment", Start: day.Add(74 * time.Hour), Duration: 10 * time.Minute, Load: 2})
	if got := s.Planned(); !reflect.DeepEqual(got, want) {
		t.Fatalf("planned\n%+v\nwant\n%+v", got, want)
	}
	merged := cfg.WithPlanned(s.Planned())
	if len(cfg.Calendar.Events) != 0 || len(merged.Calendar.Events) != 5 || merged.Calendar.Lead != 30*time.Minute {
		t.Fatalf("WithPlanned: the config's calendar %d events, the merged one's %d (lead %s); want 0 and 5 at 30m",
			len(cfg.Calendar.Events), len(merged.Calendar.Events), merged.Calendar.Lead)
	}
}
