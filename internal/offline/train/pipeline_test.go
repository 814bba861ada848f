package train

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/simcluster"
)

// records keeps every record of one Soldier, deep-copied (a Record's
// slices are the Soldier's until its next tick).
type records struct{ recs []soldier.Record }

func (r *records) Record(rec soldier.Record) {
	c := rec
	c.Features = append([]float64(nil), rec.Features...)
	c.Changes = append([]soldier.NamedChange(nil), rec.Changes...)
	c.Guards = append([]soldier.NamedGuard(nil), rec.Guards...)
	c.Apps = append([]soldier.NamedObservation(nil), rec.Apps...)
	c.Failing = append([]soldier.NamedFailing(nil), rec.Failing...)
	c.BreachingAtMax = append([]string(nil), rec.BreachingAtMax...)
	c.LimitedByMax = append([]soldier.NamedLimited(nil), rec.LimitedByMax...)
	c.PolicyTargets = append([]int32(nil), rec.PolicyTargets...)
	c.BaselineTargets = append([]int32(nil), rec.BaselineTargets...)
	r.recs = append(r.recs, c)
}

// variedSoldierPolicy is a learned-Soldier network whose action moves with
// its features (a random output layer, unlike the warm start's zero one),
// so that a feature computed differently shows in the targets.
func variedSoldierPolicy(t *testing.T, safety float64) *rl.Policy {
	t.Helper()
	p, err := soldier.NewLearnedPolicy(rand.New(rand.NewPCG(9, 9)), safety, -1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(10, 10))
	w, _ := p.Actor.Layer(p.Actor.Params(), len(p.Actor.Activations())-1)
	for i := range w {
		w[i] = 0.5 * r.NormFloat64()
	}
	return p
}

// A training step decides as a deployed Soldier does: the Soldier env
// (training, the trainer's actions drawn as the network's mean from the
// env's features) and Soldiers as the daemons and the evaluation build
// them (soldier.New on the learned policy, which computes its own features
// and actions, observing and writing through a simcluster.View of a second
// simulation of the same episode), given the same directives, record the
// same tick at every step: reason, writes, guards, features, report,
// reward. Any difference in what the trainer's policy sees (its input, its
// features, the order of the Commander's tick) or in what follows the
// policy (stabiliser, ladder, fallback, executor) fails it.
func TestSoldierEnvDecidesAsADeployedSoldier(t *testing.T) {
	t.Run("small world, randomised episodes", func(t *testing.T) {
		ec := smallEnv(t, nil, true, "small-base.hcl", "small-flash-batch.hcl")
		ec.Episode = 3 * time.Hour
		decidesAsDeployed(t, ec, 4, 5)
	})
	t.Run("seed scale", func(t *testing.T) {
		cfg, sc := seedWorld(t, "diurnal.hcl")
		decidesAsDeployed(t, SoldierEnvConfig{Cluster: cfg, Scenarios: []sim.Scenario{sc}, Episode: 20 * time.Minute, Randomise: true}, 1, 100)
	})
}

// decidesAsDeployed runs episodes of env ec beside deployed Soldiers and
// fails at the first tick they record differently, or unless at least
// minWrites writes were compared.
func decidesAsDeployed(t *testing.T, ec SoldierEnvConfig, episodes, minWrites int) {
	pol := variedSoldierPolicy(t, ec.Cluster.Soldier.StaffingSafety)
	trained := map[string]*records{}
	ec.Recorder = func(domain string) soldier.Recorder {
		trained[domain] = &records{}
		return trained[domain]
	}
	e, err := NewSoldierEnv(ec)
	if err != nil {
		t.Fatal(err)
	}
	obs, act, rew := stepBuffers(e.Spec())
	tape := pol.Actor.NewTape()
	writes, distinct := 0, map[string]bool{}
	for seed := range uint64(episodes) {
		for _, r := range trained {
			r.recs = r.recs[:0]
		}
		e.Reset(rand.New(rand.NewPCG(seed, 21)), obs)
		// The deployed side: a second simulation of the episode, one
		// Soldier per domain on the network.
		sc := e.sc
		s, err := sim.New(e.cluster, &sc, e.traces)
		if err != nil {
			t.Fatal(err)
		}
		deployed := make([]*records, len(e.doms))
		sols := make([]*soldier.Soldier, len(e.doms))
		views := make([]*simcluster.View, len(e.doms))
		for i, d := range e.doms {
			l, err := soldier.NewLearned(pol, d.cfg)
			if err != nil {
				t.Fatal(err)
			}
			deployed[i], views[i] = &records{}, simcluster.NewView(e.cluster, d.di, nil)
			sols[i] = soldier.New(d.cfg, l, views[i], views[i], nil, deployed[i])
		}
		tick := func() { // the deployed Soldiers tick on s, with the env's directives in force
			for i, sol := range sols {
				views[i].Set(s.Telemetry(), s.Targets())
				if _, err := sol.Tick(context.Background(), s.Now()); err != nil {
					t.Fatal(err)
				}
			}
		}
		offer := func() { // the directives the env's Soldiers hold
			for i, d := range e.doms {
				if dir, ok := d.sol.Directive(); ok {
					sols[i].OnDirective(dir, s.Now())
				}
			}
		}
		tick() // Reset's tick: the fallback, before any directive
		s.Step()
		offer()
		for step, done := 0, false; !done; step++ {
			tick()
			pol.LatentMeans(tape, obs, act)
			for _, a := range act {
				distinct[fmt.Sprintf("%.6f", a)] = true
			}
			done, _ = e.Step(act, obs, rew)
			s.Step()
			offer()
			for i, d := range e.doms {
				got, want := trained[d.cfg.Domain].recs, deployed[i].recs
				if len(got) != len(want) {
					t.Fatalf("seed %d step %d, %s: %d training ticks, %d deployed", seed, step, d.cfg.Domain, len(got), len(want))
				}
				k := len(got) - 1
				writes += len(want[k].Changes)
				if !reflect.DeepEqual(got[k], want[k]) {
					t.Fatalf("seed %d step %d, %s: the training step decided\n  %s\nthe deployed Soldier\n  %s",
						seed, step, d.cfg.Domain, diffRecord(got[k], want[k]), diffRecord(want[k], got[k]))
				}
			}
		}
	}
	if writes < minWrites || len(distinct) < 10 {
		t.Fatalf("%d writes, %d distinct actions: the test compared decisions that did nothing", writes, len(distinct))
	}
	t.Logf("%d writes and %d distinct group actions, the same on both paths", writes, len(distinct))
}

// diffRecord names the fields of a that differ from b, with a's values.
func diffRecord(a, b soldier.Record) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	out := ""
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out += fmt.Sprintf("%s=%+v ", va.Type().Field(i).Name, va.Field(i).Interface())
		}
	}
	return out
}
