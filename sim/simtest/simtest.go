// Package simtest builds simulations of the repository's shipped worlds for
// tests and benchmarks: one call instead of loading a config, a scenario and
// its traces by hand in every package. It imports sim, sim/trace and
// domains/config; only tests import it.
package simtest

import (
	"testing"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/trace"
)

// World loads the cluster config at configPath and the scenario at
// scenarioPath (paths relative to the test's package directory, traces
// relative to the scenario) and returns the config and a fresh simulation of
// the scenario at its start. Any failure fails tb.
func World(tb testing.TB, configPath, scenarioPath string) (*domains.Config, *sim.Sim) {
	tb.Helper()
	cfg, err := config.LoadFile(configPath)
	if err != nil {
		tb.Fatal(err)
	}
	sc, err := config.LoadScenarioFile(scenarioPath, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	traces, err := trace.Load(sc)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := sim.New(cfg, sc, traces)
	if err != nil {
		tb.Fatal(err)
	}
	return cfg, s
}
