package config

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/regimentd/regiment/internal/core/reward"
)

// rewardHCL is the reward block: one sub-block per level, one attribute per
// weight, named as in package reward.
type rewardHCL struct {
	Def       hcl.Range
	Commander weightsHCL
	Soldier   weightsHCL
	Service   weightsHCL
}

func (r *rewardHCL) children() []child {
	level := func(w *weightsHCL, typ string, names []string) child {
		return child{typ: typ, once: true, example: typ + ` { ` + names[0] + ` = 1.0 }`,
			open: func(def hcl.Range, _ label) node { w.Def, w.names = def, names; return w }}
	}
	return []child{
		level(&r.Commander, "commander", reward.CommanderWeightNames),
		level(&r.Soldier, "soldier", reward.SoldierWeightNames),
		level(&r.Service, "service", reward.ServiceWeightNames),
	}
}

// weightsHCL is one level's weights.
type weightsHCL struct {
	Def   hcl.Range
	names []string
	attrs []numberAttr
}

func (w *weightsHCL) fields() []field {
	if w.attrs == nil {
		w.attrs = make([]numberAttr, len(w.names))
	}
	out := make([]field, len(w.names))
	for i, n := range w.names {
		out[i] = field{n, &w.attrs[i]}
	}
	return out
}

func (w *weightsHCL) children() []child { return nil }

// values is the weights the file sets, by name; nil when none.
func (w *weightsHCL) values() map[string]float64 {
	var m map[string]float64
	for i := range w.attrs {
		if w.attrs[i].ok() {
			if m == nil {
				m = map[string]float64{}
			}
			m[w.names[i]] = w.attrs[i].V
		}
	}
	return m
}

// validateReward checks each weight is >= 0 and each level's weights, laid
// over the defaults, pass the reward package's own checks (only when every
// weight of the level is itself valid, so a problem is reported once).
func validateReward(h *rewardHCL, c checker) {
	level := func(w *weightsHCL, what string, check func(map[string]float64) error) {
		before := len(*c.ds)
		for i := range w.attrs {
			c.number(&w.attrs[i], w.attrs[i].V, weights)
		}
		if len(*c.ds) > before || w.values() == nil {
			return
		}
		if err := check(w.values()); err != nil {
			c.ds.add(w.Def, "Invalid "+what+" reward weights", "%v", err)
		}
	}
	level(&h.Commander, "commander", func(m map[string]float64) error {
		w := reward.DefaultCommanderWeights()
		for n, v := range m {
			_ = w.Set(n, v)
		}
		return w.Validate()
	})
	level(&h.Soldier, "soldier", func(m map[string]float64) error {
		w := reward.DefaultSoldierWeights()
		for n, v := range m {
			_ = w.Set(n, v)
		}
		return w.Validate()
	})
	level(&h.Service, "service", func(m map[string]float64) error {
		w := reward.DefaultServiceWeights()
		for n, v := range m {
			_ = w.Set(n, v)
		}
		return w.Validate()
	})
}
