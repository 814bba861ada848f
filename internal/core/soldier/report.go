package soldier

import (
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/stats"
	"github.com/regimentd/regiment/wire"
)

// report is the tick's DomainReport, the one builder of it: the domain's
// telemetry in s.obs (addApps), its CPU utilisation p75 (near the last
// tick's: stats.NearKth), memory utilisation p75 and restart rate, the RPS
// p95 over the last 15 minutes of ticks (a sorted window), the demand, mode
// and fallback of the tick's decision, and the budget of the directive in
// force.
func (s *Soldier) report(now time.Time, d wire.Directive, valid bool, demand float64, mode domains.Mode, fallback bool) wire.DomainReport {
	r := wire.DomainReport{
		Version: wire.Version, Cluster: s.cfg.Cluster, Domain: s.cfg.Domain, Seq: s.seq, SentAt: now,
		P99Seconds: s.obs.P99, ErrorRate: s.obs.ErrorRate, Mode: string(mode), Fallback: fallback,
		DemandCores: demand,
	}
	s.scratch = addApps(&r, s.cfg.Apps, &s.obs, s.scratch[:0])
	r.CPUUtilP75 = s.utilP75.Percentile(s.scratch, 0.75) // stats.Percentile(s.scratch, 0.75)
	r.MemUtilP75, r.RestartRate = s.memAndRestarts()
	if len(s.rpsHist) == cap(s.rpsHist) {
		s.rpsSorted = stats.DeleteSorted(s.rpsSorted, s.rpsHist[0])
		copy(s.rpsHist, s.rpsHist[1:])
		s.rpsHist = s.rpsHist[:len(s.rpsHist)-1]
	}
	s.rpsHist = append(s.rpsHist, r.RPS)
	s.rpsSorted = stats.InsertSorted(s.rpsSorted, r.RPS)
	r.RPSP95 = s.rpsSorted[stats.NearestRank(len(s.rpsSorted), 0.95)] // stats.Percentile(rpsHist, 0.95)
	if valid {
		r.BudgetCores = d.Cores
		r.DirectiveTerm, r.DirectiveSeq = d.Term, d.Seq
		if d.Cores > 0 {
			r.BudgetUtilisation = r.CoresUsed / d.Cores
		}
	}
	return r
}

// memAndRestarts is the report's memory utilisation p75 (stats.Percentile of the
// apps' at 0.75) and its restart rate (the apps' sum, in order), in one
// pass: when every app's memory utilisation has the same bits (as where
// nothing reports memory, all 0), that is the percentile, and nothing is
// gathered or selected.
func (s *Soldier) memAndRestarts() (memP75, restartRate float64) {
	apps := s.obs.Apps
	if len(apps) == 0 {
		return 0, 0
	}
	first, same := math.Float64bits(apps[0].MemUtil), true
	for i := range apps {
		restartRate += apps[i].RestartRate
		same = same && math.Float64bits(apps[i].MemUtil) == first
	}
	if same {
		return apps[0].MemUtil, restartRate
	}
	s.scratch = s.scratch[:0]
	for i := range apps {
		s.scratch = append(s.scratch, apps[i].MemUtil)
	}
	return stats.Percentile(s.scratch, 0.75), restartRate
}

// addApps adds the apps' telemetry in obs into r: request rate, live,
// starting and pending pods, cores used (ready and starting replicas x the
// app's CPU); it appends each app's CPU utilisation to util and returns it.
func addApps(r *wire.DomainReport, apps []App, obs *Observation, util []float64) []float64 {
	for i := range obs.Apps {
		o, a := &obs.Apps[i], &apps[i]
		r.RPS += o.RPS
		r.LivePods += int(o.Ready)
		r.StartingPods += int(o.Starting)
		r.PendingPods += int(o.Pending)
		r.CoresUsed += float64(o.Ready+o.Starting) * a.CPU
		util = append(util, o.CPUUtil)
	}
	return util
}
