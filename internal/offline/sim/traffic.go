package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
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
// each app takes a fixed share, weight exp(AppSkew x z) over the domain's
// sum, with z standard normal drawn from the scenario seed (a log-normal of
// sigma AppSkew; equal shares at 0). An azure-functions trace gives each app
// its own function, from the busiest of the FunctionRows down (ranks Offset,
// Offset+Stride, ...), scaled so that the functions' summed maxima map to
// PeakRPS. The maximum is over the whole trace, or with PeakRPSOf window over
// the minutes the scenario replays (replayedMinutes).
func buildDemand(cfg *domains.Config, apps []domains.App, sc *domains.Scenario, traces map[string][]trace.Series) ([]demand, error) {
	out := make([]demand, len(apps))
	r := rand.New(rand.NewPCG(sc.Seed, 0x7261666669632121))
	last := replayedMinutes(sc.Duration, cfg.Soldier.Tick)
	for _, tr := range sc.Traffic {
		window := tr.PeakRPSOf == domains.PeakOfWindow // else the trace's: "trace" or unset
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
		// split maps a domain-level shape onto the apps by log-normal weights.
		split := func(shape []float32, offset int) {
			// AppSkew 0 is unset (Defaults makes it 1); EqualShares is sigma 0.
			// Every app draws its z either way, so that the draws of the
			// domains after this one do not depend on this one's skew.
			sigma := tr.AppSkew
			if sigma == 0 {
				sigma = 1
			}
			if tr.EqualShares {
				sigma = 0
			}
			w := make([]float64, len(ids))
			sum := 0.0
			for k := range w {
				w[k] = math.Exp(sigma * r.NormFloat64())
				sum += w[k]
			}
			for k, id := range ids {
				out[id] = demand{series: shape, scale: tr.PeakRPS * w[k] / sum, offset: offset}
			}
			if tr.AppOwn > 0 {
				// Each domain's shifts from the seed, on a stream of their own.
				shifts := rand.New(rand.NewPCG(sc.Seed, ownStream^uint64(di)))
				ownComponents(out, ids, shape, offset, last, tr.AppOwn, int(tr.AppShift/time.Minute), shifts)
			}
		}
		switch tr.Format {
		case domains.FormatTimeseries:
			s := series[0]
			peak := s.Max()
			if peak <= 0 {
				return nil, fmt.Errorf("traffic %q: trace %q is all zero", tr.Domain, tr.Trace)
			}
			offset := 0
			if !sc.Start.IsZero() && !s.Start.IsZero() {
				offset = int(sc.Start.Sub(s.Start) / time.Minute)
				if offset < 0 || offset >= len(s.Values) {
					return nil, fmt.Errorf("traffic %q: scenario start %s is outside trace %q (%s for %d minutes)",
						tr.Domain, sc.Start.Format(time.RFC3339), tr.Trace, s.Start.Format(time.RFC3339), len(s.Values))
				}
			}
			if window {
				if peak = WindowPeak(s, sc.Start, sc.Duration, cfg.Soldier.Tick); peak <= 0 {
					return nil, fmt.Errorf("traffic %q: trace %q is all zero in the %d minutes the scenario replays, so peak_rps_of = %q has no peak to map",
						tr.Domain, tr.Trace, last+1, tr.PeakRPSOf)
				}
			}
			split(toFloat32(s.Values, 1/peak), offset)
		case domains.FormatAzureFunctions:
			cands := series
			switch tr.FunctionRows {
			case domains.RowsEven, domains.RowsOdd: // else all: "all" or unset
				cands = rowsOf(series, tr.FunctionRows)
				if len(cands) == 0 {
					return nil, fmt.Errorf("traffic %q: trace %q has no %s rows (it has %d)", tr.Domain, tr.Trace, tr.FunctionRows, len(series))
				}
			}
			rank := trace.Rank(cands)
			offset := 0
			if !sc.Start.IsZero() {
				y, mo, d := sc.Start.UTC().Date()
				offset = int(sc.Start.Sub(time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)) / time.Minute)
			}
			if tr.Functions == domains.FunctionsSummed {
				total := summed(cands, rank, tr.FunctionOffset, tr.FunctionStride)
				peak := 0.0
				if window {
					peak = windowMax(total, offset, last)
				} else {
					peak = slices.Max(total)
				}
				if peak <= 0 {
					return nil, fmt.Errorf("traffic %q: the functions summed from %q are all zero in the minutes used to find the peak", tr.Domain, tr.Trace)
				}
				split(toFloat32(total, 1/peak), offset%len(total))
				continue
			}
			picked := pickFunctions(cands, rank, tr.FunctionOffset, tr.FunctionStride, len(ids))
			sumMax := 0.0
			for k := range ids {
				if window {
					sumMax += windowMax(picked[k].Values, offset, last)
				} else {
					sumMax += picked[k].Max()
				}
			}
			if sumMax <= 0 {
				if window {
					return nil, fmt.Errorf("traffic %q: the functions picked from %q are all zero in the %d minutes the scenario replays, so peak_rps_of = %q has no peak to map",
						tr.Domain, tr.Trace, last+1, tr.PeakRPSOf)
				}
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

// ownStream is the PCG stream constant of the app_own shifts (xor the
// domain's index).
const ownStream = 0x6f776e2073686966

// ownComponents gives each app of ids (whose demand already holds its share
// of shape from offset) a component of its own, Traffic.AppOwn: app k's
// series over the replayed minutes 0..last+1 is
//
//	shape(m)^(1-a) x shape(m + shift_k)^a
//
// with shift_k uniform in [-maxShift, maxShift] minutes, the trace's minute
// read as demand.rps reads it (wrapping past its ends). Its share (scale) is
// unchanged; the series' peak stays <= shape's. A geometric mix keeps every
// app's level at its share of the domain's and gives it its own phase and
// its own minute-to-minute residual (the trace's, from another minute). The
// value at a minute depends on the trace minute alone, not on the window: a
// scenario cut from another at the same minutes (a training episode) replays
// the same demand. A scenario reads up to maxShift minutes beyond its
// window.
func ownComponents(out []demand, ids []int, shape []float32, offset, last int, a float64, maxShift int, r *rand.Rand) {
	n := last + 2
	logs := make([]float64, n+2*maxShift) // ln shape at minutes -maxShift..n-1+maxShift; -Inf at zeros
	for k := range logs {
		logs[k] = math.Log(float64(shape[wrap(offset+k-maxShift, len(shape))]))
	}
	for _, id := range ids {
		shift := r.IntN(2*maxShift+1) - maxShift
		series := make([]float32, n)
		for m := range series {
			b, o := logs[m+maxShift], logs[m+maxShift+shift]
			switch {
			case math.IsInf(o, -1), a < 1 && math.IsInf(b, -1):
				series[m] = 0
			case a == 1:
				series[m] = float32(math.Exp(o))
			default:
				series[m] = float32(math.Exp((1-a)*b + a*o))
			}
		}
		out[id].series, out[id].offset = series, 0
	}
}

// wrap maps j into 0..n-1, modulo n.
func wrap(j, n int) int {
	j %= n
	if j < 0 {
		j += n
	}
	return j
}

// replayedMinutes is the last minute, counted from the scenario's start, that
// a run of duration at tick reads: Step reads minute m and, between minutes,
// m+1, up to the end of its last tick. The minutes replayed are 0 to it.
func replayedMinutes(duration, tick time.Duration) int {
	end := time.Duration(int(duration/tick)) * tick
	return int((end + time.Minute - 1) / time.Minute)
}

// WindowPeak is the peak that peak_rps_of = "window" maps to peak_rps: the
// largest value of s over the minutes a scenario from start for duration
// replays at the Soldier tick tick, wrapping past the trace's end; 0 when
// start is outside s.
func WindowPeak(s trace.Series, start time.Time, duration, tick time.Duration) float64 {
	offset := 0
	if !start.IsZero() && !s.Start.IsZero() {
		offset = int(start.Sub(s.Start) / time.Minute)
	}
	if offset < 0 || offset >= len(s.Values) {
		return 0
	}
	return windowMax(s.Values, offset, replayedMinutes(duration, tick))
}

// windowMax is the largest of v at minutes offset to offset+last, wrapping
// past the end as demand.rps does.
func windowMax(v []float64, offset, last int) float64 {
	if len(v) == 0 {
		return 0
	}
	if last+1 >= len(v) {
		last = len(v) - 1 // every minute
	}
	m := 0.0
	for k := 0; k <= last; k++ {
		m = max(m, v[(offset+k)%len(v)])
	}
	return m
}

// summed is the per-minute sum of the series of ranks offset, offset+stride,
// ... (rank from trace.Rank). The series of one azure-functions trace have
// one length.
func summed(series []trace.Series, rank []int, offset, stride int) []float64 {
	total := make([]float64, len(series[0].Values))
	for k := offset; k < len(rank); k += stride {
		for m, v := range series[rank[k]].Values {
			total[m] += v
		}
	}
	return total
}

// pickFunctions is the functions of n apps, one each: ranks offset,
// offset+stride, ... (rank from trace.Rank), wrapping past the last rank.
func pickFunctions(cands []trace.Series, rank []int, offset, stride, n int) []trace.Series {
	picked := make([]trace.Series, n)
	for k := range picked {
		picked[k] = cands[rank[(offset+k*stride)%len(rank)]]
	}
	return picked
}

// DomainFunctions is what an azure-functions traffic block tr feeds its
// domain of apps apps from series (the trace's): the picked function of
// each app (one-per-app), or the functions summed into the domain's shape
// (summed), in the order buildDemand uses them. Tools that measure a
// scenario's traffic (hack/regimes) read the very series the simulator
// replays through it.
func DomainFunctions(series []trace.Series, tr *domains.Traffic, apps int) []trace.Series {
	cands := series
	if tr.FunctionRows == domains.RowsEven || tr.FunctionRows == domains.RowsOdd {
		cands = rowsOf(series, tr.FunctionRows)
	}
	if len(cands) == 0 {
		return nil
	}
	rank := trace.Rank(cands)
	if tr.Functions == domains.FunctionsSummed {
		var out []trace.Series
		for k := tr.FunctionOffset; k < len(rank); k += max(tr.FunctionStride, 1) {
			out = append(out, cands[rank[k]])
		}
		return out
	}
	return pickFunctions(cands, rank, tr.FunctionOffset, max(tr.FunctionStride, 1), apps)
}

// rowsOf is the series at the even or odd 0-based indices of series, in order.
func rowsOf(series []trace.Series, rows domains.Rows) []trace.Series {
	first := 0
	if rows == domains.RowsOdd {
		first = 1
	}
	out := make([]trace.Series, 0, (len(series)+1-first)/2)
	for i := first; i < len(series); i += 2 {
		out = append(out, series[i])
	}
	return out
}

func toFloat32(v []float64, k float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x * k)
	}
	return out
}
