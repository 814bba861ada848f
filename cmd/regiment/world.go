package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/regimentd/regiment/baseline"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/eval"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/scenario"
	"github.com/regimentd/regiment/sim/trace"
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

// failer returns a func that prints err as regiment name's failure on
// stderr and returns exit code 1.
func failer(name string, stderr io.Writer) func(error) int {
	return func(err error) int {
		fmt.Fprintf(stderr, "regiment %s: %v\n", name, err)
		return 1
	}
}
