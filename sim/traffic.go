package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/sim/trace"
)

// demand is one app's external request rate: scale x series[(offset + m) mod len],
// linearly interpolated between minutes.
type demand struct {
	series []float32 // per-minute shape; shared between apps of a timeseries domain
	scale  float64   // rps per unit of series
	offset int       // minute of the series at the scenario start
}

// rps is the request rate at minute m (whole) plus frac of the next minute.
func (d *demand) rps(m int, frac float64) float64 {
	n := len(d.series)
	if n == 0 {
		return 0
	}
	i := (d.offset + m) % n
	j := i + 1
	if j == n {
		j = 0
	}
	a, b := float64(d.series[i]), float64(d.series[j])
	return d.scale * (a + (b-a)*frac)
}

// buildDemand maps each traffic block's trace onto its domain's apps.
//
// A timeseries trace is a domain-level shape: its maximum maps to PeakRPS and
// each app takes a fixed share drawn from a log-normal (sigma 1) seeded by the
// scenario seed. An azure-functions trace gives each app its own function,
// from the busiest down (ranks Offset, Offset+Stride, ...), scaled so that the
// functions' summed maxima map to PeakRPS.
func buildDemand(cfg *domains.Config, apps []domains.App, sc *domains.Scenario, traces map[string][]trace.Series) ([]demand, error) {
	out := make([]demand, len(apps))
	r := rand.New(rand.NewPCG(sc.Seed, 0x7261666669632121))
	for _, tr := range sc.Traffic {
		di := cfg.Domain(tr.Domain)
		if di < 0 {
			return nil, fmt.Errorf("traffic for unknown domain %q", tr.Domain)
		}
		series := traces[tr.Domain]
		if len(series) == 0 {
			return nil, fmt.Errorf("traffic %q: trace %q has no series", tr.Domain, tr.Trace)
		}
		var ids []int
		for i := range apps {
			if apps[i].Domain == di {
				ids = append(ids, i)
			}
		}
		switch tr.Format {
		case domains.FormatTimeseries:
			s := series[0]
			peak := s.Max()
			if peak <= 0 {
				return nil, fmt.Errorf("traffic %q: trace %q is all zero", tr.Domain, tr.Trace)
			}
			shape := toFloat32(s.Values, 1/peak)
			offset := 0
			if !sc.Start.IsZero() && !s.Start.IsZero() {
				offset = int(sc.Start.Sub(s.Start) / time.Minute)
				if offset < 0 || offset >= len(shape) {
					return nil, fmt.Errorf("traffic %q: scenario start %s is outside trace %q (%s for %d minutes)",
						tr.Domain, sc.Start.Format(time.RFC3339), tr.Trace, s.Start.Format(time.RFC3339), len(shape))
				}
			}
			w := make([]float64, len(ids))
			sum := 0.0
			for k := range w {
				w[k] = math.Exp(r.NormFloat64())
				sum += w[k]
			}
			for k, id := range ids {
				out[id] = demand{series: shape, scale: tr.PeakRPS * w[k] / sum, offset: offset}
			}
		case domains.FormatAzureFunctions:
			rank := trace.Rank(series)
			offset := 0
			if !sc.Start.IsZero() {
				y, mo, d := sc.Start.UTC().Date()
				offset = int(sc.Start.Sub(time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)) / time.Minute)
			}
			picked := make([]trace.Series, len(ids))
			sumMax := 0.0
			for k := range ids {
				picked[k] = series[rank[(tr.FunctionOffset+k*tr.FunctionStride)%len(rank)]]
				sumMax += picked[k].Max()
			}
			if sumMax <= 0 {
				return nil, fmt.Errorf("traffic %q: the functions picked from %q are all zero", tr.Domain, tr.Trace)
			}
			for k, id := range ids {
				vals := picked[k].Values
				out[id] = demand{series: toFloat32(vals, 1), scale: tr.PeakRPS / sumMax, offset: offset % max(len(vals), 1)}
			}
		default:
			return nil, fmt.Errorf("traffic %q: unknown trace format %q", tr.Domain, tr.Format)
		}
	}
	return out, nil
}

func toFloat32(v []float64, k float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x * k)
	}
	return out
}
