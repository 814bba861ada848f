package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// SystemRun is what a run of the System did (RunSystem).
type SystemRun struct {
	SystemStats
	Metrics sim.Metrics   // the simulated cluster's
	Wall    time.Duration // how long the run took
	Stopped bool          // ctx ended it before the scenario did
}

// RunSystem runs the Commander and Soldiers over an embedded NATS server
// against the simulation s at speed (System; `regiment run`), calling
// progress with the simulated and the wall time elapsed, and returns what
// it did.
func RunSystem(ctx context.Context, cfg *domains.Config, s *sim.Sim, dataDir string, speed float64, log hclog.Logger,
	progress func(simElapsed, wall time.Duration)) (run SystemRun, err error) {
	sys := NewSystem(cfg, s, dataDir, log)
	defer func() { err = errors.Join(err, sys.Close()) }()
	if err := sys.Open(ctx); err != nil {
		return run, err
	}
	start := time.Now()
	run.Stopped, err = sys.Run(ctx, speed, func(simElapsed time.Duration) { progress(simElapsed, time.Since(start)) })
	run.Wall = time.Since(start)
	if err != nil {
		return run, err
	}
	if err := sys.Close(); err != nil {
		return run, err
	}
	run.SystemStats = sys.Stats()
	sys.Cluster().Sim(func(s *sim.Sim) { run.Metrics = s.Metrics() })
	return run, nil
}
