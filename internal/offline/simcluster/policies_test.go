package simcluster_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
	"github.com/regimentd/regiment/internal/offline/simcluster"
)

// countingCommander is a Forecast policy that counts its decisions.
type countingCommander struct {
	commander.Forecast
	n int
}

func (c *countingCommander) Decide(o *commander.Observation, a *commander.Action) string {
	c.n++
	return c.Forecast.Decide(o, a)
}

func TestPolicyResolution(t *testing.T) {
	cfg, err := config.LoadFile("../../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "commander.ckpt")
	p, err := rl.NewPolicy(rl.DefaultSpec(commander.ObsLayout(cfg), commander.ActionLayout(len(cfg.Domains))), rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Save(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	garbage := filepath.Join(dir, "garbage.ckpt")
	if err := os.WriteFile(garbage, []byte("not a checkpoint\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	scfg, err := soldier.NewConfig(cfg, "payment")
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		cmd     string
		sol     string
		wantCmd string // type of the Commander policy
		wantErr string
	}{
		{name: "forecast is the Forecast heuristic", cmd: "forecast", sol: "proportional", wantCmd: "*commander.Forecast"},
		{name: "a commander checkpoint path is a Learned policy", cmd: ckpt, sol: "proportional", wantCmd: "*commander.Learned"},
		{name: "a file that is no checkpoint is an error naming it", cmd: garbage, sol: "proportional", wantErr: garbage},
		{name: "a soldier path that is no checkpoint is an error naming it", cmd: "forecast", sol: garbage, wantErr: "soldier policy for payment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := *cfg
			c.Commander.Policy, c.Soldier.Policy = tt.cmd, tt.sol
			cp, cerr := commander.NewPolicy(&c)
			_, serr := soldier.NewPolicy(&c, scfg)
			_, nerr := simcluster.NewPolicy(&c, nil, nil)
			if tt.wantErr != "" {
				err := cerr
				if err == nil {
					err = serr
				}
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || nerr == nil {
					t.Fatalf("errors %v, %v (NewPolicy %v); want one mentioning %q", cerr, serr, nerr, tt.wantErr)
				}
				return
			}
			if cerr != nil || serr != nil || nerr != nil {
				t.Fatal(cerr, serr, nerr)
			}
			if got := typeName(cp); got != tt.wantCmd {
				t.Errorf("commander policy %s, want %s", got, tt.wantCmd)
			}
		})
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *commander.Forecast:
		return "*commander.Forecast"
	case *commander.Learned:
		return "*commander.Learned"
	}
	return "other"
}

func TestWithCommanderDrivesTheHierarchy(t *testing.T) {
	cfg, err := config.LoadFile("../../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile("../../../cmd/regiment/testdata/small-sample.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc.Duration = 30 * time.Minute
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(cfg, sc, traces)
	if err != nil {
		t.Fatal(err)
	}
	cc := &countingCommander{Forecast: commander.Forecast{ReserveMin: cfg.Commander.ReserveMin}}
	p, err := simcluster.NewPolicy(cfg, nil, nil, simcluster.WithCommander(cc))
	if err != nil {
		t.Fatal(err)
	}
	s.Run(p)
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	if want := int(sc.Duration / cfg.Commander.Tick); cc.n != want {
		t.Errorf("the injected Commander decided %d times in %s, want %d", cc.n, sc.Duration, want)
	}
}
