package train

import (
	"strings"
	"testing"
	"time"
)

// TestCheckNamesTheFlagAtFault: each wrong value is refused naming its
// flag, a misspelt stage with the closest, and sound options pass.
func TestCheckNamesTheFlagAtFault(t *testing.T) {
	ok := Options{Stage: StageSoldier, Steps: 10, Envs: 1, Episode: time.Hour, Rounds: 1}
	if err := ok.Check(); err != nil {
		t.Fatalf("sound options: %v", err)
	}
	for _, c := range []struct {
		change func(o *Options)
		want   string
	}{
		{func(o *Options) { o.Stage = "soldeir" }, "did you mean soldier?"},
		{func(o *Options) { o.Stage = "x" }, "want soldier, commander or joint"},
		{func(o *Options) { o.Steps = 0 }, "--steps"},
		{func(o *Options) { o.Envs = 0 }, "--envs"},
		{func(o *Options) { o.Episode = time.Minute }, "--episode"},
		{func(o *Options) { o.LR = -1 }, "--lr"},
		{func(o *Options) { o.Rounds = 0 }, "--rounds"},
		{func(o *Options) { o.InitSoldier = "s.ckpt" }, "are for the joint stage"},
		{func(o *Options) { o.Stage, o.Init = StageJoint, "s.ckpt" }, "the joint stage starts from"},
		{func(o *Options) { o.Stage, o.Init = StageCommander, "s.ckpt" }, "Forecast heuristic"},
		{func(o *Options) { o.Stage, o.Steps, o.Rounds = StageJoint, 3, 2 }, "2 x --rounds"},
	} {
		o := ok
		c.change(&o)
		if err := o.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", o, err, c.want)
		}
	}
}
