package train

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// newCommanderPolicy is an untrained Commander network for cfg: its random
// output layer gives a non-zero residual on the Forecast heuristic, so
// different seeds allocate differently.
func newCommanderPolicy(t testing.TB, cfg *domains.Config, seed uint64) *rl.Policy {
	t.Helper()
	p, err := rl.NewPolicy(rl.DefaultSpec(commander.ObsLayout(cfg), commander.ActionLayout(len(cfg.Domains))), rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recordingPublisher keeps the cores of the last directive per domain.
type recordingPublisher struct{ cores map[string]float64 }

func (p *recordingPublisher) PublishDirective(_ context.Context, d wire.Directive) error {
	p.cores[d.Domain] = d.Cores
	return nil
}
func (p *recordingPublisher) PublishAllocation(context.Context, wire.Allocation) error { return nil }

// runCommanderDriven steps a Commander-driven Soldier env for ticks Soldier
// ticks under the warm-started Soldier's mean action, with a reference
// commander.Commander on its own copy of cp fed the env's reports. It fails
// unless every domain's budget equals the reference's directive cores after
// every Commander tick, and returns the budgets per tick (tick-major).
func runCommanderDriven(t *testing.T, cp *rl.Policy, ticks int) []float64 {
	t.Helper()
	ec := smallEnv(t, nil, true, "small-base.hcl")
	ec.Commander = cp
	e, err := NewSoldierEnv(ec)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := soldier.NewLearnedPolicy(rand.New(rand.NewPCG(1, 1)), 3, -1)
	if err != nil {
		t.Fatal(err)
	}
	refPol := cp.Clone()
	refPol.Norm.Frozen = true
	l, err := commander.NewLearned(refPol, ec.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	pub := &recordingPublisher{cores: map[string]float64{}}
	ref := commander.New(ec.Cluster, l, "reference", pub, nil, 7, 0)
	obs, act, rew := stepBuffers(e.Spec())
	pa := sp.NewAction()
	var budgets []float64
	// check feeds the reference the reports the env's Commander got in the
	// last Soldier tick and, when the env's Commander ticked after them,
	// ticks the reference at the same time and compares.
	check := func(ticked bool) {
		for _, r := range e.cmd.reports {
			if err := r.Validate(nil); err != nil {
				t.Fatalf("tick %d: the env's report is invalid: %v", e.tick, err)
			}
			ref.OnReport(r)
		}
		if !ticked {
			return
		}
		if _, err := ref.Tick(context.Background(), e.cmd.at); err != nil {
			t.Fatal(err)
		}
		for _, d := range e.doms {
			want := pub.cores[d.cfg.Domain]
			dir, ok := d.sol.Directive()
			if !ok || dir.Cores != want || want <= 0 {
				t.Fatalf("tick %d, domain %s: the Soldier's directive cores %v (accepted %v), the reference Commander's %v", e.tick, d.cfg.Domain, dir.Cores, ok, want)
			}
			if sent := e.cmd.dirs[d.di]; dir != sent {
				t.Fatalf("tick %d, domain %s: the Soldier holds directive %+v, the Commander sent %+v", e.tick, d.cfg.Domain, dir, sent)
			}
			budgets = append(budgets, dir.Cores)
		}
	}
	e.Reset(rand.New(rand.NewPCG(5, 5)), obs)
	check(true) // the first Commander tick, on the Soldiers' first reports
	for k := 1; k <= ticks; k++ {
		for a := range obs {
			sp.Mean(obs[a], pa)
			copy(act[a], pa.Env)
		}
		if done, _ := e.Step(act, obs, rew); done {
			t.Fatalf("episode ended at tick %d", k)
		}
		check(e.tick%e.ratio == 0)
	}
	return budgets
}

func TestCommanderDrivenSoldierEnv(t *testing.T) {
	ec := smallEnv(t, nil, false, "small-base.hcl")
	cfg := ec.Cluster
	t.Run("budgets are the commander's directive cores", func(t *testing.T) {
		b := runCommanderDriven(t, newCommanderPolicy(t, cfg, 1), 60)
		if len(b) != 11*len(cfg.Domains) {
			t.Fatalf("%d budgets, want 11 Commander ticks x %d domains", len(b), len(cfg.Domains))
		}
	})
	t.Run("another commander policy sets other budgets", func(t *testing.T) {
		a := runCommanderDriven(t, newCommanderPolicy(t, cfg, 1), 12)
		b := runCommanderDriven(t, newCommanderPolicy(t, cfg, 2), 12)
		same := 0
		for i := range a {
			if a[i] == b[i] {
				same++
			}
		}
		if same == len(a) {
			t.Fatalf("two Commander policies gave the same budgets %v", a)
		}
	})
	t.Run("a domain subset is refused", func(t *testing.T) {
		ec := smallEnv(t, []string{cfg.Domains[0].Name}, false, "small-base.hcl")
		ec.Commander = newCommanderPolicy(t, cfg, 1)
		if _, err := NewSoldierEnv(ec); err == nil || !strings.Contains(err.Error(), "every domain") {
			t.Fatalf("err %v, want a refusal naming every domain", err)
		}
	})
	t.Run("a commander for other domains is refused", func(t *testing.T) {
		other := *cfg
		other.Domains = cfg.Domains[:1]
		ec := smallEnv(t, nil, false, "small-base.hcl")
		ec.Commander = newCommanderPolicy(t, &other, 1)
		if _, err := NewSoldierEnv(ec); err == nil {
			t.Fatal("a one-domain Commander drove a multi-domain env")
		}
	})
}

// TestTrainJointWritesLoadableCheckpointsAndRepeats runs a tiny joint
// fine-tuning twice with one seed: both policies change, load as a Soldier
// and a Commander, and are byte-identical between the runs.
func TestTrainJointWritesLoadableCheckpointsAndRepeats(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	ec := smallEnv(t, nil, false, "small-base.hcl", "small-flash-batch.hcl")
	cfg := ec.Cluster
	run := func() (sp, cp []byte, rounds []JointRound, progress string) {
		s, err := soldier.NewLearnedPolicy(rand.New(rand.NewPCG(1, 1)), cfg.Soldier.StaffingSafety, -1)
		if err != nil {
			t.Fatal(err)
		}
		c := newCommanderPolicy(t, cfg, 3)
		s0, c0 := save(t, s), save(t, c)
		var pr, csv bytes.Buffer
		st := JointStage{Cluster: cfg, Scenarios: ec.Scenarios, Rounds: 2, Steps: 8000, Workers: 2, Seed: 9, Episode: 10 * time.Minute,
			Commander:             CommanderEnvOptions{Episode: 20 * time.Minute, Warmup: 10 * time.Minute},
			CommanderGateEpisodes: 2, SoldierGateEpisodes: 2, CheckEpisodes: 4, Progress: &pr, CSV: &csv}
		calls := 0
		rounds, err = TrainJoint(context.Background(), s, c, st, func(JointRound) error { calls++; return nil })
		if err != nil {
			t.Fatalf("%v\n%s", err, pr.String())
		}
		if calls != 2 || len(rounds) != 2 {
			t.Fatalf("%d after-round calls, %d rounds; want 2", calls, len(rounds))
		}
		if n := strings.Count(csv.String(), "phase,update"); n != 1 {
			t.Errorf("the CSV has %d headers, want 1", n)
		}
		sp, cp = save(t, s), save(t, c)
		if bytes.Equal(sp, s0) || bytes.Equal(cp, c0) {
			t.Fatal("a level's policy did not change")
		}
		return sp, cp, rounds, pr.String()
	}
	sa, ca, rounds, progress := run()
	sb, cb, _, _ := run()
	if !bytes.Equal(sa, sb) || !bytes.Equal(ca, cb) {
		t.Error("two runs with one seed gave different checkpoints")
	}
	for _, want := range []string{"joint round 1/2: commander level", "joint round 2/2: soldier level", "r2/commander", "r1/soldier/cluster", "commander gate"} {
		if !strings.Contains(progress, want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}
	for _, r := range rounds {
		if r.CommanderGate.Episodes != 2 || r.SoldierGate.Episodes != 2 || r.SoldierOutcomes.Episodes != 4 || r.CommanderCheck.Episodes != 4 {
			t.Errorf("round %d: gates and checks over the wrong episodes: %+v", r.Round, r)
		}
		if r.CommanderRun.Steps <= 0 || r.SoldierRun.Steps <= 0 {
			t.Errorf("round %d: a level did not train: %d and %d steps", r.Round, r.CommanderRun.Steps, r.SoldierRun.Steps)
		}
	}
	dir := t.TempDir()
	sPath, cPath := filepath.Join(dir, "soldier.ckpt"), filepath.Join(dir, "commander.ckpt")
	if err := os.WriteFile(sPath, sa, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cPath, ca, 0o644); err != nil {
		t.Fatal(err)
	}
	scfg, err := soldier.NewConfig(cfg, cfg.Domains[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := soldier.LoadLearned(sPath, scfg); err != nil {
		t.Errorf("the joint Soldier does not load: %v", err)
	}
	l, err := commander.LoadLearned(cPath, cfg)
	if err != nil {
		t.Fatalf("the joint Commander does not load: %v", err)
	}
	if pv := l.Policy().Provenance; pv.Stage != "joint" || pv.Steps <= 0 {
		t.Errorf("the Commander's provenance %+v, want stage joint with its steps", pv)
	}
}

func save(t testing.TB, p *rl.Policy) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := p.Save(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// BenchmarkSoldierEnvStep times one Soldier tick of the small cluster under
// the stand-in and under a learned Commander (reports every tick, a
// Commander tick every sixth).
func BenchmarkSoldierEnvStep(b *testing.B) {
	for _, driven := range []bool{false, true} {
		name := "stand-in"
		if driven {
			name = "learned-commander"
		}
		b.Run(name, func(b *testing.B) {
			ec := smallEnv(b, nil, true, "small-base.hcl")
			ec.Episode = 3 * time.Hour
			if driven {
				ec.Commander = newCommanderPolicy(b, ec.Cluster, 1)
			}
			e, err := NewSoldierEnv(ec)
			if err != nil {
				b.Fatal(err)
			}
			obs, act, rew := stepBuffers(e.Spec())
			r := rand.New(rand.NewPCG(1, 2))
			e.Reset(r, obs)
			b.ReportAllocs()
			for b.Loop() {
				if done, _ := e.Step(act, obs, rew); done {
					e.Reset(r, obs)
				}
			}
		})
	}
}
