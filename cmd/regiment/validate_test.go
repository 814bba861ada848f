package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const validateGoodConfig = `cluster "prod" {
  capacity_cores = 1000
}
domain "payment" {
  floor = 0.2
  slo { latency_p99 = "150ms" }
  apps "checkout" {
    count           = 3
    cpu_per_replica = 0.5
    service_time    = "25ms"
    depends_on      = ["fraud/scoring"]
  }
}
domain "fraud" {
  slo { latency_p99 = "80ms" }
  apps "scoring" {
    cpu_per_replica = 1
    service_time    = "10ms"
  }
}
`

const validateGoodScenario = `scenario "flash" {
  duration = "72h"
  traffic "payment" {
    trace    = "traces/payment.csv"
    format   = "timeseries"
    peak_rps = 100
  }
  event "flash-sale" {
    domain     = "payment"
    at         = "1h"
    multiplier = 2
    hold       = "20m"
  }
}
`

// writeFiles writes name -> content under a new temporary directory and
// returns the directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRunValidate(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"good.hcl":            validateGoodConfig,
		"bad.hcl":             strings.Replace(validateGoodConfig, `service_time    = "25ms"`, `service_time    = "25x"`+"\n    min_replicas = 0", 1),
		"scenarios/flash.hcl": validateGoodScenario,
		"promql.hcl": validateGoodConfig + `prometheus {
  url = "http://prometheus:9090"
  queries {
    rps = "sum(rate(http_requests_total{namespace=\"{{.Namespace}}\"}[1m])"
    p99 = "histogram_quantile(0.99, sum by (le) (rate(latency_bucket{pod=~\"{{.Pods}}\"}[1m5])))"
  }
}
`,
		// Hostile files: a nesting that exhausted the parser's stack (a fatal
		// error, exit 2 from the Go runtime, before the nesting limit), and
		// values that validated but broke the control loop.
		"deep.hcl":                     strings.Replace(validateGoodConfig, "capacity_cores = 1000", "capacity_cores = "+strings.Repeat("[", 100000)+strings.Repeat("]", 100000), 1),
		"huge.hcl":                     strings.Replace(strings.Replace(validateGoodConfig, "count           = 3", "count           = 100000000\n    max_replicas    = 3000000000", 1), "capacity_cores = 1000", "capacity_cores = 1e300", 1) + "soldier {\n  tick = \"1ns\"\n}\n",
		"scenarios/deep.hcl":           "scenario \"s\" {\n  duration = " + strings.Repeat("(", 100000) + "\n}\n",
		"scenarios/broken.hcl":         strings.Replace(validateGoodScenario, "traces/payment.csv", "traces/nope.csv", 1),
		"scenarios/traces/payment.csv": "time,count\n1998-06-10T00:00:00Z,1\n",
		"scenarios/surge.hcl":          strings.Replace(validateGoodScenario, "peak_rps = 100", "peak_rps = 20000", 1),
	})
	path := func(name string) string { return filepath.Join(dir, name) }
	cases := []struct {
		name       string
		args       []string
		code       int
		stdout     string   // exact, when the run succeeds
		stderrHave []string // substrings of stderr
	}{
		{name: "a good config prints a summary",
			args:   []string{"--config", path("good.hcl")},
			stdout: "ok: cluster prod, 2 domains, 2 app sets, 4 apps\n"},
		{name: "a config that discovers apps says so",
			args:   []string{"--config", "../../examples/staging-discover.hcl"},
			stdout: "ok: cluster staging, 2 domains, 0 app sets, 0 apps (and those 2 discover blocks find on the cluster)\n"},
		{name: "a good config and scenario print both summaries",
			args:   []string{"--config", path("good.hcl"), "--scenario", path("scenarios/flash.hcl")},
			stdout: "ok: cluster prod, 2 domains, 2 app sets, 4 apps; scenario flash, 72h, 1 traffic, 1 event\n"},
		{name: "a scenario whose demand outgrows max_replicas warns and passes",
			args:   []string{"--config", path("good.hcl"), "--scenario", path("scenarios/surge.hcl")},
			stdout: "ok: cluster prod, 2 domains, 2 app sets, 4 apps; scenario flash, 72h, 1 traffic, 1 event\n",
			stderrHave: []string{
				"warning: the scenario's demand outgrows the max_replicas of 4 apps: they breach whatever scales them",
				"app                 max_replicas  peak needs  peak at    minutes over",
				"payment/checkout-0  100           728         +1h18m40s  4320.0", // the flash sale's peak, every minute of the 72 h
				"payment/checkout-2  100           202         +1h9m50s   54.2",
			}},
		{name: "a bad config reports every problem with its position",
			args: []string{"--config", path("bad.hcl")}, code: 1,
			stderrHave: []string{
				path("bad.hcl") + `:10,23-28: Invalid service_time; "25x" is not a duration (example: "30s").`,
				path("bad.hcl") + `:11,20-21: Invalid min_replicas; min_replicas must be in [1, 1000000], got 0.`,
			}},
		{name: "malformed PromQL is located at its query, with the parser's position",
			args: []string{"--config", path("promql.hcl")}, code: 1,
			stderrHave: []string{
				path("promql.hcl") + `:24,11-76: Invalid rps; not PromQL: unclosed left parenthesis at 1:50 of the query as run (at its end).`,
				path("promql.hcl") + `:25,11-98: Invalid p99; not PromQL: bad number or duration syntax: "1m5" at 1:76 of the query as run (at "1m5])))").`,
			}},
		{name: "a bad scenario is reported",
			args: []string{"--config", path("good.hcl"), "--scenario", path("scenarios/broken.hcl")}, code: 1,
			stderrHave: []string{path("scenarios/broken.hcl") + ":4,16-33: Trace file not found"}},
		{name: "a bad config and a bad scenario are reported together",
			args: []string{"--config", path("bad.hcl"), "--scenario", path("scenarios/broken.hcl")}, code: 1,
			stderrHave: []string{"Invalid service_time", "Trace file not found"}},
		{name: "a deeply nested config is invalid input, not a crash",
			args: []string{"--config", path("deep.hcl")}, code: 1,
			stderrHave: []string{path("deep.hcl") + ":2,83-84: Nesting too deep; expressions may nest at most 64 levels"}},
		{name: "a deeply nested scenario is invalid input",
			args: []string{"--config", path("good.hcl"), "--scenario", path("scenarios/deep.hcl")}, code: 1,
			stderrHave: []string{path("scenarios/deep.hcl") + ":2,77-78: Nesting too deep"}},
		{name: "values that would overflow or spin the control loop are out of range",
			args: []string{"--config", path("huge.hcl")}, code: 1,
			stderrHave: []string{
				path("huge.hcl") + ":2,20-25: Invalid capacity_cores; capacity_cores must be in (0, 10000000], got 1e+300.",
				path("huge.hcl") + ":8,23-32: Invalid count; count must be in [1, 100000], got 100000000.",
				path("huge.hcl") + ":9,23-33: Invalid max_replicas; max_replicas must be in [1, 1000000], got 3000000000.",
				path("huge.hcl") + `:23,10-15: Invalid tick; tick must be in [1ms, 24h0m0s], got 1ns.`,
			}},
		{name: "a missing file is an error",
			args: []string{"--config", path("nope.hcl")}, code: 1,
			stderrHave: []string{"load config", "nope.hcl"}},
		{name: "no --config is a usage error",
			args: nil, code: 2, stderrHave: []string{"--config is required", "Usage: regiment validate"}},
		{name: "an unknown flag is a usage error",
			args: []string{"--confg", "x"}, code: 2, stderrHave: []string{"flag provided but not defined: --confg; did you mean --config?"}},
		{name: "--help explains with an example",
			args: []string{"--help"}, code: 0, stderrHave: []string{"Example:", "regiment validate --config"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runValidate(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if tc.code == 0 && stdout.String() != tc.stdout {
				t.Errorf("stdout %q, want %q", stdout.String(), tc.stdout)
			}
			for _, s := range tc.stderrHave {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
		})
	}
}

func TestDispatchKnowsValidate(t *testing.T) {
	var stdout, stderr bytes.Buffer
	dir := writeFiles(t, map[string]string{"c.hcl": validateGoodConfig})
	if code := dispatch(context.Background(), []string{"validate", "--config", filepath.Join(dir, "c.hcl")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	var help bytes.Buffer
	usage(&help)
	if !strings.Contains(help.String(), "validate") {
		t.Errorf("usage does not list validate:\n%s", help.String())
	}
}

// TestValidateReadsTracesAsSimDoes: validate --scenario reads every trace the
// scenario names with sim's loader, so each malformed trace fails both with
// the same error, naming the file and line.
func TestValidateReadsTracesAsSimDoes(t *testing.T) {
	traces := map[string]string{
		"bad time":        "time,count\nnot-a-time,1\n",
		"bad count":       "time,count\n1998-06-10T00:00:00Z,abc\n",
		"negative count":  "time,count\n1998-06-10T00:00:00Z,1\n1998-06-10T00:01:00Z,-5\n",
		"infinite count":  "time,count\n1998-06-10T00:00:00Z,1e999\n",
		"missing column":  "time,count\n1998-06-10T00:00:00Z\n",
		"extra column":    "time,count\n1998-06-10T00:00:00Z,1,2\n",
		"header only":     "time,count\n",
		"empty":           "",
		"wrong header":    "when,how_many\n1998-06-10T00:00:00Z,1\n",
		"all zero":        "time,count\n1998-06-10T00:00:00Z,0\n1998-06-10T00:01:00Z,0\n",
		"binary":          "\x00\x01\x02\xff\xfe,\x00\n\x89PNG\r\n",
		"unquoted quote":  "time,count\n1998-06-10T00:00:00Z,\"1\n",
		"time going back": "time,count\n1998-06-10T00:01:00Z,1\n1998-06-10T00:00:00Z,1\n",
	}
	for name, content := range traces {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{
				"good.hcl":                     validateGoodConfig,
				"scenarios/flash.hcl":          validateGoodScenario,
				"scenarios/traces/payment.csv": content,
			})
			args := []string{"--config", filepath.Join(dir, "good.hcl"), "--scenario", filepath.Join(dir, "scenarios/flash.hcl")}
			var vout, verr, sout, serr bytes.Buffer
			vcode := runValidate(context.Background(), args, &vout, &verr)
			scode := runSim(context.Background(), args, &sout, &serr)
			t.Logf("sim exits %d: %s", scode, strings.TrimSpace(serr.String()))
			if scode == 0 {
				// sim takes it: validate must too.
				if vcode != 0 {
					t.Fatalf("sim accepts the trace, validate exits %d:\n%s", vcode, verr.String())
				}
				return
			}
			if vcode != 1 {
				t.Fatalf("sim refuses the trace (%s), validate exits %d", serr.String(), vcode)
			}
			if want := "regiment sim: " + verr.String(); serr.String() != want {
				t.Fatalf("validate says\n%s\nsim says\n%s", verr.String(), serr.String())
			}
			if !strings.Contains(verr.String(), "payment.csv") {
				t.Errorf("the error does not name the trace file:\n%s", verr.String())
			}
		})
	}
}
