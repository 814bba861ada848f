package sim

import (
	"math"
	"math/rand/v2"

	"github.com/regimentd/regiment/internal/core/domains"
)

// noiseStream is the PCG stream constant of the arrival noise (Poisson counts
// and domain bursts), apart from the simulation's own stream (New) so that
// turning it on leaves every other draw as it was.
const noiseStream = 0x6e6f697365212121

// PoissonNormalAbove is the mean arrival count per tick above which a
// Poisson tick draws its count from the normal approximation
// N(mean, mean) rather than by inversion: at 50 the two laws' quantiles
// differ by under one arrival out to 3 sigma.
const PoissonNormalAbove = 50

// noise is the state of the arrival noise of scenario.ArrivalNoise
// "poisson" and of the traffic blocks' burst_sigma: one random stream, and
// each domain's burst. A Future copies it (clone) to replay the very draws
// Step will make.
type noise struct {
	poisson bool
	bursty  bool // a domain has a burst
	pcg     rand.PCG
	r       *rand.Rand // over pcg
	bursts  []burst    // per domain
}

// burst is one domain's multiplicative burst: x is a stationary AR(1) per
// minute, x(m+1) = phi x(m) + sigma sqrt(1 - phi^2) z, z standard normal, so
// that x ~ N(0, sigma^2) at every minute; the multiplier is
// exp(x - sigma^2/2), of mean 1, with x linearly interpolated between the
// minutes as the traces are.
type burst struct {
	sigma, phi float64
	innov      float64 // sigma sqrt(1 - phi^2)
	minute     int     // the minute of x0
	x0, x1     float64 // x at minute and minute+1
}

// newNoise is the noise of sc over the domains of cfg.
func newNoise(cfg *domains.Config, sc *domains.Scenario) *noise {
	n := &noise{poisson: sc.ArrivalNoise == domains.NoisePoisson, bursts: make([]burst, len(cfg.Domains))}
	n.pcg = *rand.NewPCG(sc.Seed, noiseStream)
	n.r = rand.New(&n.pcg)
	for _, t := range sc.Traffic {
		di := cfg.Domain(t.Domain)
		if di < 0 || t.BurstSigma <= 0 {
			continue
		}
		b := &n.bursts[di]
		b.sigma, b.phi = t.BurstSigma, t.BurstCorrelation
		b.innov = b.sigma * math.Sqrt(1-b.phi*b.phi)
		n.bursty = true
	}
	// Draw the first two minutes in domain order.
	for i := range n.bursts {
		b := &n.bursts[i]
		if b.sigma > 0 {
			b.x0 = b.sigma * n.r.NormFloat64()
			b.x1 = b.phi*b.x0 + b.innov*n.r.NormFloat64()
		}
	}
	return n
}

// clone is an independent copy of n at its current draw.
func (n *noise) clone() *noise {
	c := &noise{poisson: n.poisson, bursty: n.bursty, pcg: n.pcg, bursts: append([]burst(nil), n.bursts...)}
	c.r = rand.New(&c.pcg)
	return c
}

// advance moves every domain's burst to minute m (m only grows) and
// writes each domain's multiplier at m + frac into mult.
func (n *noise) advance(m int, frac float64, mult []float64) {
	for i := range n.bursts {
		b := &n.bursts[i]
		if b.sigma == 0 {
			mult[i] = 1
			continue
		}
		for b.minute < m {
			b.minute++
			b.x0, b.x1 = b.x1, b.phi*b.x1+b.innov*n.r.NormFloat64()
		}
		x := b.x0 + (b.x1-b.x0)*frac
		mult[i] = math.Exp(x - b.sigma*b.sigma/2)
	}
}

// count is the arrival rate of a tick of dt seconds whose expected rate is
// l: a Poisson count of mean l dt, over dt. Below PoissonNormalAbove the
// count is drawn by inversion (one uniform, Devroye 1986, X.3.3), above from
// N(l dt, l dt) clipped at 0 (one normal).
func (n *noise) count(l, dt float64) float64 {
	mean := l * dt
	if !(mean > 0) {
		return l
	}
	if mean >= PoissonNormalAbove {
		return max(0, mean+math.Sqrt(mean)*n.r.NormFloat64()) / dt
	}
	u := n.r.Float64()
	p := math.Exp(-mean) // P(K = 0)
	f := p
	k := 0
	for u > f && k < 4*PoissonNormalAbove {
		k++
		p *= mean / float64(k)
		f += p
	}
	return float64(k) / dt
}
