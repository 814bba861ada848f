package commander

import (
	"math"
	"slices"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Guard names, as recorded with each decision.
const (
	GuardFloor     = "floor"      // raised to the domain's floor
	GuardCeiling   = "ceiling"    // lowered to the domain's ceiling
	GuardMaxChange = "max_change" // change limited to max_share_change per tick
	GuardDeadZone  = "dead_zone"  // change under dead_zone x previous share dropped
	GuardReserve   = "reserve"    // lowered to keep reserve_min unallocated
)

// Applied records one guard changing one domain's share.
type Applied struct {
	Name          string
	Domain        int
	Before, After float64
}

// Rules are the operator's allocation rules from config.
type Rules struct {
	Floors, Ceilings []float64
	Priorities       []int
	DeadZone         float64 // relative to the previous share
	MaxChange        float64 // absolute, share points per tick
	ReserveMin       float64
}

// NewRules reads the rules from a config.
func NewRules(cfg *domains.Config) Rules {
	r := Rules{DeadZone: cfg.Commander.DeadZone, MaxChange: cfg.Commander.MaxShareChange, ReserveMin: cfg.Commander.ReserveMin}
	for _, d := range cfg.Domains {
		r.Floors = append(r.Floors, d.Floor)
		r.Ceilings = append(r.Ceilings, d.Ceiling)
		r.Priorities = append(r.Priorities, d.Priority)
	}
	return r
}

// ApplyGuards applies the rules to a's shares in place, given the shares in force
// (prev; nil on the first tick), and appends what changed to applied. Order:
// ceilings and floors, max change, dead-zone, then trimming above-floor shares
// from the lowest priority up until reserve_min is free; the reserve is what
// remains.
func ApplyGuards(r Rules, prev []float64, a *Action, applied []Applied) []Applied {
	set := func(name string, i int, v float64) {
		if v != a.Shares[i] {
			applied = append(applied, Applied{name, i, a.Shares[i], v})
			a.Shares[i] = v
		}
	}
	for i := range a.Shares {
		if a.Shares[i] > r.Ceilings[i] {
			set(GuardCeiling, i, r.Ceilings[i])
		}
		if a.Shares[i] < r.Floors[i] {
			set(GuardFloor, i, r.Floors[i])
		}
		if prev == nil {
			continue
		}
		if d := a.Shares[i] - prev[i]; math.Abs(d) > r.MaxChange {
			v := prev[i] + math.Copysign(r.MaxChange, d)
			set(GuardMaxChange, i, math.Min(math.Max(v, r.Floors[i]), r.Ceilings[i]))
		}
		if d := a.Shares[i] - prev[i]; d != 0 && math.Abs(d) < r.DeadZone*prev[i] {
			set(GuardDeadZone, i, prev[i])
		}
	}
	sum := 0.0
	for _, s := range a.Shares {
		sum += s
	}
	if over := sum - (1 - r.ReserveMin); over > 1e-12 {
		order := make([]int, len(a.Shares))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(x, y int) int { return r.Priorities[y] - r.Priorities[x] })
		for _, i := range order {
			if over <= 1e-12 {
				break
			}
			cut := math.Min(over, a.Shares[i]-r.Floors[i])
			if cut > 0 {
				set(GuardReserve, i, a.Shares[i]-cut)
				over -= cut
			}
		}
	}
	sum = 0
	for _, s := range a.Shares {
		sum += s
	}
	a.Reserve = math.Max(0, 1-sum)
	return applied
}
