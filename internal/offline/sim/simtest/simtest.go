// Package simtest builds simulations of the repository's shipped worlds for
// tests and benchmarks: one call instead of loading a config, a scenario and
// its traces by hand in every package. It loads them with internal/offline/sim/scenario, the
// loader every caller uses; only tests import it.
package simtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
)

// World loads the cluster config at configPath and the scenario at
// scenarioPath (paths relative to the test's package directory, traces
// relative to the scenario) and returns the config and a fresh simulation of
// the scenario at its start. Any failure fails tb.
func World(tb testing.TB, configPath, scenarioPath string) (*domains.Config, *sim.Sim) {
	tb.Helper()
	return WorldFor(tb, configPath, scenarioPath, 0)
}

// WorldFor is World with the scenario cut to duration (0: as it is).
func WorldFor(tb testing.TB, configPath, scenarioPath string, duration time.Duration) (*domains.Config, *sim.Sim) {
	tb.Helper()
	return WorldOf(tb, configPath, scenarioPath, duration, nil)
}

// WorldOf is WorldFor in the world of(cfg) returns, a config the loaded one
// becomes (baseline.World: a policy's world); nil keeps it.
func WorldOf(tb testing.TB, configPath, scenarioPath string, duration time.Duration, of func(*domains.Config) *domains.Config) (*domains.Config, *sim.Sim) {
	tb.Helper()
	cfg, err := config.LoadFile(configPath)
	if err != nil {
		tb.Fatal(err)
	}
	if of != nil {
		cfg = of(cfg)
	}
	sc, err := scenario.Read(cfg, scenarioPath)
	if err != nil {
		tb.Fatal(err)
	}
	if duration > 0 {
		sc.Duration = duration
	}
	s, err := sim.New(cfg, sc.Scenario, sc.Traces)
	if err != nil {
		tb.Fatal(err)
	}
	return cfg, s
}

// warmTicks is how far a benchmark or an allocation test runs before it
// measures: an hour of 10 s ticks, every ring and buffer at its size.
const warmTicks = 360

// tick is one policy decision and one simulator step.
func tick(s *sim.Sim, p sim.Policy) {
	p.Decide(s.Now(), s.Telemetry(), s.Targets())
	s.Step()
}

// BenchmarkTicks times one tick, policy decision and simulator step, of the
// world newWorld builds, warmTicks in, building a fresh one whenever the
// scenario ends; it reports allocations and x-realtime, simulated over wall
// time.
func BenchmarkTicks(b *testing.B, newWorld func() (*sim.Sim, sim.Policy)) {
	s, p := newWorld()
	for range warmTicks {
		tick(s, p)
	}
	b.ReportAllocs()
	for b.Loop() {
		if s.Done() {
			b.StopTimer()
			s, p = newWorld()
			b.StartTimer()
		}
		tick(s, p)
	}
	b.ReportMetric(float64(s.Tick().Nanoseconds())*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "x-realtime")
}

// TickAllocs is the mean allocations of one tick of p on s over 60 ticks
// (ten 60 s Commander ticks at the 10 s tick), warmTicks in.
func TickAllocs(s *sim.Sim, p sim.Policy) float64 {
	for range warmTicks {
		tick(s, p)
	}
	return testing.AllocsPerRun(60, func() { tick(s, p) })
}

// AnnouncedSale writes a scenario extending the scenario at basePath with a
// payment sale at 40 min (3x for 10 min), announced for announced in the
// operator's calendar (unannounced when ""), and returns its path.
func AnnouncedSale(tb testing.TB, basePath, announced string) string {
	tb.Helper()
	base, err := filepath.Abs(basePath)
	if err != nil {
		tb.Fatal(err)
	}
	if announced != "" {
		announced = "\n    announced  = \"" + announced + "\""
	}
	src := "scenario \"announced\" {\n  extends = \"" + base + "\"\n  event \"flash-sale\" {\n    domain     = \"payment\"\n" +
		"    at         = \"40m\"\n    multiplier = 3\n    hold       = \"10m\"" + announced + "\n  }\n}\n"
	path := filepath.Join(tb.TempDir(), "announced.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}
