package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestEvalRejectsBadUsage(t *testing.T) {
	small := []string{"--config", "../../examples/small.hcl", "--scenario", "testdata/small-sample.hcl"}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"missing --out is a usage error", small, 2},
		{"missing --scenario is a usage error", []string{"--config", "../../examples/small.hcl", "--out", "x"}, 2},
		{"unknown policy is a usage error", append(small, "--out", "x", "--policies", "static,nope"), 2},
		{"no seeds is a usage error", append(small, "--out", "x", "--seeds", "0"), 2},
		{"a stray argument is a usage error", append(small, "--out", "x", "extra"), 2},
		{"missing config file fails", []string{"--config", "nope.hcl", "--scenario", "testdata/small-sample.hcl", "--out", "x"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if got := runEval(context.Background(), tt.args, &out, &errOut); got != tt.want {
				t.Fatalf("exit %d, want %d; stderr: %s", got, tt.want, errOut.String())
			}
		})
	}
}

func TestEvalWritesReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	args := []string{"--config", "../../examples/small.hcl", "--scenario", "testdata/small-sample.hcl",
		"--policies", "hpa,static,regiment", "--seeds", "2", "--duration", "30m", "--workers", "2", "--out", dir}
	var out, errOut bytes.Buffer
	if code := runEval(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("regiment eval exited %d: %s", code, errOut.String())
	}
	// regiment-independent runs right after regiment (--ablation): 4 policies.
	if !strings.Contains(out.String(), "8 runs (1 scenario x 4 policies x 2 seeds)") {
		t.Errorf("summary %q does not count 8 runs", out.String())
	}
	if !regexp.MustCompile(`(?m)^the hierarchy's worth, regiment x regiment-independent: cost \d+\.\d{3}, breaches \d+\.\d{3}, bad requests \d+\.\d{3}, energy \d+\.\d{3}$`).MatchString(out.String()) {
		t.Errorf("summary %q does not price the hierarchy", out.String())
	}
	// The whole set's ratios to hpa, hpa's own all 1.
	if !strings.Contains(out.String(), "over the whole set (1 scenario)") ||
		!regexp.MustCompile(`(?m)^\s+hpa(\s+(1\.000|n/a)){9}\s*$`).MatchString(out.String()) ||
		!regexp.MustCompile(`(?m)^\s+regiment\s+\d+\.\d{3}\s`).MatchString(out.String()) {
		t.Errorf("summary %q has no table of the whole set against hpa", out.String())
	}
	if errOut.Len() != 0 {
		t.Errorf("progress written to a non-terminal: %q", errOut.String())
	}
	for _, name := range []string{"report.json", "report.md", "series.csv", "cost-vs-slo.png", "small-sample-payment.png", "small-sample-breaches.png"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

func TestEvalAblationCanBeLeftOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	args := []string{"--config", "../../examples/small.hcl", "--scenario", "testdata/small-sample.hcl",
		"--policies", "hpa,regiment", "--ablation=false", "--duration", "10m", "--workers", "1", "--out", dir}
	var out, errOut bytes.Buffer
	if code := runEval(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("regiment eval exited %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "2 runs (1 scenario x 2 policies x 1 seed)") || strings.Contains(out.String(), "regiment-independent") {
		t.Errorf("--ablation=false still ran the ablation: %q", out.String())
	}
}
