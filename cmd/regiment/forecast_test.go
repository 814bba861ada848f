package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/forecast"
)

// writeDemandTrace writes days of a diurnal per-minute demand with noise as
// a timeseries trace; shift, when not zero, makes the days after the first
// week busier by that factor from 08:00 to 12:00 (a change the history does
// not know).
func writeDemandTrace(t *testing.T, days int, shift float64) string {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	var b strings.Builder
	b.WriteString("time,count\n")
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for m := range days * 1440 {
		at := start.Add(time.Duration(m) * time.Minute)
		v := 1000 + 600*math.Sin(2*math.Pi*float64(m%1440)/1440)
		if h := at.Hour(); shift != 0 && m >= 7*1440 && h >= 8 && h < 12 {
			v *= shift
		}
		v *= 1 + 0.05*r.NormFloat64()
		fmt.Fprintf(&b, "%s,%d\n", at.Format(time.RFC3339), int(max(v, 0)))
	}
	path := filepath.Join(t.TempDir(), "demand.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestForecastScoresATrace(t *testing.T) {
	path := writeDemandTrace(t, 10, 0)
	out := filepath.Join(t.TempDir(), "report.json")
	var stdout, stderr bytes.Buffer
	code := runForecast(context.Background(), []string{"--trace", path, "--warmup", "3d", "--json", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"1 series, 14400 minutes from 2026-03-01T00:00:00Z", "12h-16h", "+15m", ": PASS", "better than persistence"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep forecast.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Warmup != 3*1440 || rep.Overall.N == 0 || rep.Horizon[1].NaiveMAPE <= rep.Horizon[1].MAPE {
		t.Errorf("report: warm-up %d, %d scored, 15-min MAPE %v vs persistence %v", rep.Warmup, rep.Overall.N, rep.Horizon[1].MAPE, rep.Horizon[1].NaiveMAPE)
	}
}

// A demand that changes where the seasonal history says it will not leaves
// P80 uncalibrated in that slice: the command says so and exits 1.
func TestForecastFailsAnUncalibratedSlice(t *testing.T) {
	path := writeDemandTrace(t, 8, 1.6)
	var stdout, stderr bytes.Buffer
	code := runForecast(context.Background(), []string{"--trace", path, "--warmup", "7d"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), ": FAIL") || !strings.Contains(stdout.String(), "outside the target: 8h-12h") {
		t.Fatalf("exit %d, want 1 and the 8h-12h slice named\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
}

func TestForecastRefusesBadInvocations(t *testing.T) {
	path := writeDemandTrace(t, 2, 0)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"the trace is required", nil, 2, "--trace is required"},
		{"an unknown format is a usage error", []string{"--trace", path, "--format", "csv"}, 2, `unknown --format "csv"`},
		{"a warm-up that is no duration is a usage error", []string{"--trace", path, "--warmup", "two days"}, 2, "neither a duration"},
		{"a warm-up in seconds is a usage error", []string{"--trace", path, "--warmup", "90s"}, 2, "whole number of minutes"},
		{"a warm-up as long as the trace leaves nothing to score", []string{"--trace", path, "--warmup", "2d"}, 1, "leaves nothing of the trace's 2880 minutes"},
		{"a missing trace is a failure", []string{"--trace", filepath.Join(t.TempDir(), "nope.csv")}, 1, "nope.csv"},
		{"a trace in another format is a failure", []string{"--trace", path, "--format", "azure-functions"}, 1, "read trace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := runForecast(context.Background(), tt.args, &stdout, &stderr); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("exit %d, want %d with %q; stderr:\n%s", code, tt.code, tt.want, stderr.String())
			}
		})
	}
}
