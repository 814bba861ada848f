package calibrate

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/stats"
)

// Options tune the estimators. The zero value takes the defaults.
type Options struct {
	// Target is the Pearson r a replayed series must reach to pass. Default 0.85.
	Target float64
	// MinSamples is the fewest samples an estimate needs to replace the
	// configured value. Default 30.
	MinSamples int
	// UtilMin and UtilMax bound the cpu_util of ticks used for service time:
	// too little load is all noise, saturation hides the service time.
	// Defaults 0.05 and 0.95.
	UtilMin, UtilMax float64
}

func (o *Options) defaults() {
	if o.Target == 0 {
		o.Target = 0.85
	}
	if o.MinSamples == 0 {
		o.MinSamples = 30
	}
	if o.UtilMin == 0 {
		o.UtilMin = 0.05
	}
	if o.UtilMax == 0 {
		o.UtilMax = 0.95
	}
}

// Estimate is one fitted parameter: seconds for times, a plain ratio for
// call ratios.
type Estimate struct {
	Old     float64 `json:"old"`
	New     float64 `json:"new"`     // the value in the calibrated config
	Fitted  float64 `json:"fitted"`  // the estimate (NaN-free; 0 when none)
	Samples int     `json:"samples"` // ticks, replicas or tick pairs used
	// Applied says New is the estimate; false keeps Old, Note says why.
	Applied bool   `json:"applied"`
	Note    string `json:"note,omitempty"`
}

// SetFit is what Fit found for one app set; the config holds one value per set.
type SetFit struct {
	Domain      string    `json:"domain"`
	Set         string    `json:"set"`
	ServiceTime Estimate  `json:"service_time_seconds"`
	StartupTime Estimate  `json:"startup_time_seconds"`
	CallRatio   *Estimate `json:"call_ratio,omitempty"` // nil for a set without depends_on
}

// AppFit is the per-app view of the same estimators, for the report.
type AppFit struct {
	App         string   `json:"app"`
	ServiceTime Estimate `json:"service_time_seconds"`
	StartupTime Estimate `json:"startup_time_seconds"`
}

// Result is a calibration: the calibrated config, the estimates, and how
// well the simulator reproduces the recording before and after.
type Result struct {
	Config *domains.Config `json:"-"`
	Runs   int             `json:"runs"`
	Ticks  int             `json:"ticks"`
	Sets   []SetFit        `json:"sets"`
	Apps   []AppFit        `json:"apps"`
	// Before replays the recording through the input config, After through
	// the calibrated one.
	Before Validation `json:"before"`
	After  Validation `json:"after"`
}

// Fit estimates service time, startup delay and call ratio per app set of
// cfg from runs, returns a calibrated copy of cfg, and validates both configs
// by replay. cfg must be validated, with defaults applied; it is not modified.
func Fit(cfg *domains.Config, runs []*Run, opt Options) (*Result, error) {
	opt.defaults()
	l := newLayout(cfg)
	apps := l.apps
	if len(runs) == 0 {
		return nil, errf("no recorded runs")
	}
	res := &Result{Runs: len(runs)}
	for _, r := range runs {
		if err := r.check(cfg, apps); err != nil {
			return nil, err
		}
		if r.Tick != cfg.Soldier.Tick {
			return nil, errf("run %q was recorded at a %s tick, the config's Soldier tick is %s", r.Name, r.Tick, cfg.Soldier.Tick)
		}
		res.Ticks += r.Len
	}
	out := clone(cfg)
	tick := cfg.Soldier.Tick.Seconds()

	for di := range cfg.Domains {
		d := &cfg.Domains[di]
		for si := range d.AppSets {
			set := &d.AppSets[si]
			sf := SetFit{Domain: d.Name, Set: set.Name}
			var svc []float64
			var delays []float64
			for _, a := range apps {
				if a.Domain != di || a.Set != si {
					continue
				}
				af := AppFit{App: a.Name}
				var as []float64
				var ad []float64
				for _, r := range runs {
					s := r.app(l, a.ID)
					as = serviceSamples(s, set.Concurrency, opt, as)
					ad = startupDelays(s, ad)
				}
				svc, delays = append(svc, as...), append(delays, ad...)
				af.ServiceTime = estimate(set.ServiceTime.Seconds(), as, 1, opt, "ticks with cpu_util in range")
				af.StartupTime = estimate(set.StartupTime.Seconds(), ad, tick, opt, "replicas seen starting")
				res.Apps = append(res.Apps, af)
			}
			sf.ServiceTime = estimate(set.ServiceTime.Seconds(), svc, 1, opt, "ticks with cpu_util in range")
			sf.StartupTime = estimate(set.StartupTime.Seconds(), delays, tick, opt, "replicas seen starting")
			if len(set.DependsOn) > 0 {
				e := callRatio(cfg, l, runs, di, si, opt)
				sf.CallRatio = &e
			}
			o := &out.Domains[di].AppSets[si]
			if sf.ServiceTime.Applied {
				o.ServiceTime = seconds(sf.ServiceTime.New)
			}
			if sf.StartupTime.Applied {
				o.StartupTime = seconds(sf.StartupTime.New)
			}
			if sf.CallRatio != nil && sf.CallRatio.Applied {
				o.CallRatio = sf.CallRatio.New
			}
			res.Sets = append(res.Sets, sf)
		}
	}
	res.Config = out
	var err error
	if res.Before, err = Validate(cfg, runs, opt.Target); err != nil {
		return nil, err
	}
	if res.After, err = Validate(out, runs, opt.Target); err != nil {
		return nil, err
	}
	return res, nil
}

// estimate is the median of samples times unit, applied when there are at
// least MinSamples.
func estimate(old float64, samples []float64, unit float64, opt Options, what string) Estimate {
	e := Estimate{Old: old, New: old, Samples: len(samples)}
	if len(samples) == 0 {
		e.Note = "no " + what
		return e
	}
	e.Fitted = stats.Median(slices.Clone(samples)) * unit
	if len(samples) < opt.MinSamples {
		e.Note = "too few " + what
		return e
	}
	if !(e.Fitted > 0) {
		e.Note = "estimate is not positive"
		return e
	}
	e.New, e.Applied = e.Fitted, true
	return e
}

// seconds converts to a Duration rounded to the microsecond, which is what
// the HCL writer prints.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond)
}

// serviceSamples appends one service-time sample per usable tick of a:
// util * ready * concurrency / rps (the utilisation law; see doc.go).
func serviceSamples(a *App, conc int, opt Options, out []float64) []float64 {
	for k := range a.RPS {
		rps, util, ready := a.RPS[k], a.CPUUtil[k], a.Ready[k]
		if !(rps > 0) || !(ready >= 1) || !(util >= opt.UtilMin && util <= opt.UtilMax) {
			continue
		}
		out = append(out, util*ready*float64(conc)/rps)
	}
	return out
}

// startupDelays appends, in ticks, the delay from scheduled to ready of each
// replica of a matched first in, first out (see doc.go).
func startupDelays(a *App, out []float64) []float64 {
	type batch struct{ tick, n int }
	var queue []batch
	unknown := 0 // replicas starting whose start was not seen: they turn ready first
	reset := func(k int) {
		queue = queue[:0]
		unknown = 0
		if s := a.Starting[k]; s > 0 {
			unknown = int(s)
		}
	}
	n := len(a.Ready)
	if n > 0 {
		reset(0)
	}
	for k := 1; k < n; k++ {
		r0, s0, p0 := a.Ready[k-1], a.Starting[k-1], a.Pending[k-1]
		r1, s1, p1 := a.Ready[k], a.Starting[k], a.Pending[k]
		if !finite(r0+s0+p0) || !finite(r1+s1+p1) {
			if finite(s1) {
				reset(k)
			} else {
				queue, unknown = queue[:0], 0
			}
			continue
		}
		readied := int(r1 - r0)
		scheduled := int(s1-s0) + readied
		if r1+s1+p1 < r0+s0+p0 || readied < 0 || scheduled < 0 {
			// Replicas were removed: which ones is not known.
			reset(k)
			continue
		}
		take := min(readied, unknown)
		unknown -= take
		readied -= take
		for readied > 0 && len(queue) > 0 {
			b := &queue[0]
			m := min(readied, b.n)
			for range m {
				out = append(out, float64(k-b.tick))
			}
			b.n -= m
			readied -= m
			if b.n == 0 {
				queue = queue[1:]
			}
		}
		if readied > 0 {
			// More turned ready than were seen starting: the counts are not
			// consistent (a scrape missed a start); start over.
			reset(k)
			continue
		}
		if scheduled > 0 {
			queue = append(queue, batch{tick: k, n: scheduled})
		}
	}
	return out
}

// callRatio fits set si of domain di's call ratio from every callee of the
// set (see doc.go).
func callRatio(cfg *domains.Config, l layout, runs []*Run, di, si int, opt Options) Estimate {
	apps := l.apps
	set := &cfg.Domains[di].AppSets[si]
	e := Estimate{Old: set.CallRatio, New: set.CallRatio}
	// callers[e] are the set's apps that call app e; others[e] the apps of
	// other sets that call it, with their configured ratio.
	type other struct {
		id    int
		ratio float64
	}
	callers := map[int][]int{}
	others := map[int][]other{}
	for _, a := range apps {
		for _, dep := range a.Deps {
			if a.Domain == di && a.Set == si {
				callers[dep] = append(callers[dep], a.ID)
			} else {
				others[dep] = append(others[dep], other{a.ID, a.CallRatio})
			}
		}
	}
	var sxy, sxx, lxy, lxx float64
	bound := math.Inf(1) // smallest over callees of the low quantile of y/x
	at := func(r *Run, id, k int) float64 { return r.app(l, id).RPS[k] }
	level := func(r *Run, callee, k int) (x, y float64) {
		for _, c := range callers[callee] {
			x += at(r, c, k)
		}
		y = at(r, callee, k)
		for _, o := range others[callee] {
			y -= o.ratio * at(r, o.id, k)
		}
		return x, y
	}
	callees := make([]int, 0, len(callers))
	for c := range callers {
		callees = append(callees, c)
	}
	slices.Sort(callees)
	var ratios []float64
	for _, callee := range callees {
		ratios = ratios[:0]
		for _, r := range runs {
			for k := 1; k < r.Len; k++ {
				x0, y0 := level(r, callee, k-1)
				x1, y1 := level(r, callee, k)
				if !finite(x0 + y0 + x1 + y1) {
					continue
				}
				dx, dy := x1-x0, y1-y0
				sxy += dx * dy
				sxx += dx * dx
				lxy += x1 * y1
				lxx += x1 * x1
				e.Samples++
				if x1 > 0 {
					ratios = append(ratios, y1/x1)
				}
			}
		}
		if len(ratios) > 0 {
			slices.Sort(ratios)
			bound = min(bound, ratios[len(ratios)*boundQuantile/100])
		}
	}
	if sxx == 0 {
		e.Note = "callers' rps never changed"
		return e
	}
	e.Fitted = sxy / sxx
	e.Note = "level ratio " + formatRatio(lxy/lxx)
	if bound < e.Fitted {
		e.Fitted = bound
		e.Note += "; capped by a callee's rps/caller rps"
	}
	switch {
	case e.Samples < opt.MinSamples:
		e.Note = "too few tick pairs; " + e.Note
	case !(e.Fitted > 0):
		e.Note = "estimate is not positive; " + e.Note
	default:
		e.New, e.Applied = roundRatio(e.Fitted), true
	}
	return e
}

// boundQuantile is the percentile of a callee's rps / callers' rps taken as
// the upper bound of the call ratio: its own demand is never negative.
const boundQuantile = 1

func roundRatio(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return r
}

func formatRatio(v float64) string {
	if !finite(v) {
		return "n/a"
	}
	return trimFloat(math.Round(v*1000) / 1000)
}

// clone copies cfg deeply enough that the calibrated fields (per app set)
// can be written without touching cfg.
func clone(cfg *domains.Config) *domains.Config {
	out := *cfg
	out.Domains = slices.Clone(cfg.Domains)
	for i := range out.Domains {
		out.Domains[i].AppSets = slices.Clone(cfg.Domains[i].AppSets)
	}
	return &out
}
