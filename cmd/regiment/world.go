package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/eval"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// world is a loaded config and scenario with their traces: everything a
// simulation needs.
type world struct {
	cfg    *domains.Config
	sc     *domains.Scenario
	traces map[string][]trace.Series
}

// loadWorld reads and validates a config and a scenario and reads the
// scenario's traces (scenario.LoadWorld).
func loadWorld(configPath, scenarioPath string) (*world, error) {
	w, err := scenario.LoadWorld(configPath, scenarioPath)
	if err != nil {
		return nil, err
	}
	return &world{cfg: w.Config, sc: w.Scenario.Scenario, traces: w.Traces}, nil
}

// loadTraffic is validate's trace check, the loader's (scenario.Traffic).
var loadTraffic = scenario.Traffic

// newSim builds a fresh simulation of the world.
func (w *world) newSim() (*sim.Sim, error) { return sim.New(w.cfg, w.sc, w.traces) }

// newSimFor builds a fresh simulation of the world the named policy runs
// in (baseline.World: hpa-priority's has PriorityClasses).
func (w *world) newSimFor(name string) (*sim.Sim, error) {
	return sim.New(baseline.World(name, w.cfg), w.sc, w.traces)
}

// policyList is the policies `sim` knows, for --help and errors;
// policyNames the same, joined.
var (
	policyList  = append([]string{eval.Regiment, eval.Independent}, baseline.Names...)
	policyNames = strings.Join(policyList, ", ")
)

// newPolicy builds the named sim policy for s, a simulation from
// newSimFor(name).
func (w *world) newPolicy(name string, s *sim.Sim) (sim.Policy, error) {
	if name != eval.Regiment && name != eval.Independent && !baseline.Known(name) {
		return nil, eval.UnknownPolicy(name, policyList)
	}
	return eval.NewPolicy(name, baseline.World(name, w.cfg), s)
}

// failer returns a func that prints err as regiment name's failure on
// stderr and returns exit code 1.
func failer(name string, stderr io.Writer) func(error) int {
	return func(err error) int {
		fmt.Fprintf(stderr, "regiment %s: %v\n", name, err)
		return 1
	}
}
