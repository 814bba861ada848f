package rl_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"github.com/regimentd/regiment/internal/core/rl"
)

// A training loop: act, record, update; then save a checkpoint and load it
// for deployment. The environment is a one-step bandit whose reward is the
// share put on the second of two domains.
func Example() {
	r := rand.New(rand.NewPCG(1, 2))
	layout := rl.ScalarLayout("example", 1, []string{"bias"})
	spec := rl.DefaultSpec(layout, rl.ActionLayout{Segments: []rl.Segment{
		{Name: "shares", Kind: rl.Simplex, Size: 3}, // two domains + reserve
	}})
	spec.Actor = rl.Arch{Hidden: []int{8}, Activations: []rl.Activation{rl.Tanh}}
	spec.Critic = spec.Actor
	policy, err := rl.NewPolicy(spec, r)
	if err != nil {
		panic(err)
	}
	cfg := rl.DefaultConfig("example")
	cfg.LR = 3e-3
	ppo, err := rl.NewPPO(cfg)
	if err != nil {
		panic(err)
	}

	obs := []float64{1}
	act := policy.NewAction()
	roll := policy.NewRollout(256)
	for range 20 {
		roll.Reset()
		for !roll.Full() {
			policy.Norm.Observe(obs)
			policy.Act(obs, r, act)
			reward := act.Env[1]        // the share of domain 2
			roll.Add(act, reward, true) // every step ends an episode
		}
		roll.LastValue = policy.Value(obs) // ignored here: the last step is done
		ppo.Update(policy, roll, r)
	}

	policy.Provenance = rl.Provenance{Stage: "example", Steps: 20 * 256, Updates: 20, Seed: 1}
	var ckpt bytes.Buffer
	if err := policy.Save(&ckpt); err != nil {
		panic(err)
	}
	deployed, err := rl.Load(&ckpt, layout)
	if err != nil {
		panic(err)
	}
	deployed.Mean(obs, act)
	fmt.Printf("most share on domain 2: %v\n", act.Env[1] > 0.5)
	fmt.Printf("normaliser frozen: %v\n", deployed.Norm.Frozen)

	_, err = rl.Load(bytes.NewReader(nil), layout)
	fmt.Println(err)
	// Output:
	// most share on domain 2: true
	// normaliser frozen: true
	// load checkpoint: not a policy checkpoint (first line "", want "regiment-policy-checkpoint")
}

// A checkpoint trained on an older observation layout is refused with both
// versions and the first differing feature.
func ExampleCheckLayout() {
	ckpt := rl.ScalarLayout("commander", 1, []string{"payment.rps", "payment.cpu_util_p75", "cluster.nodes"})
	code := rl.ScalarLayout("commander", 2, []string{"payment.rps", "payment.mem_util_p75", "cluster.nodes"})
	fmt.Println(rl.CheckLayout(ckpt, code))
	// Output:
	// observation layout mismatch: checkpoint has "commander" v1, running code has "commander" v2; first differing feature is #1: checkpoint "payment.cpu_util_p75" (size 1), code "payment.mem_util_p75" (size 1)
}
