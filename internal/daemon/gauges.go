package daemon

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// CommanderGauges are the leading Commander's figures per domain (label
// domain) and of the pool, set every tick; a Commander that stops leading
// removes them, so only the leader exports them.
type CommanderGauges struct {
	Budget, Demand, Used, Share, Urgency, Stale *prometheus.GaugeVec // per domain
	Forecast                                    *prometheus.GaugeVec // per domain and quantile
	Capacity, CapacityTarget                    *prometheus.GaugeVec // no labels
}

func newCommanderGauges() *CommanderGauges {
	g := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "regiment_commander_" + name, Help: help}, labels)
	}
	return &CommanderGauges{
		Budget: g("domain_budget_cores", "The domain's budget, cores: its share x the pool's capacity (the directive's cores).", "domain"),
		Demand: g("domain_demand_cores", "The cores the domain's apps would request at the target utilisation without a budget, as last reported.", "domain"),
		Used:   g("domain_used_cores", "The cores the domain's scheduled pods request, as last reported.", "domain"),
		Share:  g("domain_share", "The domain's share of the pool, 0 to 1.", "domain"),
		Urgency: g("domain_urgency", "The urgency the Commander published for the domain, 0 to 1.",
			"domain"),
		Stale: g("domain_stale", "1 while the domain has not reported within two Commander ticks.", "domain"),
		Forecast: g("domain_forecast_cores", "The domain's demand forecast at +15 min, cores (demand x forecast rate / rate now), "+
			"by quantile (0.5: the median the capacity plan follows; 0.8: what the forecast policy sizes for); absent while unknown.",
			"domain", "quantile"),
		Capacity: g("pool_capacity_cores", "The pool the shares divide, cores: capacity_cores, or the pool's nodes when fewer."),
		CapacityTarget: g("capacity_target_cores",
			"The capacity plan asked of the pool, cores (the nodes' cores for the next 15 min); absent without a plan."),
	}
}

func (g *CommanderGauges) collectors() []prometheus.Collector {
	return []prometheus.Collector{g.Budget, g.Demand, g.Used, g.Share, g.Urgency, g.Stale, g.Forecast, g.Capacity, g.CapacityTarget}
}

// set exports d's figures.
func (g *CommanderGauges) set(d commander.Decision) {
	for _, f := range d.Domains {
		g.Budget.WithLabelValues(f.Name).Set(f.Budget)
		g.Demand.WithLabelValues(f.Name).Set(f.Demand)
		g.Used.WithLabelValues(f.Name).Set(f.Used)
		g.Share.WithLabelValues(f.Name).Set(f.Share)
		g.Urgency.WithLabelValues(f.Name).Set(f.Urgency)
		g.Stale.WithLabelValues(f.Name).Set(boolGauge(f.Stale))
		setOrDelete(g.Forecast, f.ForecastP50, f.Name, "0.5")
		setOrDelete(g.Forecast, f.ForecastP80, f.Name, "0.8")
	}
	g.Capacity.WithLabelValues().Set(d.CapacityCores)
	if d.CapacityTargetCores > 0 {
		g.CapacityTarget.WithLabelValues().Set(d.CapacityTargetCores)
	} else {
		g.CapacityTarget.Reset()
	}
}

// reset removes every series: the Commander no longer leads.
func (g *CommanderGauges) reset() {
	for _, c := range g.collectors() {
		c.(*prometheus.GaugeVec).Reset()
	}
}

// SoldierGauges are a Soldier's figures for its domain (label domain), set
// every tick: its p99 against its SLO, its apps at risk, breaching,
// breaching with max_replicas ready and wanting more than it, the rollback
// ladder's rung.
type SoldierGauges struct {
	P99, SLO, AtRisk, Breaching, AtMax, Limited, Rung *prometheus.GaugeVec
}

func newSoldierGauges() *SoldierGauges {
	g := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "regiment_soldier_" + name, Help: help}, []string{"domain"})
	}
	return &SoldierGauges{
		P99: g("p99_seconds", "The domain's merged p99 response time, seconds, as reported to the Commander (what the ladder compares with the SLO)."),
		SLO: g("slo_p99_seconds", "The domain's p99 objective, seconds; absent without one."),
		AtRisk: g("apps_at_risk", "The domain's apps at risk now: p99 over 80% of the SLO or errors over 1% "+
			"(those breaching included)."),
		Breaching: g("apps_breaching", "The domain's apps over their SLO now: p99 over the SLO or errors over the error budget."),
		AtMax: g("apps_breaching_at_max", "The domain's apps over their SLO now with their max_replicas ready "+
			"(those breaching that only a higher max_replicas serves)."),
		Limited: g("apps_limited_by_max", "The domain's apps whose sizing wants more replicas than their max_replicas now, "+
			"breaching or not yet (the HPA's ScalingLimited)."),
		Rung: g("ladder_rung", "The rollback ladder's rung: 0 none, 1 alert, 2 freeze, 3 revert (the baseline acts)."),
	}
}

func (g *SoldierGauges) collectors() []prometheus.Collector {
	return []prometheus.Collector{g.P99, g.SLO, g.AtRisk, g.Breaching, g.AtMax, g.Limited, g.Rung}
}

// set exports the figures of a tick of domain.
func (g *SoldierGauges) set(domain string, res soldier.TickResult) {
	g.P99.WithLabelValues(domain).Set(res.Report.P99Seconds)
	if res.SLOSeconds > 0 {
		g.SLO.WithLabelValues(domain).Set(res.SLOSeconds)
	} else {
		g.SLO.DeleteLabelValues(domain)
	}
	g.AtRisk.WithLabelValues(domain).Set(float64(res.AppsAtRisk))
	g.Breaching.WithLabelValues(domain).Set(float64(res.AppsBreaching))
	g.AtMax.WithLabelValues(domain).Set(float64(len(res.BreachingAtMax)))
	g.Limited.WithLabelValues(domain).Set(float64(len(res.LimitedByMax)))
	g.Rung.WithLabelValues(domain).Set(float64(res.Rung))
}

// setOrDelete sets g's series of labels to v, or removes it when v is NaN.
func setOrDelete(g *prometheus.GaugeVec, v float64, labels ...string) {
	if math.IsNaN(v) {
		g.DeleteLabelValues(labels...)
		return
	}
	g.WithLabelValues(labels...).Set(v)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
