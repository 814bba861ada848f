package commander

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/forecast"
	"github.com/regimentd/regiment/wire"
)

// ObsVersion is the version of the observation layout; checkpoints record it.
const ObsVersion = 1

// domainFeatures names the per-domain features, in order.
var domainFeatures = []string{
	"rps", "rps_p95_15m", "rps_delta", "rps_accel", "live_pods", "pending_pods",
	"cpu_util_p75", "mem_util_p75", "p99_over_slo", "error_rate_over_budget", "restart_rate",
	"slo_headroom", "forecast_p80_5m", "forecast_p80_15m", "forecast_p80_30m", "forecast_uncertainty",
	"prev_share", "budget_utilisation", "demand_share", "node_churn", "stale",
}

// Layout names every feature of Observation.Vector for the config's domains:
// per domain, then the cluster, then time, then the static call matrix.
func Layout(cfg *domains.Config) []string {
	var out []string
	for _, d := range cfg.Domains {
		for _, f := range domainFeatures {
			out = append(out, d.Name+"."+f)
		}
	}
	out = append(out, "cluster.free_share", "cluster.nodes", "cluster.pending_nodes", "cluster.cost_per_minute",
		"time.hour_sin", "time.hour_cos", "time.weekday", "time.event")
	for _, a := range cfg.Domains {
		for _, b := range cfg.Domains {
			out = append(out, fmt.Sprintf("calls.%s.%s", a.Name, b.Name))
		}
	}
	return out
}

// DomainObs is one domain's state as the Commander sees it.
type DomainObs struct {
	Name                   string
	Priority               int
	Weight, Floor, Ceiling float64
	// FixedHeadroom is the domain's own headroom (domain { headroom }), 0
	// when it has none (not in Vector).
	FixedHeadroom          float64
	SLO, ErrorBudget       float64 // seconds, error rate
	RPS, RPSP95, Delta     float64 // 1/s; Delta per tick
	Accel                  float64 // change of Delta per tick
	Live, Pending          int
	CPUUtilP75, MemUtilP75 float64
	P99, ErrorRate         float64
	RestartRate            float64
	Headroom               float64 // 1 - p99/SLO
	ForecastP80            [3]float64
	ForecastP50            [3]float64 // the median forecast at the same horizons (not in Vector)
	// ForecastResiduals is how many past errors calibrate the +15 min
	// forecast: 0 until it has been checked against what came (not in Vector).
	ForecastResiduals      int
	Uncertainty            float64 // (p90 - p10) / p50 at +15 min
	PrevShare, BudgetUtil  float64
	DemandCores, CoresUsed float64
	// EventCores is the cores the operator's calendar expects the domain
	// to need now, 0 outside its events' windows (calendar.apply; not in
	// Vector: time.event flags it).
	EventCores         float64
	Stale              bool // no report within two Commander ticks
	lastRPS, lastDelta float64
	reportedAt         time.Time
}

// ClusterObs is the pool as a whole.
type ClusterObs struct {
	CapacityCores float64
	FreeCores     float64 // capacity not used by any domain's scheduled replicas
	Nodes         int     // ready nodes (NodeCounter); 0 without one
	PendingNodes  int     // nodes asked for, not ready yet (NodeCounter); 0 without one
	CostPerMinute float64
}

// Observation is the Commander's input at one tick.
type Observation struct {
	At      time.Time
	Domains []DomainObs
	Cluster ClusterObs
	Event   bool      // an event of the operator's calendar is within its window
	Vector  []float64 // normalised features in Layout order
}

// Builder keeps the latest report and a forecaster per domain and builds
// observations. OnReport is safe for concurrent use with Build.
type Builder struct {
	cfg      *domains.Config
	calls    []float64 // domain x domain call ratios, static
	mu       sync.Mutex
	reports  []wire.DomainReport
	have     []bool
	fc       []*forecast.Forecaster
	obs      Observation
	lastFcAt []time.Time
	// capacity is the pool's size now, cores, when a Capacity knows it; 0:
	// the config's capacity_cores.
	capacity float64
	// nodes and pendingNodes are the pool's ready and not-yet-ready nodes
	// when a NodeCounter knows them; 0 otherwise.
	nodes, pendingNodes int
	// cal is the operator's calendar of events.
	cal calendar
}

// NewBuilder returns a Builder for cfg's domains.
func NewBuilder(cfg *domains.Config) *Builder {
	n := len(cfg.Domains)
	b := &Builder{cfg: cfg, reports: make([]wire.DomainReport, n), have: make([]bool, n), lastFcAt: make([]time.Time, n)}
	for range n {
		b.fc = append(b.fc, forecast.New(forecast.Config{}))
	}
	b.obs.Domains = make([]DomainObs, n)
	for i, d := range cfg.Domains {
		b.obs.Domains[i] = DomainObs{Name: d.Name, Priority: d.Priority, Weight: d.Weight, Floor: d.Floor, Ceiling: d.Ceiling, FixedHeadroom: d.Headroom,
			SLO: d.SLO.LatencyP99Seconds(), ErrorBudget: d.SLO.ErrorBudget}
	}
	b.calls = callMatrix(cfg)
	b.cal = newCalendar(cfg)
	b.obs.Vector = make([]float64, 0, len(Layout(cfg)))
	return b
}

// callMatrix is, for each pair of domains (a, b), the share of a's apps that
// call apps of b, weighted by call ratio.
func callMatrix(cfg *domains.Config) []float64 {
	n := len(cfg.Domains)
	m := make([]float64, n*n)
	counts := make([]float64, n)
	for _, a := range cfg.Apps() {
		counts[a.Domain]++
		for _, dep := range a.DependsOn {
			for j, d := range cfg.Domains {
				if len(dep) > len(d.Name) && dep[:len(d.Name)+1] == d.Name+"/" {
					m[a.Domain*n+j] += a.CallRatio
				}
			}
		}
	}
	for i := range n {
		for j := range n {
			if counts[i] > 0 {
				m[i*n+j] /= counts[i]
			}
		}
	}
	return m
}

// OnReport stores r as its domain's latest report; it returns false for a
// domain the config does not know.
func (b *Builder) OnReport(r wire.DomainReport) bool {
	di := b.cfg.Domain(r.Domain)
	if di < 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.have[di] && r.SentAt.Before(b.reports[di].SentAt) {
		return true // an older report arriving late changes nothing
	}
	b.reports[di], b.have[di] = r, true
	return true
}

// Reported says whether domain i (config order) has reported since the
// Builder was made.
func (b *Builder) Reported(i int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.have[i]
}

// Reports returns how many domains have reported, and the oldest report's
// sequence number among them.
func (b *Builder) Reports() (n int, minSeq uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	minSeq = math.MaxUint64
	for i, h := range b.have {
		if h {
			n++
			minSeq = min(minSeq, b.reports[i].Seq)
		}
	}
	return n, minSeq
}

// Build makes the observation at now from the latest reports; prevShares are
// the shares in force. The returned observation is owned by the Builder and
// valid until the next Build.
func (b *Builder) Build(now time.Time, prevShares []float64, tick time.Duration) *Observation {
	o := &b.obs
	o.At = now
	capacity := b.cfg.Cluster.CapacityCores
	if b.capacity > 0 {
		capacity = min(capacity, b.capacity)
	}
	used := 0.0
	b.mu.Lock()
	for i := range o.Domains {
		d := &o.Domains[i]
		d.PrevShare = prevShares[i]
		r, have := b.reports[i], b.have[i]
		d.Stale = !have || now.Sub(r.SentAt) > 2*tick
		if !have {
			continue
		}
		if r.SentAt.After(d.reportedAt) {
			d.Delta = r.RPS - d.lastRPS
			d.Accel = d.Delta - d.lastDelta
			d.lastRPS, d.lastDelta, d.reportedAt = r.RPS, d.Delta, r.SentAt
		}
		d.RPS, d.RPSP95 = r.RPS, r.RPSP95
		d.Live, d.Pending = r.LivePods, r.PendingPods
		d.CPUUtilP75, d.MemUtilP75 = r.CPUUtilP75, r.MemUtilP75
		d.P99, d.ErrorRate, d.RestartRate = r.P99Seconds, r.ErrorRate, r.RestartRate
		d.Headroom = 1 - r.P99Seconds/d.SLO
		d.BudgetUtil, d.DemandCores, d.CoresUsed = r.BudgetUtilisation, r.DemandCores, r.CoresUsed
		used += r.CoresUsed
	}
	b.mu.Unlock()
	for i := range o.Domains {
		d := &o.Domains[i]
		if now.Sub(b.lastFcAt[i]) >= time.Minute && !d.Stale {
			b.fc[i].Observe(now, d.RPS)
			b.lastFcAt[i] = now
		}
		f := b.fc[i].Forecast(now)
		d.ForecastP80, d.ForecastP50, d.ForecastResiduals = f.P80, f.P50, f.Residuals[1]
		d.Uncertainty = 0
		if f.P50[1] > 0 {
			d.Uncertainty = (f.P90[1] - f.P10[1]) / f.P50[1]
		}
	}
	o.Cluster.CapacityCores = capacity
	o.Cluster.Nodes, o.Cluster.PendingNodes = b.nodes, b.pendingNodes
	o.Cluster.FreeCores = math.Max(0, capacity-used)
	o.Cluster.CostPerMinute = used * b.cfg.Cluster.CostPerCoreHour / 60
	b.cal.apply(o, now, b.calls)
	b.vector(o)
	return o
}

// vector writes the normalised features: rates as log1p, ratios as they are,
// pods per thousand, cores as shares of the pool.
func (b *Builder) vector(o *Observation) {
	capacity := o.Cluster.CapacityCores
	v := o.Vector[:0]
	for i := range o.Domains {
		d := &o.Domains[i]
		stale := 0.0
		if d.Stale {
			stale = 1
		}
		v = append(v,
			math.Log1p(d.RPS), math.Log1p(d.RPSP95), signedLog1p(d.Delta), signedLog1p(d.Accel),
			float64(d.Live)/1000, float64(d.Pending)/1000,
			d.CPUUtilP75, d.MemUtilP75, d.P99/d.SLO, d.ErrorRate/d.ErrorBudget, d.RestartRate,
			d.Headroom, math.Log1p(d.ForecastP80[0]), math.Log1p(d.ForecastP80[1]), math.Log1p(d.ForecastP80[2]), d.Uncertainty,
			d.PrevShare, d.BudgetUtil, d.DemandCores/capacity, 0, stale)
	}
	h := float64(o.At.Hour()) + float64(o.At.Minute())/60
	event := 0.0
	if o.Event {
		event = 1
	}
	v = append(v, o.Cluster.FreeCores/capacity, float64(o.Cluster.Nodes)/1000, float64(o.Cluster.PendingNodes)/1000,
		o.Cluster.CostPerMinute, math.Sin(2*math.Pi*h/24), math.Cos(2*math.Pi*h/24), float64(o.At.Weekday())/6, event)
	v = append(v, b.calls...)
	o.Vector = v
}

func signedLog1p(x float64) float64 {
	if x < 0 {
		return -math.Log1p(-x)
	}
	return math.Log1p(x)
}
