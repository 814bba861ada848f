package baseline

import (
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// Proportional is the simplest coordinated allocator: every tick it splits the
// pool's cores between domains in proportion to their current request rate,
// within each domain's floor and ceiling, and sizes each app by its
// utilisation as the HPA would, scaled down proportionally when the domain's
// apps want more than its budget.
//
//	share_d  = rps_d / sum(rps), then clamped to [floor_d, ceiling_d] with
//	           the rest re-split in proportion to rps (water-filling)
//	budget_d = capacity_cores x share_d
//	want_i   = ceil(ready_i x util_i / target)    when |1 - util_i/target| > tolerance,
//	           never against the ratio's direction; else the current target
//	n_i      = max(min_i, floor(want_i x budget_d / sum_d(want x cpu)))  when over budget
//
// It has no stabilisation window: it reacts within a tick, to telemetry that
// is TelemetryLag old. Decide does not allocate.
type Proportional struct {
	capacity        float64 // cores of the contested pool
	target, tol     float64
	floor, ceil     []float64 // per domain
	domain          []int32   // per app
	cpu             []float64 // per app
	min, max        []int32   // per app
	want            []int32   // per app, scratch
	share, need     []float64 // per domain, scratch
	fixed           []bool    // per domain, scratch
	first, lastPlus []int32   // per domain, app id range
}

// NewProportional builds the proportional allocator for cfg, sizing apps at
// target utilisation.
func NewProportional(cfg *domains.Config, target float64) *Proportional {
	apps := cfg.Apps()
	nd := len(cfg.Domains)
	p := &Proportional{
		capacity: cfg.Cluster.CapacityCores, target: target, tol: DefaultTolerance,
		floor: make([]float64, nd), ceil: make([]float64, nd),
		domain: make([]int32, len(apps)), cpu: make([]float64, len(apps)),
		min: make([]int32, len(apps)), max: make([]int32, len(apps)), want: make([]int32, len(apps)),
		share: make([]float64, nd), need: make([]float64, nd), fixed: make([]bool, nd),
		first: make([]int32, nd), lastPlus: make([]int32, nd),
	}
	for d, dom := range cfg.Domains {
		p.floor[d], p.ceil[d] = dom.Floor, dom.Ceiling
		p.first[d] = -1
	}
	for i, a := range apps {
		p.domain[i], p.cpu[i] = int32(a.Domain), a.CPUPerReplica
		p.min[i], p.max[i] = int32(a.MinReplicas), int32(a.MaxReplicas)
		if p.first[a.Domain] < 0 {
			p.first[a.Domain] = int32(i)
		}
		p.lastPlus[a.Domain] = int32(i + 1)
	}
	return p
}

// Decide sets every app's target within its domain's proportional budget.
func (p *Proportional) Decide(_ time.Time, t *sim.Telemetry, targets []int32) {
	p.shares(t)
	for d := range p.need {
		p.need[d] = 0
	}
	for i := range targets {
		a := &t.Apps[i]
		cur := targets[i]
		w := cur
		if a.Ready > 0 {
			ratio := a.CPUUtil / p.target
			n := int32(math.Ceil(ratio*float64(a.Ready) - 1e-9)) // not 14.000000000000002 -> 15
			switch {
			case ratio > 1+p.tol:
				w = max(cur, n)
			case ratio < 1-p.tol:
				w = min(cur, n)
			}
		}
		w = min(max(w, p.min[i]), p.max[i])
		p.want[i] = w
		p.need[p.domain[i]] += float64(w) * p.cpu[i]
	}
	for d := range p.need {
		budget := p.capacity * p.share[d]
		scale := 1.0
		if p.need[d] > budget {
			scale = budget / p.need[d]
		}
		for i := p.first[d]; i >= 0 && i < p.lastPlus[d]; i++ {
			n := p.want[i]
			if scale < 1 {
				n = max(p.min[i], int32(float64(n)*scale))
			}
			targets[i] = n
		}
	}
}

// shares splits the pool by request rate within floors and ceilings.
func (p *Proportional) shares(t *sim.Telemetry) {
	for d := range p.share {
		p.fixed[d] = false
	}
	left := 1.0 // share not yet fixed by a bound
	for range p.share {
		total := 0.0
		for d := range p.share {
			if !p.fixed[d] {
				total += t.Domains[d].RPS
			}
		}
		changed := false
		for d := range p.share {
			if p.fixed[d] {
				continue
			}
			s := left / float64(p.free())
			if total > 0 {
				s = left * t.Domains[d].RPS / total
			}
			p.share[d] = s
		}
		for d := range p.share {
			if p.fixed[d] {
				continue
			}
			if b := min(max(p.share[d], p.floor[d]), p.ceil[d]); b != p.share[d] {
				p.share[d], p.fixed[d] = b, true
				left -= b
				changed = true
			}
		}
		if !changed || p.free() == 0 {
			break
		}
		left = max(left, 0)
	}
}

// free counts the domains whose share no bound has fixed.
func (p *Proportional) free() int {
	n := 0
	for _, f := range p.fixed {
		if !f {
			n++
		}
	}
	return n
}
