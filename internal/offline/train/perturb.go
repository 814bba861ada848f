package train

import (
	"math/rand/v2"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Perturb randomises one episode's scenario (domain randomisation), on top
// of the random window the env already picked (a time shift):
//
//   - every traffic block's PeakRPS is scaled by U[0.7, 1.3];
//   - the per-app demand noise is U[0.03, 0.10];
//   - with probability 1/2, one random event within the episode: a flash
//     sale (demand x U[1.5, 3], ramp 2-10 min, hold 10-40 min) or a batch
//     window (demand x U[1.5, 2.5], no ramp, hold 15-60 min) on a random
//     domain of cfg, or a slow dependency (service time x U[1.5, 3], ramp
//     1-5 min, hold 5-20 min) on a random app set.
//
// Events of the base scenario are kept. sc.Traffic and sc.Events are
// replaced by new slices, so a shared base is not changed.
func Perturb(sc *domains.Scenario, cfg *domains.Config, r *rand.Rand) {
	traffic := make([]domains.Traffic, len(sc.Traffic))
	copy(traffic, sc.Traffic)
	for i := range traffic {
		traffic[i].PeakRPS *= 0.7 + 0.6*r.Float64()
	}
	sc.Traffic = traffic
	sc.Noise = 0.03 + 0.07*r.Float64()
	events := append([]domains.Event(nil), sc.Events...)
	if r.IntN(2) == 0 && len(cfg.Domains) > 0 {
		minutes := func(lo, hi int) time.Duration { return time.Duration(lo+r.IntN(hi-lo+1)) * time.Minute }
		at := time.Duration(r.Int64N(int64(sc.Duration)))
		d := cfg.Domains[r.IntN(len(cfg.Domains))]
		switch r.IntN(3) {
		case 0:
			events = append(events, domains.Event{Kind: domains.EventFlashSale, Domain: d.Name, At: at,
				Ramp: minutes(2, 10), Hold: minutes(10, 40), Multiplier: 1.5 + 1.5*r.Float64()})
		case 1:
			events = append(events, domains.Event{Kind: domains.EventBatchWindow, Domain: d.Name, At: at,
				Hold: minutes(15, 60), Multiplier: 1.5 + r.Float64()})
		default:
			if len(d.AppSets) == 0 { // a domain that only discovers its apps on a cluster
				break
			}
			set := d.AppSets[r.IntN(len(d.AppSets))]
			events = append(events, domains.Event{Kind: domains.EventSlowDependency, App: d.Name + "/" + set.Name, At: at,
				Ramp: minutes(1, 5), Hold: minutes(5, 20), ServiceTimeFactor: 1.5 + 1.5*r.Float64()})
		}
	}
	sc.Events = events
}
