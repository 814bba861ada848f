package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/cli"
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

// progressEvery is how often a progress line is logged when stderr is not
// a terminal (a pod's log, CI): the default of regiment run's
// --progress-every, and the period of sim, eval and calibrate.
const progressEvery = 30 * time.Second

// progress shows how far a long command is. On a terminal it draws a live
// line, redrawn at most every 200 ms. When the output is a file or a pipe
// (a pod, CI, "2> log") it logs a plain line (go-hclog, at Info, in the
// --log-format) at once and then at most every period, so that something
// shows in the log while the command runs. Into anything else (a buffer in
// a test) it writes nothing.
type progress struct {
	w       io.Writer
	on      bool         // a terminal: the live line
	log     hclog.Logger // not a terminal: the periodic line; nil: none
	every   time.Duration
	last    time.Time
	lastLog time.Time
	start   time.Time
}

// newProgress is newProgressLog in text, every progressEvery.
func newProgress(w io.Writer) *progress { return newProgressLog(w, cli.LogText, progressEvery) }

// newProgressLog is the progress of a command writing to w, logging in
// format every period when w is a file or pipe (every <= 0: never).
func newProgressLog(w io.Writer, format string, every time.Duration) *progress {
	p := &progress{w: w, every: every, start: time.Now()}
	f, ok := w.(*os.File)
	if !ok {
		return p
	}
	st, err := f.Stat()
	switch {
	case err != nil:
	case st.Mode()&os.ModeCharDevice != 0:
		p.on = true
	case every > 0:
		p.log, _ = cli.NewLogger("regiment", "info", format, w) // format is checked by the caller
	}
	return p
}

// update redraws the line if it is due, or logs it when the period has
// passed since the last; format and args make the line.
func (p *progress) update(force bool, format string, args ...any) {
	now := time.Now()
	if p.log != nil && (p.lastLog.IsZero() || now.Sub(p.lastLog) >= p.every) {
		p.lastLog = now
		p.log.Info("progress", "status", fmt.Sprintf(format, args...), "elapsed", now.Sub(p.start).Round(time.Second).String())
	}
	if !p.on {
		return
	}
	if force || now.Sub(p.last) >= 200*time.Millisecond {
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
