package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/regimentd/regiment/baseline"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/eval"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/trace"
	"github.com/regimentd/regiment/simcluster"
)

// world is a loaded config and scenario with their traces: everything a
// simulation needs.
type world struct {
	cfg    *domains.Config
	sc     *domains.Scenario
	traces map[string][]trace.Series
}

// loadWorld reads and validates a config and a scenario and reads the
// scenario's traces.
func loadWorld(configPath, scenarioPath string) (*world, error) {
	cfg, err := config.LoadFile(configPath)
	if err != nil {
		return nil, err
	}
	sc, err := loadScenario(cfg, scenarioPath)
	if err != nil {
		return nil, err
	}
	return &world{cfg: cfg, sc: sc.Scenario, traces: sc.Traces}, nil
}

// loadScenarios loads the comma-separated scenario files of list for cfg,
// each with its traces.
func loadScenarios(cfg *domains.Config, list string) ([]sim.Scenario, error) {
	var scs []sim.Scenario
	for _, path := range splitList(list) {
		sc, err := loadScenario(cfg, path)
		if err != nil {
			return nil, err
		}
		scs = append(scs, sc)
	}
	return scs, nil
}

// loadScenario loads the scenario file at path for cfg, with its traces,
// checked as a simulation would (loadTraffic).
func loadScenario(cfg *domains.Config, path string) (sim.Scenario, error) {
	sc, err := config.LoadScenarioFile(path, cfg)
	if err != nil {
		return sim.Scenario{}, err
	}
	traces, err := loadTraffic(cfg, sc)
	if err != nil {
		return sim.Scenario{}, err
	}
	return sim.Scenario{Scenario: sc, Traces: traces}, nil
}

// loadTraffic reads every trace sc names and checks them against the
// scenario as a simulation would (with cfg; nil skips that): the one loader
// of sim, run, eval, train and validate, so that they report the same errors, each trace
// error with its file and line.
func loadTraffic(cfg *domains.Config, sc *domains.Scenario) (map[string][]trace.Series, error) {
	traces, err := trace.Load(sc)
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		if err := sim.CheckTraffic(cfg, sc, traces); err != nil {
			return nil, err
		}
	}
	return traces, nil
}

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
	switch name {
	case eval.Regiment:
		return simcluster.NewPolicy(w.cfg, nil, nil, simcluster.WithPool(s))
	case eval.Independent:
		return simcluster.NewIndependent(w.cfg, nil)
	}
	if !baseline.Known(name) {
		return nil, eval.UnknownPolicy(name, policyList)
	}
	return baseline.New(name, baseline.World(name, w.cfg), s)
}

// progress draws a live progress line on a terminal, at most every 200 ms.
type progress struct {
	w     io.Writer
	on    bool
	last  time.Time
	start time.Time
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	on := false
	if ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progress{w: w, on: on, start: time.Now()}
}

// update redraws the line if it is due; format and args make the line.
func (p *progress) update(force bool, format string, args ...any) {
	if !p.on {
		return
	}
	if now := time.Now(); force || now.Sub(p.last) >= 200*time.Millisecond {
		p.last = now
		fmt.Fprintf(p.w, "\r\033[K"+format, args...)
	}
}

// done ends the progress line.
func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
