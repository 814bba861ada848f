package calibrate

import (
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/stats"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// Score is how well one replayed series matches its recording.
type Score struct {
	Series string  `json:"series"` // "<domain>/p99", "<domain>/served_rps", "overall/..."
	R      float64 `json:"pearson_r"`
	// RelErr is sum|sim - recorded| / sum|recorded|: Pearson r ignores scale
	// and offset, this does not.
	RelErr float64 `json:"rel_error"`
	N      int     `json:"n"` // ticks compared
	Pass   bool    `json:"pass"`
	// Skipped says the recorded series is constant (a domain without
	// traffic): r is undefined and the series is not judged.
	Skipped bool   `json:"skipped,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Validation is the replay of every run through one config.
type Validation struct {
	Target float64 `json:"target_r"`
	Scores []Score `json:"scores"`
}

// Pass reports whether every judged series reached the target, and at
// least one was judged.
func (v Validation) Pass() bool {
	judged := 0
	for _, s := range v.Scores {
		if s.Skipped {
			continue
		}
		if !s.Pass {
			return false
		}
		judged++
	}
	return judged > 0
}

// Score returns the named series' score.
func (v Validation) Score(series string) (Score, bool) {
	for _, s := range v.Scores {
		if s.Series == series {
			return s, true
		}
	}
	return Score{}, false
}

// pairs collects recorded and simulated samples of one series.
type pairs struct{ rec, sim []float64 }

func (p *pairs) add(rec, sim float64) {
	if finite(rec) && finite(sim) {
		p.rec = append(p.rec, rec)
		p.sim = append(p.sim, sim)
	}
}

// Validate replays every run through the simulator configured by cfg (see
// doc.go) and scores p99 and served throughput per recorded domain and
// overall: p99 over the domain's SLO pooled across domains, and the summed
// served rps of the recorded domains. A series passes at r >= target.
func Validate(cfg *domains.Config, runs []*Run, target float64) (Validation, error) {
	l := newLayout(cfg)
	nd := len(cfg.Domains)
	p99 := make([]pairs, nd)
	served := make([]pairs, nd)
	var p99All, servedAll pairs
	for _, r := range runs {
		if err := r.check(cfg, l.apps); err != nil {
			return Validation{}, err
		}
		simP99, simServed, err := replay(cfg, l, r)
		if err != nil {
			return Validation{}, err
		}
		for k := range r.Len {
			recTotal, simTotal, complete := 0.0, 0.0, true
			for di := range nd {
				d := &r.Domains[di]
				slo := cfg.Domains[di].SLO.LatencyP99Seconds()
				p99[di].add(d.P99[k], simP99[di][k])
				p99All.add(d.P99[k]/slo, simP99[di][k]/slo)
				rec := recordedServed(d, k)
				served[di].add(rec, simServed[di][k])
				if recorded(d) {
					recTotal += rec
					simTotal += simServed[di][k]
					complete = complete && finite(rec) && finite(simServed[di][k])
				}
			}
			if complete {
				servedAll.add(recTotal, simTotal)
			}
		}
	}
	v := Validation{Target: target}
	for di := range nd {
		if len(p99[di].rec) == 0 {
			continue
		}
		name := cfg.Domains[di].Name
		v.Scores = append(v.Scores, score(name+"/p99", p99[di], target), score(name+"/served_rps", served[di], target))
	}
	if len(p99All.rec) > 0 {
		v.Scores = append(v.Scores, score("overall/p99_over_slo", p99All, target), score("overall/served_rps", servedAll, target))
	}
	return v, nil
}

func constant(xs []float64) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return true
}

func recorded(d *Domain) bool {
	for _, v := range d.P99 {
		if finite(v) {
			return true
		}
	}
	return false
}

// recordedServed is the domain's served rps at tick k: its apps' summed rps
// times one minus its error rate.
func recordedServed(d *Domain, k int) float64 {
	rps := 0.0
	for j := range d.Apps {
		rps += d.Apps[j].RPS[k]
	}
	return rps * (1 - d.ErrorRate[k])
}

func score(name string, p pairs, target float64) Score {
	s := Score{Series: name, N: len(p.rec)}
	s.RelErr, _ = relErr(p.rec, p.sim)
	if constant(p.rec) {
		s.Skipped, s.Note = true, "recorded series is constant (no traffic?): not judged"
		return s
	}
	var ok bool
	if s.R, ok = stats.Pearson(p.rec, p.sim); !ok {
		s.Note = "simulated series is constant: no correlation"
	}
	s.Pass = ok && s.R >= target
	return s
}

// replay runs r's demand and targets through a simulation of cfg and returns
// each domain's simulated p99 and served rps per tick of r, lagged like the
// recording (NaN for the first TelemetryLag ticks and unrecorded domains).
func replay(cfg *domains.Config, l layout, r *Run) (p99, served [][]float64, err error) {
	tick := cfg.Soldier.Tick
	lag := int((cfg.Cluster.TelemetryLag + tick - 1) / tick)
	n := r.Len
	nApps := len(l.apps)

	// Demand and targets per tick, carried forward over gaps (and back
	// from the first sample).
	rps := make([][]float64, nApps)
	tgt := make([][]float64, nApps)
	for id := range nApps {
		a := r.app(l, id)
		rps[id] = carried(a.RPS)
		tgt[id] = carried(a.Target)
	}
	// An app never recorded (its domain has no episode in the run) gets no
	// demand of its own and makes no calls.
	at := func(id, k int) float64 {
		if v := rps[id][k]; finite(v) {
			return v
		}
		return 0
	}
	ext := func(k int, out []float64) {
		for id := range nApps {
			out[id] = at(id, k)
		}
		for _, a := range l.apps {
			for _, d := range a.Deps {
				out[d] -= a.CallRatio * at(a.ID, k)
			}
		}
		for id := range out {
			out[id] = max(0, out[id])
		}
	}
	setTargets := func(k int, targets []int32) {
		for id := range nApps {
			if v := tgt[id][k]; finite(v) {
				targets[id] = int32(math.Round(v))
			}
		}
	}

	// Warm up long enough to provision nodes for and start the first
	// recorded state.
	maxStartup := time.Duration(0)
	for _, a := range l.apps {
		maxStartup = max(maxStartup, a.StartupTime)
	}
	warm := int((cfg.Cluster.NodeProvisionTime+maxStartup+2*time.Minute)/tick) + lag + 1
	sc := &domains.Scenario{Name: "replay " + r.Name, Start: r.Start.Add(-time.Duration(warm) * tick),
		Duration: time.Duration(warm+n+1) * tick, Seed: 1}
	s, err := sim.New(cfg, sc, nil)
	if err != nil {
		return nil, nil, errf("replay %q: %w", r.Name, err)
	}
	demand := make([]float64, nApps)
	ext(min(lag, n-1), demand)
	if err := s.SetDemand(demand); err != nil {
		return nil, nil, errf("replay %q: %w", r.Name, err)
	}
	setTargets(0, s.Targets())
	for range warm {
		s.Step()
	}

	p99 = make([][]float64, len(cfg.Domains))
	served = make([][]float64, len(cfg.Domains))
	for di := range p99 {
		p99[di], served[di] = stats.NaNs(n), stats.NaNs(n)
	}
	for k := range n {
		if k > 0 {
			setTargets(k-1, s.Targets())
		}
		ext(min(k+lag, n-1), demand)
		if err := s.SetDemand(demand); err != nil {
			return nil, nil, errf("replay %q tick %d: %w", r.Name, k, err)
		}
		s.Step()
		if k < lag {
			continue
		}
		t := s.Telemetry()
		for di := range p99 {
			if !recorded(&r.Domains[di]) {
				continue
			}
			dt := &t.Domains[di]
			p99[di][k] = t.DomainP99(di)
			served[di][k] = dt.RPS * (1 - dt.ErrorRate)
		}
	}
	return p99, served, nil
}

// carried copies s with each NaN replaced by the last finite value before
// it, or the first one after it at the start; all NaN stays all NaN.
func carried(s []float64) []float64 {
	out := make([]float64, len(s))
	last := math.NaN()
	for _, v := range s {
		if finite(v) {
			last = v
			break
		}
	}
	for i, v := range s {
		if finite(v) {
			last = v
		}
		out[i] = last
	}
	return out
}
