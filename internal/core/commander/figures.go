package commander

import "math"

// DomainFigures is one domain at a Commander tick, as the metrics export
// it. Cores unless stated.
type DomainFigures struct {
	Name   string
	Share  float64 // the published share of the pool, [0, 1]
	Budget float64 // the directive's Cores: Share x the pool's capacity
	// Demand and Used are the last report's DemandCores (the cores its
	// apps would request at the target utilisation, without a budget) and
	// CoresUsed (requested by its scheduled pods); 0 before its first report.
	Demand, Used float64
	Urgency      float64 // the published urgency, [0, 1]
	// ForecastP50 and ForecastP80 are the demand forecast at +15 min, the
	// capacity plan's horizon (ForecastCores of the median and of the p80
	// the Forecast policy sizes for); NaN while unknown.
	ForecastP50, ForecastP80 float64
	Stale                    bool // no report within two Commander ticks
}

// forecastHorizon is the index of the +15 min horizon in DomainObs's
// forecasts, the one PlanCapacity and the Forecast policy plan for.
const forecastHorizon = 1

// ForecastCores converts a forecast request rate rps (1/s) into cores: the
// domain's demand cores now scaled by rps over its rate now,
//
//	cores = DemandCores x rps / RPS
//
// that is, with the cores per request of the last report. NaN when the
// domain has no rate now (no report, or no traffic) or rps is not a rate.
func (d *DomainObs) ForecastCores(rps float64) float64 {
	if !(d.RPS > 0) || !(rps >= 0) || math.IsInf(rps, 0) {
		return math.NaN()
	}
	return d.DemandCores * rps / d.RPS
}

// figures fills dst with each domain's figures for a tick that published
// shares with urgency a over a pool of capacity cores, and returns it.
func figures(dst []DomainFigures, o *Observation, a *Action, capacity float64) []DomainFigures {
	dst = dst[:0]
	for i := range o.Domains {
		d := &o.Domains[i]
		dst = append(dst, DomainFigures{
			Name: d.Name, Share: a.Shares[i], Budget: a.Shares[i] * capacity, Demand: d.DemandCores, Used: d.CoresUsed,
			Urgency: a.Urgency[i], Stale: d.Stale,
			ForecastP50: d.ForecastCores(d.ForecastP50[forecastHorizon]),
			ForecastP80: d.ForecastCores(d.ForecastP80[forecastHorizon]),
		})
	}
	return dst
}
