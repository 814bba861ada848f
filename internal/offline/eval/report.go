package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// ReportVersion is the layout version of report.json. Field names are stable;
// a rename or a change of meaning bumps it.
const ReportVersion = 1

// Report is the outcome of Run: every run, and aggregates per scenario x
// policy. It is written as report.json as is.
type Report struct {
	Version   int            `json:"version"`
	Cluster   string         `json:"cluster"`
	Scenarios []ScenarioInfo `json:"scenarios"`
	Policies  []string       `json:"policies"` // in report order
	Seeds     int            `json:"seeds"`
	Tiers     []Tier         `json:"tiers"` // priority tiers, most important first
	// Runs is every scenario x policy x seed, in scenario, policy, seed order.
	Runs []RunResult `json:"runs"`
	// Aggregates is every scenario x policy, in scenario, policy order.
	Aggregates []Aggregate `json:"aggregates"`
	// Totals is every policy over the whole set, in policy order.
	Totals      []Total `json:"totals"`
	WallSeconds float64 `json:"wall_seconds"` // the whole evaluation
}

// Total is one policy over the whole evaluation set: each figure is the sum
// over the scenarios of the policy's mean over seeds (Aggregate), so that a
// scenario weighs as much as its figures do.
type Total struct {
	Policy           string  `json:"policy"`
	Scenarios        int     `json:"scenarios"`
	CostCoreHours    float64 `json:"cost_core_hours"`
	BreachAppMinutes float64 `json:"breach_app_minutes"`
	// BreachAppMinutesAtMax: of BreachAppMinutes, with max_replicas ready (Outcome).
	BreachAppMinutesAtMax float64 `json:"breach_app_minutes_at_max"`
	ScalingActions        float64 `json:"scaling_actions"`
	NodeChurn             float64 `json:"node_churn"`
	PendingPodHours       float64 `json:"pending_pod_hours"`
	// Request-weighted SLO and energy (issue 31): sums of the means, the
	// ratio of the sums.
	Requests        float64     `json:"requests"`
	BadRequests     float64     `json:"bad_requests"`
	BadRequestRatio float64     `json:"bad_request_ratio"`
	EnergyKWh       float64     `json:"energy_kwh"`
	Tiers           []TierTotal `json:"tiers"` // in Report.Tiers order
}

// TierTotal is one priority tier of a Total: sums over the scenarios of
// the tier's means over seeds.
type TierTotal struct {
	Tier                  int     `json:"tier"`
	CoreHours             float64 `json:"core_hours"`
	BreachAppMinutes      float64 `json:"breach_app_minutes"`
	BreachAppMinutesAtMax float64 `json:"breach_app_minutes_at_max"`
	PendingPodHours       float64 `json:"pending_pod_hours"`
	// Request-weighted SLO and energy (issue 31), as Total's.
	Requests        float64 `json:"requests"`
	BadRequests     float64 `json:"bad_requests"`
	BadRequestRatio float64 `json:"bad_request_ratio"`
	EnergyKWh       float64 `json:"energy_kwh"`
}

// ScenarioInfo names a scenario and the seed of its run 0.
type ScenarioInfo struct {
	Name       string  `json:"name"`
	Seed       uint64  `json:"seed"`        // run k uses Seed + k
	SimSeconds float64 `json:"sim_seconds"` // simulated time of each run
}

// Tier is a priority tier and its domains.
type Tier struct {
	Tier    int      `json:"tier"` // the domains' priority: 0 is P0
	Domains []string `json:"domains"`
}

// RunResult is one scenario x policy x seed. Every figure but WallSeconds is
// a pure function of the inputs; the package doc defines each.
type RunResult struct {
	Scenario  string `json:"scenario"`
	Policy    string `json:"policy"`
	SeedIndex int    `json:"seed_index"` // k: Seed is the scenario's seed + k
	Seed      uint64 `json:"seed"`
	Outcome
	Tiers       []TierOutcome `json:"tiers"`
	SimSeconds  float64       `json:"sim_seconds"`
	WallSeconds float64       `json:"wall_seconds"`

	series *Series // seed index 0 only
}

// Series is the run's per-minute sample, or nil: only seed index 0 of each
// scenario x policy is sampled.
func (r *RunResult) Series() *Series { return r.series }

// Outcome is a run's figures over the whole cluster.
type Outcome struct {
	CostCoreHours    float64 `json:"cost_core_hours"`    // provisioned node cores x hours
	Cost             float64 `json:"cost"`               // cost_core_hours x cost_per_core_hour
	SLOCompliance    float64 `json:"slo_compliance"`     // compliant share of app-ticks with traffic, [0, 1]
	BreachAppMinutes float64 `json:"breach_app_minutes"` // app-minutes over the SLO
	// BreachAppMinutesAtMax is the part of BreachAppMinutes spent with
	// max_replicas ready: breaches the ceiling bound, not the policy
	// (sim.Metrics).
	BreachAppMinutesAtMax float64     `json:"breach_app_minutes_at_max"`
	ScalingActions        int         `json:"scaling_actions"`   // replica target changes
	CascadeEvents         int         `json:"cascade_events"`    // app-ticks pushed into breach by a callee
	OverprovisionPct      float64     `json:"overprovision_pct"` // mean over ticks, percent of needed cores
	RewardMean            float64     `json:"reward_mean"`       // mean Commander reward total per tick
	Reward                RewardTerms `json:"reward_terms"`      // mean of each Commander reward term per tick
	PeakNodes             int         `json:"peak_nodes"`        // most ready and provisioning nodes at once
	PendingPodHours       float64     `json:"pending_pod_hours"` // replica-hours waiting for a node

	NodeProvisions   int     `json:"node_provisions"`     // nodes the provisioner started
	NodeRemovals     int     `json:"node_removals"`       // idle nodes scaled down
	NodeChurn        int     `json:"node_churn"`          // node_provisions + node_removals
	NodeChurnPerHour float64 `json:"node_churn_per_hour"` // node_churn / simulated hours

	// The provisioner under the run's burst of node requests (sim.Metrics):
	// failed scale-ups that held requests back (a node-group backoff, an
	// offering marked unavailable), the longest wait of such a stall,
	// minutes, the most nodes requested within two minutes, and the failed
	// instance launches. Stalls and failures are 0 with the default token
	// bucket, which never fails.
	ProvisionerStalls   int     `json:"provisioner_stalls"`
	LongestStallMinutes float64 `json:"longest_stall_minutes"`
	MaxNodeRequests2m   int     `json:"max_node_requests_2m"`
	LaunchFailures      int     `json:"launch_failures"`

	ScaleOut           sim.ScaleOut `json:"scale_out"`           // correlated scale-out episodes (sim.ScaleOut)
	ScaleOutAll        sim.ScaleOut `json:"scale_out_all"`       // every scale-out episode
	MaxScaleUps30s     int          `json:"max_scale_ups_30s"`   // most apps whose target rose within 30 s
	PriorityInversions int          `json:"priority_inversions"` // replicas scheduled while a more important tier's waited for a node
	P3WhileP0Waits     int          `json:"p3_while_p0_waits"`   // of them, replicas of priority >= 3 while a priority-0 one waited
	Preemptions        int          `json:"preemptions"`         // replicas preempted by the scheduler (priority_classes)
	AvgCPUUtilisation  float64      `json:"avg_cpu_utilisation"` // busy core-hours / cost_core_hours, [0, 1]
	PeakPods           int          `json:"peak_pods"`           // most ready, starting and pending replicas at once
	FloorCoreHours     float64      `json:"floor_core_hours"`    // min_replicas x cpu_per_replica x hours, summed over apps

	// Request-weighted SLO and energy (issue 31; sim.Metrics).
	Requests        float64 `json:"requests"`          // requests that arrived at the apps
	BadRequests     float64 `json:"bad_requests"`      // of them, failed or over their domain's p99 target
	BadRequestRatio float64 `json:"bad_request_ratio"` // bad_requests / requests
	EnergyKWh       float64 `json:"energy_kwh"`        // nodes' energy under the cluster's power model
}

// RewardTerms are the means over ticks of the Commander reward's total and of
// its terms that every policy can be scored on (the others are 0).
type RewardTerms struct {
	Total       float64 `json:"total"`
	Adherence   float64 `json:"adherence"`
	Degradation float64 `json:"degradation"`
	Cost        float64 `json:"cost"`
	Energy      float64 `json:"energy"` // weighed 0 by default (reward.CommanderWeights)
}

// TierOutcome is a run's figures over one priority tier's domains.
type TierOutcome struct {
	Tier                  int      `json:"tier"`
	Domains               []string `json:"domains"`
	CoreHours             float64  `json:"core_hours"` // cores of scheduled replicas x hours
	SLOCompliance         float64  `json:"slo_compliance"`
	BreachAppMinutes      float64  `json:"breach_app_minutes"`
	BreachAppMinutesAtMax float64  `json:"breach_app_minutes_at_max"`
	ScalingActions        int      `json:"scaling_actions"`
	CascadeEvents         int      `json:"cascade_events"`
	OverprovisionPct      float64  `json:"overprovision_pct"`

	PendingPodHours float64      `json:"pending_pod_hours"`
	FloorCoreHours  float64      `json:"floor_core_hours"`
	ScaleOut        sim.ScaleOut `json:"scale_out"`
	ScaleOutAll     sim.ScaleOut `json:"scale_out_all"`

	// Request-weighted SLO and energy (issue 31; sim.TierMetrics).
	Requests        float64 `json:"requests"`
	BadRequests     float64 `json:"bad_requests"`
	BadRequestRatio float64 `json:"bad_request_ratio"`
	EnergyKWh       float64 `json:"energy_kwh"`
}

// Stat is the mean, min and max of a figure over seeds.
type Stat struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// ScaleOutStat summarises scale-out episodes over seeds: Episodes over
// every seed, the percentiles over the Seeds seeds that had an episode (a
// seed without one has no scale-out time; all 0 when none had).
type ScaleOutStat struct {
	Seeds      int  `json:"seeds"`
	Episodes   Stat `json:"episodes"`
	P50Seconds Stat `json:"p50_seconds"`
	P95Seconds Stat `json:"p95_seconds"`
}

// Aggregate summarises the seeds of one scenario x policy.
type Aggregate struct {
	Scenario              string `json:"scenario"`
	Policy                string `json:"policy"`
	Seeds                 int    `json:"seeds"`
	CostCoreHours         Stat   `json:"cost_core_hours"`
	Cost                  Stat   `json:"cost"`
	SLOCompliance         Stat   `json:"slo_compliance"`
	BreachAppMinutes      Stat   `json:"breach_app_minutes"`
	BreachAppMinutesAtMax Stat   `json:"breach_app_minutes_at_max"`
	ScalingActions        Stat   `json:"scaling_actions"`
	CascadeEvents         Stat   `json:"cascade_events"`
	OverprovisionPct      Stat   `json:"overprovision_pct"`
	RewardMean            Stat   `json:"reward_mean"`
	PeakNodes             Stat   `json:"peak_nodes"`
	PendingPodHours       Stat   `json:"pending_pod_hours"`

	NodeChurn        Stat `json:"node_churn"`
	NodeChurnPerHour Stat `json:"node_churn_per_hour"`
	// ProvisionerStalls.Mean x Seeds is the stalls over every seed;
	// StalledRuns the runs with at least one.
	ProvisionerStalls   Stat         `json:"provisioner_stalls"`
	StalledRuns         int          `json:"stalled_runs"`
	LongestStallMinutes Stat         `json:"longest_stall_minutes"`
	MaxNodeRequests2m   Stat         `json:"max_node_requests_2m"`
	ScaleOut            ScaleOutStat `json:"scale_out"`
	ScaleOutAll         ScaleOutStat `json:"scale_out_all"`
	MaxScaleUps30s      Stat         `json:"max_scale_ups_30s"`
	PriorityInversions  Stat         `json:"priority_inversions"`
	P3WhileP0Waits      Stat         `json:"p3_while_p0_waits"`
	Preemptions         Stat         `json:"preemptions"`
	AvgCPUUtilisation   Stat         `json:"avg_cpu_utilisation"`
	PeakPods            Stat         `json:"peak_pods"`
	FloorCoreHours      Stat         `json:"floor_core_hours"`
	// Request-weighted SLO and energy (issue 31).
	Requests        Stat `json:"requests"`
	BadRequests     Stat `json:"bad_requests"`
	BadRequestRatio Stat `json:"bad_request_ratio"`
	EnergyKWh       Stat `json:"energy_kwh"`
	// GapCaptured is the share of the hpa-to-oracle cost gap this policy
	// captures, (hpa - policy) / (hpa - oracle) on the means of
	// cost_core_hours: 1 for the oracle, 0 for hpa, above 1 cheaper than the
	// oracle, below 0 dearer than hpa. It is null unless both hpa and oracle
	// ran on the scenario and the oracle is at least 1% cheaper than hpa (a
	// smaller gap makes the ratio noise).
	GapCaptured *float64 `json:"gap_captured"`

	SimSeconds  Stat            `json:"sim_seconds"`
	WallSeconds Stat            `json:"wall_seconds"`
	Tiers       []TierAggregate `json:"tiers"`
}

// minGap is the least hpa-to-oracle cost gap, as a share of hpa's cost,
// over which GapCaptured is given.
const minGap = 0.01

// TierAggregate summarises one tier over the seeds of one scenario x policy.
type TierAggregate struct {
	Tier                  int      `json:"tier"`
	Domains               []string `json:"domains"`
	CoreHours             Stat     `json:"core_hours"`
	SLOCompliance         Stat     `json:"slo_compliance"`
	BreachAppMinutes      Stat     `json:"breach_app_minutes"`
	BreachAppMinutesAtMax Stat     `json:"breach_app_minutes_at_max"`
	ScalingActions        Stat     `json:"scaling_actions"`
	CascadeEvents         Stat     `json:"cascade_events"`
	OverprovisionPct      Stat     `json:"overprovision_pct"`

	PendingPodHours Stat         `json:"pending_pod_hours"`
	FloorCoreHours  Stat         `json:"floor_core_hours"`
	ScaleOut        ScaleOutStat `json:"scale_out"`
	ScaleOutAll     ScaleOutStat `json:"scale_out_all"`

	// Request-weighted SLO and energy (issue 31).
	Requests        Stat `json:"requests"`
	BadRequests     Stat `json:"bad_requests"`
	BadRequestRatio Stat `json:"bad_request_ratio"`
	EnergyKWh       Stat `json:"energy_kwh"`
}

// Series is one run's telemetry sampled per minute: each value is the mean
// over the minute's ticks, so BreachedApps sums to the run's breach app-minutes.
type Series struct {
	Minutes int            `json:"minutes"`
	Cluster ClusterSeries  `json:"cluster"`
	Domains []DomainSeries `json:"domains"` // in config order
}

// ClusterSeries is the node pool's per-minute sample; slices have Minutes
// entries.
type ClusterSeries struct {
	Nodes        []float64 `json:"nodes"`        // ready nodes
	Provisioning []float64 `json:"provisioning"` // nodes started, not yet ready
	Queued       []float64 `json:"queued"`       // node requests waiting for the provisioner
	PendingPods  []float64 `json:"pending_pods"` // replicas waiting for a node
}

// DomainSeries is one domain's per-minute sample; slices have Minutes entries.
type DomainSeries struct {
	Name         string    `json:"name"`
	RPS          []float64 `json:"rps"`           // arrivals into the domain's apps, 1/s
	Replicas     []float64 `json:"replicas"`      // ready, starting and pending replicas
	Ready        []float64 `json:"ready"`         // ready replicas
	BreachedApps []float64 `json:"breached_apps"` // apps over the SLO
	Pending      []float64 `json:"pending"`       // replicas waiting for a node
}

func newSeries(cfg *domains.Config, minutes int) *Series {
	s := &Series{Minutes: minutes, Domains: make([]DomainSeries, len(cfg.Domains))}
	s.Cluster = ClusterSeries{Nodes: make([]float64, minutes), Provisioning: make([]float64, minutes),
		Queued: make([]float64, minutes), PendingPods: make([]float64, minutes)}
	for di, d := range cfg.Domains {
		s.Domains[di] = DomainSeries{Name: d.Name, RPS: make([]float64, minutes), Replicas: make([]float64, minutes),
			Ready: make([]float64, minutes), BreachedApps: make([]float64, minutes), Pending: make([]float64, minutes)}
	}
	return s
}

func newReport(o *Options, runs []RunResult, wall float64) *Report {
	r := &Report{Version: ReportVersion, Cluster: o.Config.Cluster.Name, Policies: o.Policies, Seeds: o.Seeds,
		Runs: runs, WallSeconds: wall}
	tiers, _ := tiersOf(o.Config)
	for _, t := range tiers {
		tier := Tier{Tier: t.priority}
		for _, di := range t.domains {
			tier.Domains = append(tier.Domains, o.Config.Domains[di].Name)
		}
		r.Tiers = append(r.Tiers, tier)
	}
	n := len(o.Policies) * o.Seeds
	for si, sc := range o.Scenarios {
		info := ScenarioInfo{Name: sc.Name, Seed: sc.Seed}
		if n > 0 {
			info.SimSeconds = runs[si*n].SimSeconds
		}
		r.Scenarios = append(r.Scenarios, info)
		for pi := range o.Policies {
			first := si*n + pi*o.Seeds
			r.Aggregates = append(r.Aggregates, aggregate(runs[first:first+o.Seeds]))
		}
	}
	for _, sc := range r.Scenarios {
		hpa, oracle := r.Aggregate(sc.Name, refHPA), r.Aggregate(sc.Name, refOracle)
		for i := range r.Aggregates {
			if a := &r.Aggregates[i]; a.Scenario == sc.Name {
				a.GapCaptured = gapCaptured(a, hpa, oracle)
			}
		}
	}
	for _, pol := range r.Policies {
		r.Totals = append(r.Totals, r.total(pol))
	}
	return r
}

// total sums policy's aggregates over the scenarios (Total).
func (r *Report) total(policy string) Total {
	t := Total{Policy: policy, Tiers: make([]TierTotal, len(r.Tiers))}
	for i, tier := range r.Tiers {
		t.Tiers[i].Tier = tier.Tier
	}
	for i := range r.Aggregates {
		a := &r.Aggregates[i]
		if a.Policy != policy {
			continue
		}
		t.Scenarios++
		t.CostCoreHours += a.CostCoreHours.Mean
		t.BreachAppMinutes += a.BreachAppMinutes.Mean
		t.BreachAppMinutesAtMax += a.BreachAppMinutesAtMax.Mean
		t.ScalingActions += a.ScalingActions.Mean
		t.NodeChurn += a.NodeChurn.Mean
		t.PendingPodHours += a.PendingPodHours.Mean
		t.Requests += a.Requests.Mean
		t.BadRequests += a.BadRequests.Mean
		t.EnergyKWh += a.EnergyKWh.Mean
		for k := range a.Tiers {
			if k < len(t.Tiers) && a.Tiers[k].Tier == t.Tiers[k].Tier {
				t.Tiers[k].Requests += a.Tiers[k].Requests.Mean
				t.Tiers[k].BadRequests += a.Tiers[k].BadRequests.Mean
				t.Tiers[k].EnergyKWh += a.Tiers[k].EnergyKWh.Mean
				t.Tiers[k].CoreHours += a.Tiers[k].CoreHours.Mean
				t.Tiers[k].BreachAppMinutes += a.Tiers[k].BreachAppMinutes.Mean
				t.Tiers[k].BreachAppMinutesAtMax += a.Tiers[k].BreachAppMinutesAtMax.Mean
				t.Tiers[k].PendingPodHours += a.Tiers[k].PendingPodHours.Mean
			}
		}
	}
	t.BadRequestRatio = ratioOf(t.BadRequests, t.Requests)
	for k := range t.Tiers {
		t.Tiers[k].BadRequestRatio = ratioOf(t.Tiers[k].BadRequests, t.Tiers[k].Requests)
	}
	return t
}

// ratioOf is num / den, 0 when den is 0.
func ratioOf(num, den float64) float64 {
	if den <= 0 {
		return 0
	}
	return num / den
}

// Total is policy's Total, or nil if it did not run.
func (r *Report) Total(policy string) *Total {
	for i := range r.Totals {
		if r.Totals[i].Policy == policy {
			return &r.Totals[i]
		}
	}
	return nil
}

// gapCaptured is a's share of the hpa-to-oracle cost gap (Aggregate.GapCaptured),
// or nil.
func gapCaptured(a, hpa, oracle *Aggregate) *float64 {
	if hpa == nil || oracle == nil {
		return nil
	}
	gap := hpa.CostCoreHours.Mean - oracle.CostCoreHours.Mean
	if !(gap >= minGap*hpa.CostCoreHours.Mean) || gap <= 0 {
		return nil
	}
	g := (hpa.CostCoreHours.Mean - a.CostCoreHours.Mean) / gap
	return &g
}

// scaleOutStat summarises the scale-out episodes f picks out of the runs rs.
func scaleOutStat(rs []RunResult, f func(*RunResult) *sim.ScaleOut) ScaleOutStat {
	var out ScaleOutStat
	out.Episodes = statOf(rs, func(r *RunResult) float64 { return float64(f(r).Episodes) })
	var with []RunResult
	for i := range rs {
		if f(&rs[i]).Episodes > 0 {
			with = append(with, rs[i])
		}
	}
	out.Seeds = len(with)
	if len(with) > 0 {
		out.P50Seconds = statOf(with, func(r *RunResult) float64 { return f(r).P50Seconds })
		out.P95Seconds = statOf(with, func(r *RunResult) float64 { return f(r).P95Seconds })
	}
	return out
}

// statOf is the mean, min and max of f over rs (len(rs) > 0).
func statOf(rs []RunResult, f func(*RunResult) float64) Stat {
	s := Stat{Min: math.Inf(1), Max: math.Inf(-1)}
	for i := range rs {
		v := f(&rs[i])
		s.Mean += v
		s.Min, s.Max = math.Min(s.Min, v), math.Max(s.Max, v)
	}
	s.Mean /= float64(len(rs))
	return s
}

// aggregate summarises the runs of one scenario x policy, in seed order.
func aggregate(rs []RunResult) Aggregate {
	st := func(f func(*RunResult) float64) Stat { return statOf(rs, f) }
	a := Aggregate{
		Scenario:              rs[0].Scenario,
		Policy:                rs[0].Policy,
		Seeds:                 len(rs),
		CostCoreHours:         st(func(r *RunResult) float64 { return r.CostCoreHours }),
		Cost:                  st(func(r *RunResult) float64 { return r.Cost }),
		SLOCompliance:         st(func(r *RunResult) float64 { return r.SLOCompliance }),
		BreachAppMinutes:      st(func(r *RunResult) float64 { return r.BreachAppMinutes }),
		BreachAppMinutesAtMax: st(func(r *RunResult) float64 { return r.BreachAppMinutesAtMax }),
		ScalingActions:        st(func(r *RunResult) float64 { return float64(r.ScalingActions) }),
		CascadeEvents:         st(func(r *RunResult) float64 { return float64(r.CascadeEvents) }),
		OverprovisionPct:      st(func(r *RunResult) float64 { return r.OverprovisionPct }),
		RewardMean:            st(func(r *RunResult) float64 { return r.RewardMean }),
		PeakNodes:             st(func(r *RunResult) float64 { return float64(r.PeakNodes) }),
		PendingPodHours:       st(func(r *RunResult) float64 { return r.PendingPodHours }),

		NodeChurn:           st(func(r *RunResult) float64 { return float64(r.NodeChurn) }),
		NodeChurnPerHour:    st(func(r *RunResult) float64 { return r.NodeChurnPerHour }),
		ProvisionerStalls:   st(func(r *RunResult) float64 { return float64(r.ProvisionerStalls) }),
		LongestStallMinutes: st(func(r *RunResult) float64 { return r.LongestStallMinutes }),
		MaxNodeRequests2m:   st(func(r *RunResult) float64 { return float64(r.MaxNodeRequests2m) }),
		ScaleOut:            scaleOutStat(rs, func(r *RunResult) *sim.ScaleOut { return &r.ScaleOut }),
		ScaleOutAll:         scaleOutStat(rs, func(r *RunResult) *sim.ScaleOut { return &r.ScaleOutAll }),
		MaxScaleUps30s:      st(func(r *RunResult) float64 { return float64(r.MaxScaleUps30s) }),
		PriorityInversions:  st(func(r *RunResult) float64 { return float64(r.PriorityInversions) }),
		P3WhileP0Waits:      st(func(r *RunResult) float64 { return float64(r.P3WhileP0Waits) }),
		Preemptions:         st(func(r *RunResult) float64 { return float64(r.Preemptions) }),
		AvgCPUUtilisation:   st(func(r *RunResult) float64 { return r.AvgCPUUtilisation }),
		PeakPods:            st(func(r *RunResult) float64 { return float64(r.PeakPods) }),
		FloorCoreHours:      st(func(r *RunResult) float64 { return r.FloorCoreHours }),
		Requests:            st(func(r *RunResult) float64 { return r.Requests }),
		BadRequests:         st(func(r *RunResult) float64 { return r.BadRequests }),
		BadRequestRatio:     st(func(r *RunResult) float64 { return r.BadRequestRatio }),
		EnergyKWh:           st(func(r *RunResult) float64 { return r.EnergyKWh }),

		SimSeconds:  st(func(r *RunResult) float64 { return r.SimSeconds }),
		WallSeconds: st(func(r *RunResult) float64 { return r.WallSeconds }),
	}
	for i := range rs {
		if rs[i].ProvisionerStalls > 0 {
			a.StalledRuns++
		}
	}
	for ti, t := range rs[0].Tiers {
		tst := func(f func(*TierOutcome) float64) Stat {
			return st(func(r *RunResult) float64 { return f(&r.Tiers[ti]) })
		}
		a.Tiers = append(a.Tiers, TierAggregate{
			Tier:                  t.Tier,
			Domains:               t.Domains,
			CoreHours:             tst(func(t *TierOutcome) float64 { return t.CoreHours }),
			SLOCompliance:         tst(func(t *TierOutcome) float64 { return t.SLOCompliance }),
			BreachAppMinutes:      tst(func(t *TierOutcome) float64 { return t.BreachAppMinutes }),
			BreachAppMinutesAtMax: tst(func(t *TierOutcome) float64 { return t.BreachAppMinutesAtMax }),
			ScalingActions:        tst(func(t *TierOutcome) float64 { return float64(t.ScalingActions) }),
			CascadeEvents:         tst(func(t *TierOutcome) float64 { return float64(t.CascadeEvents) }),
			OverprovisionPct:      tst(func(t *TierOutcome) float64 { return t.OverprovisionPct }),
			PendingPodHours:       tst(func(t *TierOutcome) float64 { return t.PendingPodHours }),
			FloorCoreHours:        tst(func(t *TierOutcome) float64 { return t.FloorCoreHours }),
			ScaleOut:              scaleOutStat(rs, func(r *RunResult) *sim.ScaleOut { return &r.Tiers[ti].ScaleOut }),
			ScaleOutAll:           scaleOutStat(rs, func(r *RunResult) *sim.ScaleOut { return &r.Tiers[ti].ScaleOutAll }),
			Requests:              tst(func(t *TierOutcome) float64 { return t.Requests }),
			BadRequests:           tst(func(t *TierOutcome) float64 { return t.BadRequests }),
			BadRequestRatio:       tst(func(t *TierOutcome) float64 { return t.BadRequestRatio }),
			EnergyKWh:             tst(func(t *TierOutcome) float64 { return t.EnergyKWh }),
		})
	}
	return a
}

// Aggregate is the summary of scenario x policy, or nil when it did not run.
func (r *Report) Aggregate(scenario, policy string) *Aggregate {
	for i := range r.Aggregates {
		if a := &r.Aggregates[i]; a.Scenario == scenario && a.Policy == policy {
			return a
		}
	}
	return nil
}

// Run is the result of scenario x policy at seed index k, or nil.
func (r *Report) Run(scenario, policy string, k int) *RunResult {
	for i := range r.Runs {
		if x := &r.Runs[i]; x.Scenario == scenario && x.Policy == policy && x.SeedIndex == k {
			return x
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON (report.json).
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// Write writes report.json, report.md, series.csv and the plots into dir,
// creating it, and returns the paths written.
func (r *Report) Write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create report directory: %w", err)
	}
	var paths []string
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"report.json", r.WriteJSON},
		{"report.md", r.WriteMarkdown},
		{"series.csv", r.WriteSeries},
	} {
		p := filepath.Join(dir, f.name)
		if err := writeFile(p, f.write); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	plots, err := r.WritePlots(dir)
	return append(paths, plots...), err
}

// writeFile creates path and writes it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
