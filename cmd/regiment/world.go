package main

import (
	"strings"

	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/eval"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
)

// policyList is the policies `sim` knows, for --help and errors;
// policyNames the same, joined.
var (
	policyList  = append([]string{eval.Regiment, eval.Independent}, baseline.Names...)
	policyNames = strings.Join(policyList, ", ")
)

// newPolicy builds the named sim policy for s, a simulation of w from
// w.NewSimOn(baseline.World(name, w.Config)).
func newPolicy(w scenario.World, name string, s *sim.Sim) (sim.Policy, error) {
	if name != eval.Regiment && name != eval.Independent && !baseline.Known(name) {
		return nil, eval.UnknownPolicy(name, policyList)
	}
	return eval.NewPolicy(name, baseline.World(name, w.Config), s)
}
