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
		"good.hcl":                     validateGoodConfig,
		"bad.hcl":                      strings.Replace(validateGoodConfig, `service_time    = "25ms"`, `service_time    = "25x"`+"\n    min_replicas = 0", 1),
		"scenarios/flash.hcl":          validateGoodScenario,
		"scenarios/broken.hcl":         strings.Replace(validateGoodScenario, "traces/payment.csv", "traces/nope.csv", 1),
		"scenarios/traces/payment.csv": "time,count\n1998-06-10T00:00:00Z,1\n",
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
		{name: "a good config and scenario print both summaries",
			args:   []string{"--config", path("good.hcl"), "--scenario", path("scenarios/flash.hcl")},
			stdout: "ok: cluster prod, 2 domains, 2 app sets, 4 apps; scenario flash, 72h, 1 traffic, 1 event\n"},
		{name: "a bad config reports every problem with its position",
			args: []string{"--config", path("bad.hcl")}, code: 1,
			stderrHave: []string{
				path("bad.hcl") + `:10,23-28: Invalid service_time; "25x" is not a duration (example: "30s").`,
				path("bad.hcl") + `:11,20-21: Invalid min_replicas; min_replicas must be >= 1, got 0.`,
			}},
		{name: "a bad scenario is reported",
			args: []string{"--config", path("good.hcl"), "--scenario", path("scenarios/broken.hcl")}, code: 1,
			stderrHave: []string{path("scenarios/broken.hcl") + ":4,16-33: Trace file not found"}},
		{name: "a bad config and a bad scenario are reported together",
			args: []string{"--config", path("bad.hcl"), "--scenario", path("scenarios/broken.hcl")}, code: 1,
			stderrHave: []string{"Invalid service_time", "Trace file not found"}},
		{name: "a missing file is an error",
			args: []string{"--config", path("nope.hcl")}, code: 1,
			stderrHave: []string{"load config", "nope.hcl"}},
		{name: "no --config is a usage error",
			args: nil, code: 2, stderrHave: []string{"--config is required", "Usage: regiment validate"}},
		{name: "an unknown flag is a usage error",
			args: []string{"--confg", "x"}, code: 2, stderrHave: []string{"flag provided but not defined: -confg"}},
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
