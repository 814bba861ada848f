package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/offline/eval"
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
	checkEvalReport(t, dir, []string{"hpa", "static", "regiment", "regiment-independent"}, 2)
}

// checkEvalReport checks what eval wrote to dir holds its figures: report.json
// parses with one run per policy and seed, each with a provisioned cost;
// report.md has the scenario's table and the whole set's, a row per policy;
// series.csv has a header and samples; and every PNG decodes to a plot of
// non-trivial size.
func checkEvalReport(t *testing.T, dir string, policies []string, seeds int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep eval.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	if rep.Seeds != seeds || len(rep.Runs) != len(policies)*seeds {
		t.Errorf("report.json: %d seeds, %d runs; want %d seeds, %d runs", rep.Seeds, len(rep.Runs), seeds, len(policies)*seeds)
	}
	have := map[string]bool{}
	for _, r := range rep.Runs {
		have[fmt.Sprintf("%s/%d", r.Policy, r.SeedIndex)] = true
		if r.Scenario != "small-sample" || !(r.CostCoreHours > 0) || r.SimSeconds <= 0 {
			t.Errorf("report.json run %s/%s/%d: cost %.1f core-hours over %.0f simulated seconds", r.Scenario, r.Policy, r.SeedIndex, r.CostCoreHours, r.SimSeconds)
		}
	}
	for _, p := range policies {
		for k := range seeds {
			if !have[fmt.Sprintf("%s/%d", p, k)] {
				t.Errorf("report.json has no run of %s at seed index %d", p, k)
			}
		}
	}
	if len(rep.Totals) != len(policies) {
		t.Errorf("report.json: %d totals, want one per policy (%d)", len(rep.Totals), len(policies))
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Evaluation: cluster ", "\n## small-sample\n", "\n## All scenarios\n"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md has no %q", want)
		}
	}
	for _, p := range policies {
		if !regexp.MustCompile(`(?m)^\| *` + regexp.QuoteMeta(p) + ` *\|`).Match(md) {
			t.Errorf("report.md has no table row for %s", p)
		}
	}
	csv, err := os.ReadFile(filepath.Join(dir, "series.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(csv), "\n"); n < 2 {
		t.Errorf("series.csv has %d lines, want a header and samples", n)
	}
	for _, name := range []string{"cost-vs-slo.png", "small-sample-payment.png", "small-sample-breaches.png"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		b := img.Bounds()
		if b.Dx() < 200 || b.Dy() < 100 || plainImage(img) {
			t.Errorf("%s: a %dx%d image of one colour, want a plot", name, b.Dx(), b.Dy())
		}
	}
}

// plainImage reports whether every pixel of img is one colour.
func plainImage(img image.Image) bool {
	b := img.Bounds()
	r0, g0, b0, a0 := img.At(b.Min.X, b.Min.Y).RGBA()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bb, a := img.At(x, y).RGBA(); r != r0 || g != g0 || bb != b0 || a != a0 {
				return false
			}
		}
	}
	return true
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
