package config

import (
	"fmt"
	"math"
	"strconv"

	"github.com/hashicorp/hcl/v2"

	"github.com/regimentd/regiment/internal/core/domains"
)

// This file decodes and checks the soldier block's guard settings:
//
//	soldier {
//	  ladder "p0" {             # one block per priority tier, p0 to p9
//	    alert    = 1.2          # p99 / SLO, 1 < alert < freeze < revert
//	    freeze   = 1.5
//	    revert   = 2.0
//	    sustain  = "15s"
//	    cool_off = "5m"
//	  }
//	  fallback {
//	    window          = "30m" # whole soldier ticks; "0s" turns it off
//	    breach_fraction = 0.05
//	    cost_margin     = 0.10
//	    short_tolerance = 0.10
//	    hold            = "30m"
//	  }
//	}
//
// Every attribute may be left out: it keeps the tier's (or the fallback's)
// default, per attribute.

// ladderHCL is a ladder block; Tier is its label, "p0" to "p9".
type ladderHCL struct {
	Def     hcl.Range
	Tier    label
	Alert   numberAttr   `hcl:"alert"`
	Freeze  numberAttr   `hcl:"freeze"`
	Revert  numberAttr   `hcl:"revert"`
	Sustain durationAttr `hcl:"sustain"`
	CoolOff durationAttr `hcl:"cool_off"`
}

func (l *ladderHCL) children() []child { return nil }

// fallbackHCL is the fallback block.
type fallbackHCL struct {
	Def            hcl.Range
	Window         durationAttr `hcl:"window"`
	BreachFraction numberAttr   `hcl:"breach_fraction"`
	CostMargin     numberAttr   `hcl:"cost_margin"`
	ShortTolerance numberAttr   `hcl:"short_tolerance"`
	Hold           durationAttr `hcl:"hold"`
}

func (f *fallbackHCL) children() []child { return nil }

func (s *soldierHCL) children() []child {
	return []child{
		{typ: "ladder", label: "tier", example: `ladder "p0" { alert = 1.2 }`,
			open: func(def hcl.Range, l label) node {
				b := &ladderHCL{Def: def, Tier: l}
				s.Ladders = append(s.Ladders, b)
				return b
			}},
		{typ: "fallback", once: true, example: `fallback { window = "30m" }`,
			open: func(def hcl.Range, _ label) node { s.Fallback.Def = def; return &s.Fallback }},
	}
}

// ladderTiers are the labels a ladder block may take, tier i at index i.
var ladderTiers = func() []string {
	t := make([]string, domains.MaxLadderTier+1)
	for i := range t {
		t[i] = "p" + strconv.Itoa(i)
	}
	return t
}()

// tier is the priority tier a ladder label names, or -1.
func tier(l string) int {
	for i, t := range ladderTiers {
		if l == t {
			return i
		}
	}
	return -1
}

// ladders builds the configured ladders by tier, leaving unset attributes
// zero (the tier's default, filled by Defaults). Blocks with an unknown or a
// repeated tier are left out; validateSoldierGuards reports them.
func (s *soldierHCL) ladders() [domains.MaxLadderTier + 1]domains.Ladder {
	var out [domains.MaxLadderTier + 1]domains.Ladder
	for _, b := range s.firstLadders() {
		out[tier(b.Tier.V)] = domains.Ladder{Alert: b.Alert.V, Freeze: b.Freeze.V, Revert: b.Revert.V,
			Sustain: b.Sustain.V, CoolOff: b.CoolOff.V}
	}
	return out
}

// firstLadders is the first block of each known tier, in file order.
func (s *soldierHCL) firstLadders() []*ladderHCL {
	var out []*ladderHCL
	seen := [domains.MaxLadderTier + 1]bool{}
	for _, b := range s.Ladders {
		if t := tier(b.Tier.V); t >= 0 && !seen[t] {
			seen[t] = true
			out = append(out, b)
		}
	}
	return out
}

func (f *fallbackHCL) translate() domains.Fallback {
	return domains.Fallback{
		Off:            f.Window.ok() && f.Window.V == 0,
		Window:         f.Window.V,
		BreachFraction: f.BreachFraction.V,
		CostMargin:     f.CostMargin.V,
		ShortTolerance: f.ShortTolerance.V,
		Hold:           f.Hold.V,
	}
}

// aboveOne is the range of a ladder threshold, a multiple of the SLO.
var aboveOne = interval{lo: 1, hi: math.Inf(1), loOpen: true}

// validateSoldierGuards checks the ladder and fallback blocks of the soldier
// block against s, the soldier settings with defaults applied.
func validateSoldierGuards(s *domains.Soldier, hs *soldierHCL, c checker) {
	ds := c.ds
	first := map[int]*ladderHCL{}
	for _, b := range hs.Ladders {
		t := tier(b.Tier.V)
		if t < 0 {
			hint := fmt.Sprintf("tiers are %q (P0, the most important) to %q, matching the domains' priority", ladderTiers[0], ladderTiers[domains.MaxLadderTier])
			if dym := didYouMean(b.Tier.V, ladderTiers); dym != "" {
				hint += "; " + dym
			}
			ds.add(b.Tier.Range, fmt.Sprintf("Invalid ladder tier %s", clip(b.Tier.V)), "%s", hint)
			continue
		}
		if f, dup := first[t]; dup {
			ds.add(b.Tier.Range, fmt.Sprintf("Duplicate ladder %s", clip(b.Tier.V)), "one ladder block per tier; the first is at line %d", f.Tier.Range.Start.Line)
			continue
		}
		first[t] = b
		l := &s.Ladders[t]
		c.number(&b.Alert, l.Alert, aboveOne)
		c.number(&b.Freeze, l.Freeze, aboveOne)
		c.number(&b.Revert, l.Revert, aboveOne)
		c.duration(&b.Sustain, l.Sustain, nonNegative)
		c.duration(&b.CoolOff, l.CoolOff, nonNegative)
		checkAscending(b, l, c)
	}

	f, hf := &s.Fallback, &hs.Fallback
	if w := &hf.Window; w.ok() {
		tick, tickOK := s.Tick, !hs.Tick.Bad && s.Tick > 0
		switch {
		case w.V < 0:
			ds.add(w.Range, "Invalid window", `window must be >= 0 ("0s" turns the automatic fallback off), got %s`, w.V)
		case w.V > domains.MaxFallbackWindow:
			ds.add(w.Range, "Invalid window", "window must be at most %s (the Soldier keeps a score per tick of it), got %s", domains.MaxFallbackWindow, w.V)
		case w.V == 0 || !tickOK:
		case w.V < tick:
			ds.add(w.Range, "Invalid window", `window %s is shorter than the soldier tick %s; use a whole number of ticks, or "0s" to turn the automatic fallback off`, w.V, tick)
		case w.V%tick != 0:
			lo := w.V / tick * tick
			ds.add(w.Range, "Invalid window", "window %s is not a whole number of soldier ticks of %s (example: %q or %q)", w.V, tick, lo.String(), (lo + tick).String())
		}
	}
	c.number(&hf.BreachFraction, f.BreachFraction, unitLeftOpen)
	c.number(&hf.CostMargin, f.CostMargin, nonNegative)
	c.number(&hf.ShortTolerance, f.ShortTolerance, unit)
	c.duration(&hf.Hold, f.Hold, nonNegative)
}

// checkAscending reports ladder thresholds that do not ascend, 1 < alert <
// freeze < revert, at the threshold the file sets: the upper one of a pair if
// set, else the lower one (whose partner is then the tier's default).
func checkAscending(b *ladderHCL, l *domains.Ladder, c checker) {
	attrs := [3]*numberAttr{&b.Alert, &b.Freeze, &b.Revert}
	vals := [3]float64{l.Alert, l.Freeze, l.Revert}
	for i, a := range attrs {
		if a.Bad || !aboveOne.contains(vals[i]) || (a.Set && a.V == 0) {
			return // already reported
		}
	}
	name := func(i int) string { return attrs[i].Name }
	for i := range 2 {
		lo, hi := i, i+1
		if vals[lo] < vals[hi] {
			continue
		}
		if attrs[hi].Set {
			partner := formatNumber(vals[lo])
			if !attrs[lo].Set {
				partner += fmt.Sprintf(", the %s default", b.Tier.V)
			}
			c.ds.add(attrs[hi].Range, "Invalid "+name(hi), "%s %s must be above %s %s (thresholds ascend: 1 < alert < freeze < revert)", name(hi), formatNumber(vals[hi]), name(lo), partner)
			continue
		}
		c.ds.add(attrs[lo].Range, "Invalid "+name(lo), "%s %s must be below %s %s, the %s default (thresholds ascend: 1 < alert < freeze < revert); set %s too", name(lo), formatNumber(vals[lo]), name(hi), formatNumber(vals[hi]), b.Tier.V, name(hi), name(hi))
	}
}
