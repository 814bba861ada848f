package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/calibrate"
	"github.com/regimentd/regiment/internal/offline/episodes"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
)

// Check is what is wrong with o's stage and numbers, worded with regiment
// train's flags; nil when nothing is. Config, Scenarios and Out are not
// looked at: the command loads them after.
func (o *Options) Check() error {
	switch {
	case o.Stage != StageSoldier && o.Stage != StageCommander && o.Stage != StageJoint:
		stages := []string{StageSoldier, StageCommander, StageJoint}
		if s, ok := cli.Suggest(o.Stage, stages); ok {
			return fmt.Errorf("unknown stage %q; did you mean %s?", o.Stage, s)
		}
		return fmt.Errorf("unknown stage %q (want soldier, commander or joint)", o.Stage)
	case o.Steps < 1:
		return errors.New("--steps must be at least 1")
	case o.Envs < 1:
		return errors.New("--envs must be at least 1")
	case o.Episode < 10*time.Minute:
		return errors.New("--episode must be at least 10m")
	case o.LR < 0:
		return errors.New("--lr must not be negative")
	case o.Rounds < 1:
		return errors.New("--rounds must be at least 1")
	case o.Stage != StageJoint && (o.InitSoldier != "" || o.InitCommander != ""):
		return errors.New("--init-soldier and --init-commander are for the joint stage (the soldier stage continues from --init)")
	case o.Stage == StageJoint && o.Init != "":
		return errors.New("--init is for the soldier stage: the joint stage starts from --init-soldier and --init-commander")
	case o.Stage == StageCommander && o.Init != "":
		return errors.New("--init is for the soldier stage: the commander stage starts from the Forecast heuristic")
	case o.Stage == StageJoint && o.Steps < 2*int64(o.Rounds):
		return errors.New("--steps must be at least 2 x --rounds for the joint stage")
	}
	return nil
}

// CalibrateFirst calibrates cfg on the episodes recorded in spec
// (episodes.Calibrate, progress to progress), writes out/calibration.json
// and the report (to w), and returns the calibrated config: `regiment
// train --episodes`.
func CalibrateFirst(ctx context.Context, cfg *domains.Config, spec, out string, w, progress io.Writer) (*domains.Config, error) {
	fmt.Fprintf(progress, "calibrating the simulator on %s\n", spec)
	cal, err := episodes.Calibrate(ctx, cfg, spec, progress)
	if err != nil {
		return nil, fmt.Errorf("calibrate on %q: %w", spec, err)
	}
	if err := cli.WriteJSON(filepath.Join(out, "calibration.json"), cal); err != nil {
		return nil, err
	}
	// What was fitted and how well the calibrated simulator replays the
	// recording (Pearson r per series), before any training on it.
	if err := calibrate.WriteReport(w, cal); err != nil {
		return nil, err
	}
	if !cal.After.Pass() {
		fmt.Fprintf(w, "\nWARNING: some replayed series stay below r = %.2f after calibration; training goes on with the calibrated simulator\n\n", cal.After.Target)
	}
	return cal.Config, nil
}

// LoadScenarios loads the training scenario files, each with its traces
// (scenario.LoadAll); every one must outlast a training episode.
func LoadScenarios(cfg *domains.Config, files []string, episode time.Duration) ([]sim.Scenario, error) {
	scs, err := scenario.LoadAll(cfg, files)
	if err != nil {
		return nil, err
	}
	for i, sc := range scs {
		if sc.Duration < episode {
			return nil, fmt.Errorf("scenario %s lasts %s, shorter than an episode (--episode %s)", files[i], sc.Duration, episode)
		}
	}
	return scs, nil
}

// Prepare readies o for RunStage: it creates o.Out, calibrates cfg on the
// episodes of spec first when spec is not "" (CalibrateFirst, its report
// to w) and loads the scenario files (LoadScenarios) into o.Config and
// o.Scenarios.
func (o *Options) Prepare(ctx context.Context, cfg *domains.Config, spec string, files []string, w, progress io.Writer) error {
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	if spec != "" {
		var err error
		if cfg, err = CalibrateFirst(ctx, cfg, spec, o.Out, w, progress); err != nil {
			return err
		}
	}
	o.Config = cfg
	var err error
	o.Scenarios, err = LoadScenarios(cfg, files, o.Episode)
	return err
}
