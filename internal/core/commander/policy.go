package commander

import (
	"fmt"
	"math"
	"slices"
)

// Action is a policy's output: shares of the contested pool per domain plus a
// reserve (summing to 1), and per-domain urgency and headroom in [0, 1].
type Action struct {
	Shares   []float64
	Reserve  float64
	Urgency  []float64
	Headroom []float64
}

// NewAction returns an action for n domains.
func NewAction(n int) Action {
	return Action{Shares: make([]float64, n), Urgency: make([]float64, n), Headroom: make([]float64, n)}
}

// Policy maps an observation to an action, returning a short reason.
type Policy interface {
	Decide(o *Observation, a *Action) string
}

// Forecast is the first Commander policy: priority- and forecast-aware
// proportional allocation. Each domain wants the cores its Soldier reports as
// demand, scaled up to the forecast p80 at +15 min when that is higher, plus
// headroom for forecast uncertainty. Floors are granted first, P0 first; then
// tiers in priority order get their wants up to their ceilings, splitting a
// shortfall within a tier by weight x want; what is left is reserve, held
// back for uncertainty and for the next tick's surprises.
type Forecast struct {
	ReserveMin float64 // smallest reserve kept for uncertainty
	// Headroom, when above 0, is the headroom of every domain without its
	// own (domain { headroom }) in place of the spread rule
	// (commander.headroom), a fraction of load in [0, domains.MaxHeadroom].
	Headroom float64
	want     []float64
	order    []int
}

// The Forecast policy's headroom is headroomPerUncertainty x the forecast's
// relative p10-p90 spread at +15 min, within [MinForecastHeadroom,
// MaxForecastHeadroom] (the floor is one a learned Commander's latent, a
// logit of headroom / MaxHeadroom, can express exactly): a Soldier
// sizes its apps for load x (1 + headroom), on top of the spare its
// square-root staffing keeps, so this is the margin for what the forecast
// does not know. Chosen on the seed-scale training scenarios
// (docs/experiments.md, "Soldiers that write little"); the former 0.5 x
// spread within [0.05, 0.3] cost 8% more than the HPA there.
const (
	headroomPerUncertainty = 0.25
	MinForecastHeadroom    = 0.01
	MaxForecastHeadroom    = 0.15
)

// headroom is domain d's headroom: its own when set, else the fixed
// Headroom when set, else the spread rule.
func (p *Forecast) headroom(d *DomainObs) float64 {
	if d.FixedHeadroom > 0 {
		return d.FixedHeadroom
	}
	if p.Headroom > 0 {
		return p.Headroom
	}
	return clamp(headroomPerUncertainty*d.Uncertainty, MinForecastHeadroom, MaxForecastHeadroom)
}

// Decide implements Policy.
func (p *Forecast) Decide(o *Observation, a *Action) string {
	short, uncertain := p.allocate(o, a)
	if short > 0 {
		return fmt.Sprintf("demand over the pool: %d domains below their want; uncertainty %.3f of the pool", short, uncertain)
	}
	return fmt.Sprintf("every domain at its want; reserve %.3f", a.Reserve)
}

// allocate writes Decide's action into a without allocating (after the
// first call for a domain count) and returns how many domains got less than
// they want and the pool share held for uncertainty.
func (p *Forecast) allocate(o *Observation, a *Action) (short int, uncertain float64) {
	n := len(o.Domains)
	if cap(p.want) < n {
		p.want, p.order = make([]float64, n), make([]int, n)
	}
	want, order := p.want[:n], p.order[:n]
	capacity := o.Cluster.CapacityCores
	for i := range o.Domains {
		d := &o.Domains[i]
		order[i] = i
		growth := 1.0
		if d.RPS > 0 && d.ForecastP80[1] > d.RPS {
			growth = math.Min(d.ForecastP80[1]/d.RPS, 3)
		}
		a.Headroom[i] = p.headroom(d)
		w := d.DemandCores * growth * (1 + a.Headroom[i]) / capacity
		if d.Stale {
			w = math.Max(d.PrevShare, d.Floor) // keep what it has until it reports again
		}
		want[i] = clamp(w, d.Floor, d.Ceiling)
		uncertain += want[i] * a.Headroom[i]
		a.Urgency[i] = urgency(d) // urgency.go
	}
	slices.SortStableFunc(order, func(x, y int) int { return o.Domains[x].Priority - o.Domains[y].Priority })

	avail := 1 - p.ReserveMin
	for _, i := range order { // floors, P0 first
		a.Shares[i] = math.Min(o.Domains[i].Floor, math.Max(0, avail))
		avail -= a.Shares[i]
	}
	for k := 0; k < n; { // tiers in priority order
		tier := o.Domains[order[k]].Priority
		end := k
		extra, weighted := 0.0, 0.0
		for end < n && o.Domains[order[end]].Priority == tier {
			i := order[end]
			extra += want[i] - a.Shares[i]
			weighted += o.Domains[i].Weight * (want[i] - a.Shares[i])
			end++
		}
		// avail may sit a rounding error below zero: never divide by a
		// tier that wants nothing more.
		f := 1.0
		if extra > 0 && extra > avail {
			f, short = math.Max(0, avail)/extra, short+end-k
		}
		for _, i := range order[k:end] {
			give := (want[i] - a.Shares[i]) * f
			if f < 1 && weighted > 0 {
				give = math.Max(0, avail) * o.Domains[i].Weight * (want[i] - a.Shares[i]) / weighted
			}
			a.Shares[i] += give
			avail -= give
		}
		k = end
	}
	sum := 0.0
	for _, s := range a.Shares {
		sum += s
	}
	a.Reserve = math.Max(0, 1-sum)
	return short, uncertain
}

func clamp(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }
