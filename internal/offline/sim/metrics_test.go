package sim

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// shortfalls runs the episode tracker on hand-written schedules, one string
// per app, one character per tick from tick 0: '#' short, anything else
// covered. Ticks are 10 s, so the 30 s window is 3 ticks either side.
func shortfalls(t *testing.T, schedules []string, domainOf []int32) (all, cor []ScaleOut) {
	t.Helper()
	apps := make([]app, len(schedules))
	domains := 1
	for i := range apps {
		if domainOf != nil {
			apps[i].domain = domainOf[i]
			domains = max(domains, int(domainOf[i])+1)
		}
	}
	steps := len(schedules[0]) - 1
	var e episodes
	e.init(apps, domains, steps, 3)
	for i, s := range schedules {
		e.initial(i, s[0] == '#')
	}
	for tick := 1; tick <= steps; tick++ {
		for i, s := range schedules {
			e.app(i, s[tick] == '#', tick)
		}
		e.endTick(tick)
	}
	h, c, ho, co := e.histograms(domains, steps)
	for d := range domains {
		all = append(all, scaleOutOf(h[d], ho[d], 10))
		cor = append(cor, scaleOutOf(c[d], co[d], 10))
	}
	return all, cor
}

func TestScaleOutEpisodes(t *testing.T) {
	tests := []struct {
		name      string
		schedules []string
		all, cor  ScaleOut
	}{
		{"an app that never spikes has no scale-out episode",
			[]string{"..........", ".........."}, ScaleOut{}, ScaleOut{}},
		{"an episode lasts its short ticks",
			[]string{"..###.....", ".........."},
			ScaleOut{Episodes: 1, P50Seconds: 30, P95Seconds: 30}, ScaleOut{}},
		{"episodes starting within 30 s of each other are correlated",
			[]string{"..##......", ".....#...."},
			ScaleOut{Episodes: 2, P50Seconds: 10, P95Seconds: 20}, ScaleOut{Episodes: 2, P50Seconds: 10, P95Seconds: 20}},
		{"episodes starting 40 s apart are not correlated",
			[]string{"..##......", "......#..."},
			ScaleOut{Episodes: 2, P50Seconds: 10, P95Seconds: 20}, ScaleOut{}},
		{"an episode that ends before its window closes is still classified",
			[]string{"..#.......", "....#....."},
			ScaleOut{Episodes: 2, P50Seconds: 10, P95Seconds: 10}, ScaleOut{Episodes: 2, P50Seconds: 10, P95Seconds: 10}},
		{"a flapping app is not correlated with itself",
			[]string{"..#.#.#...", ".........."},
			ScaleOut{Episodes: 3, P50Seconds: 10, P95Seconds: 10}, ScaleOut{}},
		{"an app short from the start starts no episode until it has been covered",
			[]string{"###..##...", ".........."},
			ScaleOut{Episodes: 1, P50Seconds: 20, P95Seconds: 20}, ScaleOut{}},
		{"an episode open at the end counts its short ticks so far",
			[]string{"......####", ".........."},
			ScaleOut{Episodes: 1, Open: 1, P50Seconds: 40, P95Seconds: 40}, ScaleOut{}},
		{"the window is cut at the run's end",
			[]string{"........##", ".........#"},
			ScaleOut{Episodes: 2, Open: 2, P50Seconds: 10, P95Seconds: 20}, ScaleOut{Episodes: 2, Open: 2, P50Seconds: 10, P95Seconds: 20}},
		{"a correlated episode stays correlated however long it lasts",
			[]string{".#########", "..#......."},
			ScaleOut{Episodes: 2, Open: 1, P50Seconds: 10, P95Seconds: 90}, ScaleOut{Episodes: 2, Open: 1, P50Seconds: 10, P95Seconds: 90}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all, cor := shortfalls(t, tt.schedules, nil)
			if all[0] != tt.all || cor[0] != tt.cor {
				t.Fatalf("all %+v, correlated %+v; want %+v and %+v", all[0], cor[0], tt.all, tt.cor)
			}
		})
	}
}

func TestCorrelationNeedsFivePercentOfApps(t *testing.T) {
	// 60 apps: an episode is correlated when ceil(5% x 60) = 3 apps start
	// within 30 s. Apps 0 and 1 spike together (2 apps: not enough); apps
	// 2-4 spike together later (3: enough).
	schedules := make([]string, 60)
	for i := range schedules {
		schedules[i] = strings.Repeat(".", 30)
	}
	schedules[0] = "..##" + strings.Repeat(".", 26)
	schedules[1] = "...#" + strings.Repeat(".", 26)
	for i := 2; i <= 4; i++ {
		schedules[i] = strings.Repeat(".", 15) + "#" + strings.Repeat(".", 14)
	}
	all, cor := shortfalls(t, schedules, nil)
	if all[0].Episodes != 5 || cor[0].Episodes != 3 {
		t.Fatalf("%d episodes, %d correlated; want 5 and 3", all[0].Episodes, cor[0].Episodes)
	}
}

func TestScaleOutPerDomain(t *testing.T) {
	all, cor := shortfalls(t, []string{"..###.....", "...#......", "........##"}, []int32{0, 1, 1})
	want := []ScaleOut{{Episodes: 1, P50Seconds: 30, P95Seconds: 30}, {Episodes: 2, Open: 1, P50Seconds: 10, P95Seconds: 20}}
	wantCor := []ScaleOut{{Episodes: 1, P50Seconds: 30, P95Seconds: 30}, {Episodes: 1, P50Seconds: 10, P95Seconds: 10}}
	if !slices.Equal(all, want) || !slices.Equal(cor, wantCor) {
		t.Fatalf("per domain all %+v correlated %+v; want %+v and %+v", all, cor, want, wantCor)
	}
}

func TestNearestRank(t *testing.T) {
	tests := []struct {
		name     string
		values   []int
		p50, p95 int
	}{
		{"one episode is every percentile", []int{7}, 7, 7},
		{"p50 and p95 of 1..20 are 10 and 19", seqTo(20), 10, 19},
		{"p95 of 1..100 is 95", seqTo(100), 50, 95},
		{"p95 of 1..10 is the longest", seqTo(10), 5, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := make([]int32, 101)
			for _, v := range tt.values {
				h[v]++
			}
			if p50, p95 := nearestRank(h, len(tt.values), 50), nearestRank(h, len(tt.values), 95); p50 != tt.p50 || p95 != tt.p95 {
				t.Fatalf("p50 %d p95 %d, want %d and %d", p50, p95, tt.p50, tt.p95)
			}
		})
	}
}

func seqTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// hpaLike sizes every app for its lagged demand at 70% utilisation.
type hpaLike struct{ s *Sim }

func (p hpaLike) Decide(_ time.Time, tel *Telemetry, targets []int32) {
	for i := range targets {
		targets[i] = max(1, int32(math.Ceil(tel.Apps[i].RPS/(0.7*p.s.Capacity(i)))))
	}
}

// reference is a naive recomputation of the scale-out episodes from the
// telemetry of every tick: every episode kept, the correlation window counted
// directly.
type reference struct {
	short    [][]bool // per tick, per app
	episodes []struct{ app, start, ticks int }
}

func (r *reference) observe(s *Sim) {
	tel := s.Current()
	row := make([]bool, len(tel.Apps))
	for i, a := range tel.Apps {
		row[i] = a.RPS > float64(a.Ready*s.apps[i].conc)*s.apps[i].mu
	}
	r.short = append(r.short, row)
}

func (r *reference) scaleOut(apps int, dt float64) (all, cor ScaleOut) {
	last := len(r.short) - 1
	var starts [][]int // per app
	starts = make([][]int, apps)
	for i := range apps {
		state := covered
		if r.short[0][i] {
			state = uncounted
		}
		for t := 1; t <= last; t++ {
			switch {
			case r.short[t][i] && state == covered:
				state = t
				starts[i] = append(starts[i], t)
			case !r.short[t][i] && state >= 0:
				r.episodes = append(r.episodes, struct{ app, start, ticks int }{i, state, t - state})
				state = covered
			case !r.short[t][i]:
				state = covered
			}
		}
		if state >= 0 {
			r.episodes = append(r.episodes, struct{ app, start, ticks int }{i, state, last - state + 1})
			all.Open++
		}
	}
	minApps := max(2, int(math.Ceil(0.05*float64(apps))))
	var durs, corDurs []int
	for _, e := range r.episodes {
		durs = append(durs, e.ticks)
		n := 0
		for i := range apps {
			if slices.ContainsFunc(starts[i], func(t int) bool { return t >= e.start-3 && t <= e.start+3 }) {
				n++
			}
		}
		if n >= minApps {
			corDurs = append(corDurs, e.ticks)
			if e.start+e.ticks > last {
				cor.Open++
			}
		}
	}
	summary := func(d []int, open int) ScaleOut {
		out := ScaleOut{Episodes: len(d), Open: open}
		if len(d) == 0 {
			return out
		}
		slices.Sort(d)
		out.P50Seconds = float64(d[(50*len(d)+99)/100-1]) * dt
		out.P95Seconds = float64(d[(95*len(d)+99)/100-1]) * dt
		return out
	}
	return summary(durs, all.Open), summary(corDurs, cor.Open)
}

func TestScaleOutMatchesTheShortTicksOfTelemetry(t *testing.T) {
	cfg, sc, tr := world(800, 8000, false) // a 4x step 20 minutes in
	cfg.Domains[0].AppSets[0].Count = 40
	s := mustNew(t, cfg, sc, tr)
	var ref reference
	ref.observe(s)
	p := hpaLike{s}
	for !s.Done() {
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
		ref.observe(s)
	}
	m := s.Metrics()
	all, cor := ref.scaleOut(len(s.apps), s.dt)
	if m.ScaleOutAll != all || m.ScaleOut != cor {
		t.Fatalf("scale_out_all %+v scale_out %+v; a naive recount gives %+v and %+v", m.ScaleOutAll, m.ScaleOut, all, cor)
	}
	t.Logf("scale_out_all %+v, scale_out %+v", all, cor)
	if all.Episodes == 0 || cor.Episodes == 0 {
		t.Fatalf("a 4x step on a full pool gave %d episodes, %d correlated; want some of each", all.Episodes, cor.Episodes)
	}
	if len(m.Tiers) != 1 || m.Tiers[0].ScaleOut != m.ScaleOut || m.Domains[0].ScaleOutAll != m.ScaleOutAll {
		t.Fatalf("one domain: the tier %+v and domain %+v should equal the cluster", m.Tiers, m.Domains[0])
	}
}

// stepTargets steps s with targets set by set before each step k = 1, 2, ...
func stepTargets(s *Sim, ticks int, set func(k int, targets []int32)) {
	for k := 1; k <= ticks; k++ {
		set(k, s.targets)
		s.Step()
	}
}

func TestMaxScaleUps30s(t *testing.T) {
	tests := []struct {
		name  string
		rises map[int][]int // tick -> apps whose target rises
		want  int
	}{
		{"no target rise is no scale-up", nil, 0},
		{"rises within 30 s add up", map[int][]int{1: {0}, 2: {1}, 4: {2}}, 3},
		{"rises 40 s apart do not add up", map[int][]int{1: {0, 1}, 5: {2}}, 2},
		{"an app rising twice in the window counts once", map[int][]int{1: {0}, 2: {0}, 3: {0, 1}}, 2},
		{"an app rising again after the window counts again", map[int][]int{1: {0}, 5: {0, 1}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, sc, tr := world(4000, 100, true)
			s := mustNew(t, cfg, sc, tr)
			stepTargets(s, 10, func(k int, targets []int32) {
				for _, i := range tt.rises[k] {
					targets[i]++
				}
			})
			if got := s.Metrics().MaxScaleUps30s; got != tt.want {
				t.Fatalf("max_scale_ups_30s %d, want %d", got, tt.want)
			}
		})
	}
	t.Run("a target cut is not a scale-up", func(t *testing.T) {
		cfg, sc, tr := world(4000, 400, true)
		s := mustNew(t, cfg, sc, tr)
		stepTargets(s, 5, func(k int, targets []int32) { targets[k%3] = max(1, targets[k%3]-1) })
		if m := s.Metrics(); m.MaxScaleUps30s != 0 || m.ScalingActions == 0 {
			t.Fatalf("cuts only: max_scale_ups_30s %d (want 0), scaling_actions %d (want > 0)", m.MaxScaleUps30s, m.ScalingActions)
		}
	})
}

func TestNodeChurn(t *testing.T) {
	cfg, sc, tr := world(4000, 100, true)
	cfg.Cluster.ProvisionerRate = 60 // 10 starts per tick
	s := mustNew(t, cfg, sc, tr)
	initial := s.pool.nodes
	stepTargets(s, 30, func(_ int, targets []int32) { targets[0] = 80 }) // ~10 more nodes of 8 cores
	m := s.Metrics()
	t.Run("a node provision counts as churn", func(t *testing.T) {
		grown := int(s.pool.nodes - initial)
		if grown == 0 || m.NodeProvisions != grown || m.NodeRemovals != 0 || m.NodeChurn != grown {
			t.Fatalf("%d new nodes: provisions %d removals %d churn %d; want %d, 0, %d", grown, m.NodeProvisions, m.NodeRemovals, m.NodeChurn, grown, grown)
		}
	})
	t.Run("a node removal counts as churn", func(t *testing.T) {
		peak := s.pool.nodes
		stepTargets(s, 6*12, func(_ int, targets []int32) { targets[0] = 1 }) // idle timeout 10 minutes
		m2 := s.Metrics()
		removed := int(peak - s.pool.nodes)
		if removed == 0 || m2.NodeRemovals != removed || m2.NodeChurn != m.NodeProvisions+removed {
			t.Fatalf("%d nodes removed: removals %d churn %d; want %d and %d", removed, m2.NodeRemovals, m2.NodeChurn, removed, m.NodeProvisions+removed)
		}
		if want := float64(m2.NodeChurn) / (m2.SimSeconds / 3600); math.Abs(m2.NodeChurnPerHour-want) > 1e-12 {
			t.Fatalf("node_churn_per_hour %v, want churn / simulated hours = %v", m2.NodeChurnPerHour, want)
		}
	})
	t.Run("a node request the provisioner has not started is not churn", func(t *testing.T) {
		cfg, sc, tr := world(4000, 100, true)
		cfg.Cluster.ProvisionerRate = 6 // one start per tick
		s := mustNew(t, cfg, sc, tr)
		stepTargets(s, 3, func(_ int, targets []int32) { targets[0] = 200 })
		if m := s.Metrics(); s.pool.queued == 0 || m.NodeProvisions != int(s.pool.provisioning) {
			t.Fatalf("%d queued, %d provisioning: provisions %d, want the provisioning ones only", s.pool.queued, s.pool.provisioning, m.NodeProvisions)
		}
	})
}

// twoTiers is world's flat domain "d" (P0) next to a copy "e" at P1, whose
// apps are "e/a" and "e/b".
func twoTiers(capacityCores float64) (*domains.Config, *domains.Scenario, map[string][]trace.Series) {
	cfg, sc, tr := world(capacityCores, 100, true)
	e := cfg.Domains[0]
	e.Name, e.Priority = "e", 1
	e.AppSets = slices.Clone(e.AppSets)
	e.AppSets[0].DependsOn = []string{"e/b"}
	cfg.Domains = append(cfg.Domains, e)
	te := sc.Traffic[0]
	te.Domain = "e"
	sc.Traffic = append(sc.Traffic, te)
	tr["e"] = tr["d"]
	return cfg, sc, tr
}

func TestPendingPodsPeakPodsAndUtilisation(t *testing.T) {
	cfg, sc, tr := twoTiers(64)
	s := mustNew(t, cfg, sc, tr)
	var pending [2]float64 // per domain, replica-seconds from telemetry
	var busy, provisioned float64
	var peakPods, peakScheduled int32
	for k := 1; !s.Done(); k++ {
		if k == 1 {
			s.targets[3] = 200 // e/a: more than the pool holds
		}
		s.Step()
		cur := s.Current()
		pods, scheduled := int32(0), int32(0)
		for i, a := range cur.Apps {
			busy += a.CPUUtil * float64(a.Ready) * s.apps[i].cpu * s.dt
			pods += a.Replicas()
			scheduled += a.Ready + a.Starting
		}
		for di, d := range cur.Domains {
			pending[di] += float64(d.Pending) * s.dt
		}
		provisioned += float64(cur.Cluster.Nodes+cur.Cluster.ProvisioningNodes) * s.pool.nodeCores * s.dt
		peakPods, peakScheduled = max(peakPods, pods), max(peakScheduled, scheduled)
	}
	m := s.Metrics()
	t.Run("pending pods count against their own tier", func(t *testing.T) {
		if pending[1] == 0 {
			t.Fatal("no pending replicas in e: the test does not fill the pool")
		}
		for di := range 2 {
			want := pending[di] / 3600
			if math.Abs(m.Domains[di].PendingPodHours-want) > 1e-9 || math.Abs(m.Tiers[di].PendingPodHours-want) > 1e-9 {
				t.Errorf("domain %d: pending_pod_hours %v, tier P%d %v; telemetry says %v",
					di, m.Domains[di].PendingPodHours, m.Tiers[di].Priority, m.Tiers[di].PendingPodHours, want)
			}
		}
		if sum := m.Tiers[0].PendingPodHours + m.Tiers[1].PendingPodHours; math.Abs(sum-m.PendingPodHours) > 1e-9 {
			t.Errorf("tiers add up to %v pending pod-hours, the cluster has %v", sum, m.PendingPodHours)
		}
	})
	t.Run("peak pods counts pending replicas too", func(t *testing.T) {
		if m.PeakPods != peakPods || m.PeakPods <= peakScheduled {
			t.Fatalf("peak_pods %d, want %d (above the %d scheduled)", m.PeakPods, peakPods, peakScheduled)
		}
	})
	t.Run("utilisation is busy core-hours over provisioned node core-hours", func(t *testing.T) {
		if want := busy / provisioned; math.Abs(m.AvgCPUUtilisation-want) > 1e-9 || want <= 0 || want > 1 {
			t.Fatalf("avg_cpu_utilisation %v, want %v", m.AvgCPUUtilisation, want)
		}
	})
}

func TestFloorCoreHours(t *testing.T) {
	cfg, sc, tr := twoTiers(400)
	cfg.Domains[0].AppSets = slices.Clone(cfg.Domains[0].AppSets)
	cfg.Domains[0].AppSets[1].MinReplicas = 4 // d/b
	s := mustNew(t, cfg, sc, tr)
	m := s.Run(hold{}) // 1 hour
	// d: a x2 at min 1, b at min 4, 1 core each; e: a x2 and b at min 1.
	if m.Domains[0].FloorCoreHours != 6 || m.Domains[1].FloorCoreHours != 3 || m.Tiers[1].FloorCoreHours != 3 || m.FloorCoreHours != 9 {
		t.Fatalf("floor_core_hours: cluster %v, d %v, e %v, tier P1 %v; want 9, 6, 3, 3 (min_replicas x cpu_per_replica x 1 h)",
			m.FloorCoreHours, m.Domains[0].FloorCoreHours, m.Domains[1].FloorCoreHours, m.Tiers[1].FloorCoreHours)
	}
}

// TestPriorityInversions: while a P0 replica waits for a node, a P1
// replica scheduled on a core fragment too small for it is counted, and as
// P3 while P0 waits when its domain is of priority 3; with replicas of one
// size none ever is, since scheduling is by priority (priority_classes;
// the P0 replicas preempt what they may, which leaves fragments too).
func TestPriorityInversions(t *testing.T) {
	for _, tt := range []struct {
		rule  string
		p0CPU float64
		ePrio int // the other domain's priority
		want  bool
	}{
		{"a smaller P1 replica on a fragment the P0 replica does not fit is an inversion", 5, 1, true},
		{"a smaller P3 replica there is an inversion of P3 under P0", 5, 3, true},
		{"replicas of one size never invert", 1, 3, false},
	} {
		t.Run(tt.rule, func(t *testing.T) {
			cfg, sc, tr := twoTiers(64)
			cfg.Domains = slices.Clone(cfg.Domains)
			cfg.Domains[0].AppSets = slices.Clone(cfg.Domains[0].AppSets)
			cfg.Domains[0].AppSets[0].CPUPerReplica = tt.p0CPU // d/a
			cfg.Domains[1].Priority = tt.ePrio
			cfg.Cluster.PriorityClasses = true
			s := mustNew(t, cfg, sc, tr)
			for k := 0; k < 60 && !s.Done(); k++ {
				s.targets[0], s.targets[3] = 100, 40 // d/a, e/a: more than the pool holds
				s.Step()
			}
			m := s.Metrics()
			if got := m.PriorityInversions; (got > 0) != tt.want {
				t.Fatalf("priority_inversions = %d", got)
			}
			if want := map[bool]int{true: m.PriorityInversions, false: 0}[tt.ePrio >= 3]; m.P3WhileP0Waits != want {
				t.Fatalf("p3_while_p0_waits = %d of %d inversions, want %d", m.P3WhileP0Waits, m.PriorityInversions, want)
			}
		})
	}
}

// TestCeilingBound: with d/a-0 and d/a-1 held at their ceiling of 1 past
// what they serve and d/b given room, the domain is ceiling-bound; once d/b
// is cut below what it serves (under its ceiling), it is not.
func TestCeilingBound(t *testing.T) {
	cfg, sc, tr := world(4000, 2000, false)
	cfg.Domains[0].AppSets = slices.Clone(cfg.Domains[0].AppSets)
	cfg.Domains[0].AppSets[0].MaxReplicas = 1 // d/a-0, d/a-1
	s := mustNew(t, cfg, sc, tr)
	bound, below := 0, 0
	for !s.Done() {
		s.targets[0], s.targets[1], s.targets[2] = 1, 1, 40
		if s.StepsDone() > 300 { // the last minutes: d/b cut to 1 replica, past what it serves
			s.targets[2] = 1
		}
		s.Step()
		cur := s.Current()
		var breached, atMax int32
		for i, a := range cur.Apps {
			if a.RPS > 0 && (a.P99 > s.doms[0].slo || a.ErrorRate > s.doms[0].budget) {
				breached++
				if i < 2 && a.Ready >= 1 {
					atMax++
				}
			}
		}
		if got := cur.CeilingBound(0); got != (breached > 0 && atMax == breached) {
			t.Fatalf("tick %d: ceiling-bound %v with %d apps breaching, %d at their ceiling", s.StepsDone(), got, breached, atMax)
		}
		switch {
		case cur.CeilingBound(0):
			bound++
		case breached > atMax:
			below++
		}
	}
	if bound == 0 || below == 0 {
		t.Fatalf("%d ticks ceiling-bound, %d with a breach below the ceiling: the test needs both", bound, below)
	}
}

// TestBreachesAtMax: breaches of an app with max_replicas ready are counted
// apart, per domain, over the cluster and per app (CeilingBound); breaches
// below the ceiling are not.
func TestBreachesAtMax(t *testing.T) {
	cfg, sc, tr := world(4000, 2000, false) // a step from 500 to 2000 rps 20 minutes in
	cfg.Domains[0].AppSets = slices.Clone(cfg.Domains[0].AppSets)
	cfg.Domains[0].AppSets[1].MaxReplicas = 2 // d/b: its ceiling serves 400 rps, less than the step brings
	s := mustNew(t, cfg, sc, tr)
	var atMax, below float64 // breached app-minutes from telemetry
	for !s.Done() {
		s.targets[2] = 2 // d/b at its ceiling; d/a-0 and d/a-1 held where they start
		s.Step()
		cur := s.Current()
		var breached, breachedAtMax int32
		for i, a := range cur.Apps {
			if a.RPS == 0 || !(a.P99 > s.doms[0].slo || a.ErrorRate > s.doms[0].budget) {
				continue
			}
			breached++
			if a.Ready >= 2 && i == 2 {
				atMax += s.dt / 60
				breachedAtMax++
			} else {
				below += s.dt / 60
			}
		}
		if d := cur.Domains[0]; d.BreachedApps != breached || d.BreachedAtMax != breachedAtMax ||
			cur.CeilingBound(0) != (breached > 0 && breachedAtMax == breached) {
			t.Fatalf("tick %d: telemetry breached %d, at max %d, ceiling-bound %v; the apps say %d, %d",
				s.StepsDone(), d.BreachedApps, d.BreachedAtMax, cur.CeilingBound(0), breached, breachedAtMax)
		}

	}
	m := s.Metrics()
	if atMax == 0 || below == 0 {
		t.Fatalf("breached app-minutes at the ceiling %v, below it %v: the test needs both", atMax, below)
	}
	d := m.Domains[0]
	if math.Abs(d.BreachAppMinutesAtMax-atMax) > 1e-9 || math.Abs(d.BreachAppMinutes-atMax-below) > 1e-9 {
		t.Errorf("breach_app_minutes %v, at max %v; telemetry says %v, at max %v", d.BreachAppMinutes, d.BreachAppMinutesAtMax, atMax+below, atMax)
	}
	if m.BreachAppMinutesAtMax != d.BreachAppMinutesAtMax {
		t.Errorf("cluster breach_app_minutes_at_max %v, its one domain's %v", m.BreachAppMinutesAtMax, d.BreachAppMinutesAtMax)
	}
	if want := (CeilingBound{App: "d/b", MaxReplicas: 2, BreachAppMinutes: atMax}); len(m.CeilingBound) != 1 ||
		m.CeilingBound[0].App != want.App || m.CeilingBound[0].MaxReplicas != 2 || math.Abs(m.CeilingBound[0].BreachAppMinutes-atMax) > 1e-9 {
		t.Errorf("ceiling_bound %+v, want [%+v]", m.CeilingBound, want)
	}
}
