package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/regimentd/regiment/internal/core/domains"
)

// validateConfig checks cfg, the translated config with defaults applied,
// against the rules of package domains, reporting each problem at its source
// in h.
func validateConfig(cfg *domains.Config, h *configHCL, ds *Diagnostics) {
	c := checker{ds}
	validateReward(&h.Reward, c)
	validateCalendar(cfg, &h.Calendar, c)
	if h.Cluster.Def != (hcl.Range{}) {
		cl, hc := &cfg.Cluster, &h.Cluster
		c.name(hc.Name, "cluster")
		c.required(&hc.CapacityCores.attr, "capacity_cores = 12000")
		c.number(&hc.CapacityCores, cl.CapacityCores, cores)
		c.number(&hc.NodeCores, cl.NodeCores, cores)
		if hc.NodeCores.ok() && hc.CapacityCores.ok() && cores.contains(cl.NodeCores) && cores.contains(cl.CapacityCores) && cl.NodeCores > cl.CapacityCores {
			ds.add(hc.NodeCores.Range, "Invalid node_cores", "a node of %g cores does not fit in the pool of capacity_cores = %g", cl.NodeCores, cl.CapacityCores)
		}
		if !hc.NodeCores.Bad && hc.CapacityCores.ok() && cores.contains(cl.NodeCores) && cores.contains(cl.CapacityCores) && cl.CapacityCores/cl.NodeCores > domains.MaxNodes {
			r := hc.NodeCores.Range
			if !hc.NodeCores.Set {
				r = hc.CapacityCores.Range
			}
			ds.add(r, "Invalid node_cores", "a pool of capacity_cores = %g in nodes of %g cores is %s nodes; it may have at most %d (use larger nodes)", cl.CapacityCores, cl.NodeCores, formatNumber(math.Floor(cl.CapacityCores/cl.NodeCores)), domains.MaxNodes)
		}
		c.duration(&hc.NodeProvisionTime, cl.NodeProvisionTime, startupTimes.loOpened())
		c.number(&hc.ProvisionerRate, cl.ProvisionerRate, provisionerRates)
		c.integer(&hc.ProvisionerBurst, cl.ProvisionerBurst, nodeCounts)
		c.duration(&hc.NodeIdleTimeout, cl.NodeIdleTimeout, positive)
		c.number(&hc.CostPerCoreHour, cl.CostPerCoreHour, weights)
		c.duration(&hc.TelemetryLag, cl.TelemetryLag, telemetryLags)
		// Power model (issue 31).
		c.number(&hc.NodeIdleWatts, cl.NodeIdleWatts, watts)
		c.number(&hc.BusyCoreWatts, cl.BusyCoreWatts, watts)
		validateProvisioner(cl, hc, c)
		// Scheduling (issue 31, item 2).
		c.number(&hc.PackingLoss, cl.PackingLoss, packingLosses)
	}

	cm, hm := &cfg.Commander, &h.Commander
	c.duration(&hm.Tick, cm.Tick, ticks)
	c.number(&hm.DeadZone, cm.DeadZone, unitRightOpen)
	c.number(&hm.ReserveMin, cm.ReserveMin, unitRightOpen)
	c.number(&hm.MaxShareChange, cm.MaxShareChange, unitLeftOpen)
	c.duration(&hm.DirectiveTTL, cm.DirectiveTTL, positive)
	c.oneOf(&hm.CapacityPlan, cm.CapacityPlan, []string{domains.PlanForecast, domains.PlanOff})
	c.number(&hm.PoolSpare, cm.PoolSpare, unit)
	c.duration(&hm.PlanHold, cm.PlanHold, planHolds)
	c.number(&hm.Headroom, cm.Headroom, headrooms)
	if hm.DirectiveTTL.ok() && !hm.Tick.Bad && cm.DirectiveTTL > 0 && cm.DirectiveTTL < cm.Tick {
		ds.add(hm.DirectiveTTL.Range, "Invalid directive_ttl", "directive_ttl %s is shorter than the commander tick %s, so directives expire before the next one", cm.DirectiveTTL, cm.Tick)
	}

	s, hs := &cfg.Soldier, &h.Soldier
	c.duration(&hs.Tick, s.Tick, ticks)
	c.oneOf(&hs.Actuation, string(s.Actuation), []string{string(domains.ActuateReplicas), string(domains.ActuateHPABounds)})
	c.number(&hs.OverageCap, s.OverageCap, ratios)
	c.duration(&hs.ScaleDownCooldown, s.ScaleDownCooldown, nonNegative)
	c.oneOf(&hs.Mode, string(s.Mode), modeNames)
	c.number(&hs.TargetUtilisation, s.TargetUtilisation, unitLeftOpen)
	c.number(&hs.MaxUtilisation, s.MaxUtilisation, unitLeftOpen)
	if hs.MaxUtilisation.ok() && !hs.TargetUtilisation.Bad && s.MaxUtilisation < s.TargetUtilisation {
		ds.add(hs.MaxUtilisation.Range, "Invalid max_utilisation", "max_utilisation %g is below target_utilisation %g; large apps may only be sized above the target, never below", s.MaxUtilisation, s.TargetUtilisation)
	}
	c.number(&hs.StaffingSafety, s.StaffingSafety, staffingSafeties)
	c.number(&hs.Tolerance, s.Tolerance, tolerances)
	c.number(&hs.ErrorRateVeto, s.ErrorRateVeto, unitLeftOpen)
	c.integer(&hs.MaxWritesPerTick, s.MaxWritesPerTick, atLeastOne)
	validateSoldierGuards(s, hs, c)

	validateDomains(cfg, h, c)
	validateKubernetes(cfg, h, c)

	validateNATS(&h.NATS, cfg.NATS, c)
	c.duration(&h.Store.Retention, cfg.Store.Retention, positive)
}

// modeNames are the Soldier modes of the soldier block and of a domain.
// "shadow" is a deprecated alias of "recommend".
var modeNames = []string{string(domains.ModeActive), string(domains.ModeRecommend), string(domains.ModeShadow), string(domains.ModeOff)}

// validateDomains checks the domains, their shares, app sets and dependencies.
func validateDomains(cfg *domains.Config, h *configHCL, c checker) {
	ds := c.ds
	firstDomain := map[string]*domainHCL{}
	floors := 0.0
	floorsReported := false
	apps, appsReported := 0, false
	for i := range cfg.Domains {
		d, hd := &cfg.Domains[i], h.Domains[i]
		c.name(hd.Name, "domain")
		if first, dup := firstDomain[d.Name]; dup {
			ds.add(hd.Name.Range, fmt.Sprintf("Duplicate domain %s", clip(d.Name)), "domain names must be unique; the first is at line %d", first.Name.Range.Start.Line)
		} else {
			firstDomain[d.Name] = hd
		}
		c.integer(&hd.Priority, d.Priority, priorities)
		c.number(&hd.Weight, d.Weight, weights.loOpened())
		c.number(&hd.Floor, d.Floor, unit)
		c.number(&hd.Ceiling, d.Ceiling, unit)
		c.number(&hd.Headroom, d.Headroom, headrooms)
		c.oneOf(&hd.Mode, string(d.Mode), modeNames) // unset: the soldier block's mode
		if !hd.Floor.Bad && !hd.Ceiling.Bad && unit.contains(d.Floor) && unit.contains(d.Ceiling) && d.Floor > d.Ceiling {
			r := hd.Floor.Range
			if !hd.Floor.Set {
				r = hd.Ceiling.Range
			}
			ds.add(r, "Invalid floor", "floor %g is above ceiling %g", d.Floor, d.Ceiling)
		}
		if !hd.Floor.Bad && unit.contains(d.Floor) {
			floors += d.Floor
			if floors > 1+1e-9 && !floorsReported {
				floorsReported = true
				ds.add(hd.Floor.Range, "Floors sum over 1", "the floors of the domains up to %q sum to %s; they are shares of one pool and must sum to at most 1", d.Name, formatNumber(floors))
			}
		}

		if hd.SLO.Def != (hcl.Range{}) {
			c.required(&hd.SLO.LatencyP99.attr, `latency_p99 = "150ms"`)
			c.duration(&hd.SLO.LatencyP99, d.SLO.LatencyP99, positive)
			c.number(&hd.SLO.ErrorBudget, d.SLO.ErrorBudget, unitOpen)
		}

		validateDiscover(d, hd, c)
		firstSet := map[string]*appSetHCL{}
		for j := range d.AppSets {
			a, ha := &d.AppSets[j], hd.AppSets[j]
			c.name(ha.Name, "app set")
			if first, dup := firstSet[a.Name]; dup {
				ds.add(ha.Name.Range, fmt.Sprintf("Duplicate app set %s in domain %s", clip(a.Name), clip(d.Name)), "app set names must be unique within a domain; the first is at line %d", first.Name.Range.Start.Line)
			} else {
				firstSet[a.Name] = ha
			}
			validateAppSet(a, ha, c)
			if !ha.Count.Bad && appCounts.contains(float64(a.Count)) {
				apps += a.Count
				if apps > domains.MaxApps && !appsReported {
					appsReported = true
					r := ha.Count.Range
					if !ha.Count.Set {
						r = ha.Def
					}
					ds.add(r, "Too many apps", "the app sets up to %s expand to %d apps; a config may have at most %d", clip(d.Name+"/"+a.Name), apps, domains.MaxApps)
				}
			}
			if ha.CPUPerReplica.ok() && a.CPUPerReplica > cfg.Cluster.NodeCores {
				ds.add(ha.CPUPerReplica.Range, "Invalid cpu_per_replica", "a replica of %g cores fits on no node of node_cores = %g; it would stay pending forever", a.CPUPerReplica, cfg.Cluster.NodeCores)
			}
		}
	}
	validateDependencies(cfg, h, ds)
}

func validateAppSet(a *domains.AppSet, ha *appSetHCL, c checker) {
	c.integer(&ha.Count, a.Count, appCounts)
	c.required(&ha.CPUPerReplica.attr, "cpu_per_replica = 0.5")
	c.number(&ha.CPUPerReplica, a.CPUPerReplica, cpuPerReplicas)
	c.integer(&ha.MinReplicas, a.MinReplicas, replicaCounts)
	c.integer(&ha.MaxReplicas, a.MaxReplicas, replicaCounts)
	if !ha.MinReplicas.Bad && !ha.MaxReplicas.Bad && replicaCounts.contains(float64(a.MinReplicas)) && replicaCounts.contains(float64(a.MaxReplicas)) && a.MinReplicas > a.MaxReplicas {
		r, of := ha.MinReplicas.Range, "max_replicas"
		if !ha.MaxReplicas.Set {
			of = "the default max_replicas"
		}
		if !ha.MinReplicas.Set {
			r = ha.MaxReplicas.Range
		}
		c.ds.add(r, "Invalid min_replicas", "min_replicas %d is above %s %d", a.MinReplicas, of, a.MaxReplicas)
	}
	c.required(&ha.ServiceTime.attr, `service_time = "25ms"`)
	c.duration(&ha.ServiceTime, a.ServiceTime, positive)
	c.integer(&ha.Concurrency, a.Concurrency, concurrencies)
	c.duration(&ha.StartupTime, a.StartupTime, startupTimes)
	c.duration(&ha.Timeout, a.Timeout, positive)
	c.number(&ha.CallRatio, a.CallRatio, ratios.loOpened())
	c.duration(&ha.CallLag, a.CallLag, callLags)
	if ha.CallLag.ok() && a.CallLag > 0 && a.CallLag <= domains.MaxCallLag && len(a.DependsOn) == 0 && !ha.DependsOn.Bad {
		c.ds.add(ha.CallLag.Range, "Invalid call_lag", "call_lag delays the calls to the sets in depends_on, and this set has none")
	}
	c.number(&ha.CPULimitRatio, a.CPULimitRatio, cpuLimitRatios)
}

// validateDependencies checks that every depends_on entry names an existing
// app set as "domain/set", and that the dependencies form no cycle.
func validateDependencies(cfg *domains.Config, h *configHCL, ds *Diagnostics) {
	type set struct{ d, s int }
	var keys []string
	index := map[string]set{}
	for i, d := range cfg.Domains {
		for j, a := range d.AppSets {
			k := d.Name + "/" + a.Name
			if _, dup := index[k]; !dup {
				index[k] = set{i, j}
				keys = append(keys, k)
			}
		}
	}
	for i, d := range cfg.Domains {
		for j, a := range d.AppSets {
			for k, dep := range a.DependsOn {
				if _, ok := index[dep]; ok {
					continue
				}
				r := h.Domains[i].AppSets[j].DependsOn.Ranges[k]
				near, _ := nearest(dep, keys)
				if !strings.Contains(dep, "/") {
					ds.add(r, fmt.Sprintf("Invalid dependency %s", clip(dep)), "dependencies are written \"domain/set\" (nearest: %q)", near)
					continue
				}
				ds.add(r, fmt.Sprintf("Unknown dependency %s", clip(dep)), "there is no app set %s; the nearest is %q", clip(dep), near)
			}
		}
	}

	// Depth-first search; an edge to a set on the current path closes a cycle,
	// reported at the depends_on entry of that edge.
	const (
		unvisited = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(key string)
	visit = func(key string) {
		state[key] = onPath
		path = append(path, key)
		at := index[key]
		for k, dep := range cfg.Domains[at.d].AppSets[at.s].DependsOn {
			if _, ok := index[dep]; !ok {
				continue
			}
			switch state[dep] {
			case unvisited:
				visit(dep)
			case onPath:
				start := 0
				for path[start] != dep {
					start++
				}
				cycle := append(append([]string{}, path[start:]...), dep)
				ds.add(h.Domains[at.d].AppSets[at.s].DependsOn.Ranges[k], "Dependency cycle "+strings.Join(cycle, " -> "),
					"app sets cannot depend on themselves, directly or through others; remove one of these dependencies")
			}
		}
		path = path[:len(path)-1]
		state[key] = done
	}
	for _, k := range keys {
		if state[k] == unvisited {
			visit(k)
		}
	}
}

// checker reports values that break a rule at their source.
type checker struct{ ds *Diagnostics }

// required reports a missing attribute at its block's definition.
func (c checker) required(a *attr, example string) {
	if !a.Set {
		c.ds.add(a.Range, "Missing "+a.Name, "add %s", example)
	}
}

// number checks a's value: raw as written if set, else v, the value after
// defaults, must lie in iv; and a written 0 must not be replaced by a default.
func (c checker) number(a *numberAttr, v float64, iv interval) {
	c.in(&a.attr, a.V, v, iv, formatNumber)
}

func (c checker) integer(a *intAttr, v int, iv interval) {
	c.in(&a.attr, float64(a.V), float64(v), iv, formatNumber)
}

func (c checker) duration(a *durationAttr, v time.Duration, iv interval) {
	c.in(&a.attr, float64(a.V), float64(v), iv, func(f float64) string { return time.Duration(f).String() })
}

func (c checker) in(a *attr, raw, v float64, iv interval, show func(float64) string) {
	if !a.ok() {
		return
	}
	if !iv.contains(raw) {
		c.ds.add(a.Range, "Invalid "+a.Name, "%s must be %s, got %s", a.Name, iv.describe(show), show(raw))
		return
	}
	if raw == 0 && v != 0 {
		c.ds.add(a.Range, "Invalid "+a.Name, "0 means unset and is replaced by the default %s; leave %s out or use a small value", show(v), a.Name)
	}
}

// oneOf checks that a string attribute is one of allowed.
func (c checker) oneOf(a *stringAttr, v string, allowed []string) {
	if !a.ok() {
		return
	}
	for _, s := range allowed {
		if v == s {
			return
		}
	}
	hint := fmt.Sprintf("%s is not one of %s", clip(v), quoteList(allowed))
	if dym := didYouMean(v, allowed); dym != "" {
		hint += "; " + dym
	}
	c.ds.add(a.Range, "Invalid "+a.Name, "%s", hint)
}

// name checks a cluster, domain or app set name. Names become NATS subject
// tokens and key-value keys, and "/" separates domain and set in references,
// so they are 1 to 64 of [A-Za-z0-9_-].
func (c checker) name(l label, what string) {
	ok := len(l.V) > 0 && len(l.V) <= 64
	for _, r := range l.V {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}
	if !ok {
		c.ds.add(l.Range, fmt.Sprintf("Invalid %s name %s", what, clip(l.V)), "names are 1 to 64 letters, digits, \"_\" or \"-\" (they become NATS subjects); references are written \"domain/set\"")
	}
}

// interval is a range of allowed values.
type interval struct {
	lo, hi         float64
	loOpen, hiOpen bool
}

var (
	positive      = interval{lo: 0, hi: math.Inf(1), loOpen: true}
	nonNegative   = interval{lo: 0, hi: math.Inf(1)}
	atLeastOne    = interval{lo: 1, hi: math.Inf(1)}
	unit          = interval{lo: 0, hi: 1}                             // [0, 1]
	unitOpen      = interval{lo: 0, hi: 1, loOpen: true, hiOpen: true} // (0, 1)
	unitLeftOpen  = interval{lo: 0, hi: 1, loOpen: true}               // (0, 1]
	unitRightOpen = interval{lo: 0, hi: 1, hiOpen: true}               // [0, 1)
	callLags      = interval{lo: 0, hi: float64(domains.MaxCallLag)}   // [0s, 1h]
	// The bounds of package domains (see its MaxReplicas).
	cores            = interval{lo: 0, hi: domains.MaxCores, loOpen: true}
	nodeCounts       = interval{lo: 0, hi: domains.MaxNodes}
	provisionerRates = interval{lo: 0, hi: domains.MaxProvisionerRate, loOpen: true}
	appCounts        = interval{lo: 1, hi: domains.MaxAppsPerSet}
	replicaCounts    = interval{lo: 1, hi: domains.MaxReplicas}
	cpuPerReplicas   = interval{lo: domains.MinCPUPerReplica, hi: math.Inf(1)}
	concurrencies    = interval{lo: 1, hi: domains.MaxConcurrency}
	ticks            = interval{lo: float64(domains.MinTick), hi: float64(domains.MaxTick)}
	startupTimes     = interval{lo: 0, hi: float64(domains.MaxStartupTime)}
	telemetryLags    = interval{lo: 0, hi: float64(domains.MaxTelemetryLag)}
	planHolds        = interval{lo: 0, hi: float64(domains.MaxPlanHold)}
	headrooms        = interval{lo: 0, hi: domains.MaxHeadroom}
	priorities       = interval{lo: 0, hi: domains.MaxPriority}
	weights          = interval{lo: 0, hi: domains.MaxWeight}
	watts            = interval{lo: 0, hi: 1e5} // a node's power, watts: no server draws 100 kW
	ratios           = interval{lo: 0, hi: domains.MaxRatio}
	cpuLimitRatios   = interval{lo: 1, hi: domains.MaxRatio}
	// staffingSafeties bound square-root staffing's beta: 10 is far beyond
	// any wait probability worth buying.
	staffingSafeties = interval{lo: 0, hi: 10, loOpen: true}  // (0, 10]
	tolerances       = interval{lo: 0, hi: 0.5, loOpen: true} // (0, 0.5]
	// packingLosses bound Cluster.PackingLoss: a pool that loses half its
	// cores to fragmentation is a misconfiguration, not a world.
	packingLosses = interval{lo: 0, hi: 0.5, hiOpen: true} // [0, 0.5)
)

// loOpened is iv without its lower bound.
func (iv interval) loOpened() interval { iv.loOpen = true; return iv }

func (iv interval) contains(v float64) bool {
	if v < iv.lo || v > iv.hi || math.IsNaN(v) {
		return false
	}
	return !(iv.loOpen && v == iv.lo) && !(iv.hiOpen && v == iv.hi)
}

// describe says "> 0", ">= 1" or "in (0, 1]".
func (iv interval) describe(show func(float64) string) string {
	if math.IsInf(iv.hi, 1) {
		if iv.loOpen {
			return "> " + show(iv.lo)
		}
		return ">= " + show(iv.lo)
	}
	l, r := "[", "]"
	if iv.loOpen {
		l = "("
	}
	if iv.hiOpen {
		r = ")"
	}
	return fmt.Sprintf("in %s%s, %s%s", l, show(iv.lo), show(iv.hi), r)
}

// formatNumber shows whole numbers in full (10000000, not 1e+07) and the
// rest to 6 significant digits.
func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// validateProvisioner checks the node provisioner model's keys (issue 31).
// The token bucket's keys (provisioner_rate, provisioner_burst) and the
// cloud's (the launch buckets, spare capacity and the provisioners' own)
// belong to different models: setting one model's with the other chosen is
// an error rather than a silent no-op.
func validateProvisioner(cl *domains.Cluster, hc *clusterHCL, c checker) {
	c.oneOf(&hc.Provisioner, cl.Provisioner, []string{domains.ProvisionerTokenBucket, domains.ProvisionerClusterAutoscaler, domains.ProvisionerKarpenter})
	c.number(&hc.LaunchRequestRate, cl.LaunchRequestRate, provisionerRates)
	c.integer(&hc.LaunchRequestBurst, cl.LaunchRequestBurst, nodeCounts.loOpened())
	c.number(&hc.LaunchInstanceRate, cl.LaunchInstanceRate, provisionerRates)
	c.integer(&hc.LaunchInstanceBurst, cl.LaunchInstanceBurst, nodeCounts.loOpened())
	c.integer(&hc.SpareCapacity, cl.SpareCapacity, nodeCounts)
	c.number(&hc.SpareCapacityRate, cl.SpareCapacityRate, interval{lo: 0, hi: domains.MaxProvisionerRate})
	c.duration(&hc.ScanInterval, cl.ScanInterval, provisionerDelays)
	c.duration(&hc.InitialNodeGroupBackoff, cl.InitialNodeGroupBackoff, provisionerDelays)
	c.duration(&hc.MaxNodeGroupBackoff, cl.MaxNodeGroupBackoff, provisionerDelays)
	c.duration(&hc.NodeGroupBackoffReset, cl.NodeGroupBackoffReset, provisionerDelays)
	c.duration(&hc.MaxNodeProvisionTime, cl.MaxNodeProvisionTime, provisionerDelays)
	c.duration(&hc.BatchIdleDuration, cl.BatchIdleDuration, provisionerDelays)
	c.duration(&hc.BatchMaxDuration, cl.BatchMaxDuration, provisionerDelays)
	c.duration(&hc.UnavailableOfferingsTTL, cl.UnavailableOfferingsTTL, provisionerDelays)
	if hc.MaxNodeGroupBackoff.ok() && !hc.InitialNodeGroupBackoff.Bad && cl.MaxNodeGroupBackoff < cl.InitialNodeGroupBackoff {
		c.ds.add(hc.MaxNodeGroupBackoff.Range, "Invalid max_node_group_backoff", "max_node_group_backoff %s is below initial_node_group_backoff %s; the backoff only doubles from the initial one", cl.MaxNodeGroupBackoff, cl.InitialNodeGroupBackoff)
	}
	if !hc.Provisioner.ok() && hc.Provisioner.Set {
		return
	}
	bucket := cl.Provisioner == domains.ProvisionerTokenBucket
	for _, a := range []*attr{&hc.ProvisionerRate.attr, &hc.ProvisionerBurst.attr} {
		if a.Set && !bucket {
			c.ds.add(a.Range, "Invalid "+a.Name, "%s applies to provisioner = %q only; with provisioner = %q nodes launch through launch_instance_rate, launch_instance_burst and spare_capacity", a.Name, domains.ProvisionerTokenBucket, cl.Provisioner)
		}
	}
	cloudKeys := []*attr{&hc.LaunchRequestRate.attr, &hc.LaunchRequestBurst.attr, &hc.LaunchInstanceRate.attr, &hc.LaunchInstanceBurst.attr,
		&hc.SpareCapacity.attr, &hc.SpareCapacityRate.attr}
	caKeys := []*attr{&hc.ScanInterval.attr, &hc.InitialNodeGroupBackoff.attr, &hc.MaxNodeGroupBackoff.attr, &hc.NodeGroupBackoffReset.attr, &hc.MaxNodeProvisionTime.attr}
	karpenterKeys := []*attr{&hc.BatchIdleDuration.attr, &hc.BatchMaxDuration.attr, &hc.UnavailableOfferingsTTL.attr}
	for _, k := range []struct {
		attrs []*attr
		ok    bool
		want  string
	}{
		{cloudKeys, !bucket, fmt.Sprintf("%q or %q", domains.ProvisionerClusterAutoscaler, domains.ProvisionerKarpenter)},
		{caKeys, cl.Provisioner == domains.ProvisionerClusterAutoscaler, fmt.Sprintf("%q", domains.ProvisionerClusterAutoscaler)},
		{karpenterKeys, cl.Provisioner == domains.ProvisionerKarpenter, fmt.Sprintf("%q", domains.ProvisionerKarpenter)},
	} {
		for _, a := range k.attrs {
			if a.Set && !k.ok {
				c.ds.add(a.Range, "Invalid "+a.Name, "%s applies to provisioner = %s only, not %q", a.Name, k.want, cl.Provisioner)
			}
		}
	}
}

// provisionerDelays bound the provisioner model's durations: above 0, at
// most a day.
var provisionerDelays = interval{lo: 0, hi: float64(24 * time.Hour), loOpen: true}
