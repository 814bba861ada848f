package sim

import (
	"math"
	"testing"
)

// Request-weighted SLO and energy (issue 31): bad requests and energy_kwh.

func TestBadShareOfAnAppAtItsTargetIsOnePercent(t *testing.T) {
	q := Queue{Lambda: 150, Mu: 50, C: 4} // 75% busy: some requests wait
	soj := q.sojourn()
	p99 := q.P99()
	for _, tc := range []struct {
		rule        string
		shift, errs float64
		slo         float64
		want        float64
	}{
		{"the share over a target equal to the p99 is 1%", 0, 0, p99, 0.01},
		{"a shift (backlog wait, callees) moves the target with it", 0.05, 0, p99 + 0.05, 0.01},
		{"a target the shift alone exceeds makes every request slow", 0.5, 0, 0.3, 1},
		{"a failed request that is also slow counts once", 0, 0.5, p99, 1 - 0.5*0.99},
		{"every request failing makes every request bad", 0, 1, 10, 1},
	} {
		a := app{errs: tc.errs}
		m := mixApp{soj: soj, shift: tc.shift}
		em := newExpMemo()
		if got := badShare(&a, &m, tc.slo, &em); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: bad share %v, want %v", tc.rule, got, tc.want)
		}
	}
}

func TestBadShareIsTheSurvivalAtTheTarget(t *testing.T) {
	// Closed form (Gross & Harris eq. 2.39) against a target 3x the service
	// time: P(T > t) = (1-C) e^{-mu t} + C (theta e^{-mu t} - mu e^{-theta t}) / (theta - mu).
	q := Queue{Lambda: 90, Mu: 50, C: 2}
	c := q.ErlangC()
	mu, theta, tt := q.Mu, float64(q.C)*q.Mu-q.Lambda, 3/q.Mu
	want := (1-c)*math.Exp(-mu*tt) + c*(theta*math.Exp(-mu*tt)-mu*math.Exp(-theta*tt))/(theta-mu)
	em := newExpMemo()
	if got := badShare(&app{}, &mixApp{soj: q.sojourn()}, tt, &em); math.Abs(got-want) > 1e-12*want {
		t.Fatalf("bad share %v, want the survival %v", got, want)
	}
}

// telemetrySums recomputes, tick by tick from the telemetry and the
// mixture the simulator keeps, the requests, bad requests, busy cores and
// provisioned nodes that the metrics account.
type telemetrySums struct {
	requests, bad []float64 // per domain
	nodeSeconds   float64
	busyCoreSecs  float64
}

func (r *telemetrySums) observe(s *Sim) {
	cur := s.Current()
	em := newExpMemo()
	for i := range cur.Apps {
		a, x := &cur.Apps[i], &s.apps[i]
		di := x.domain
		arrived := a.RPS * s.dt
		r.requests[di] += arrived
		if arrived > 0 {
			r.bad[di] += arrived * badShare(x, &cur.mix.apps[i], s.doms[di].slo, &em)
		}
		r.busyCoreSecs += a.CPUUtil * float64(a.Ready) * x.cpu * s.dt
	}
	r.nodeSeconds += float64(cur.Cluster.Nodes+cur.Cluster.ProvisioningNodes) * s.dt
}

func TestBadRequestsAndEnergyAddUpFromTheTelemetry(t *testing.T) {
	cfg, sc, tr := twoTiers(64) // e/a asks for more than the pool: slow and failing requests
	s := mustNew(t, cfg, sc, tr)
	sums := telemetrySums{requests: make([]float64, 2), bad: make([]float64, 2)}
	for k := 1; !s.Done(); k++ {
		if k == 1 {
			s.targets[3] = 200
			s.targets[4] = 0 // e/a's sibling serves nothing: its requests fail
		}
		s.Step()
		sums.observe(s)
	}
	m := s.Metrics()
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	t.Run("each domain's requests and bad requests are the telemetry's", func(t *testing.T) {
		for di, d := range m.Domains {
			if !near(d.Requests, sums.requests[di]) || !near(d.BadRequests, sums.bad[di]) {
				t.Errorf("%s: %v requests, %v bad; telemetry says %v, %v", d.Name, d.Requests, d.BadRequests, sums.requests[di], sums.bad[di])
			}
			if d.BadRequests <= 0 || d.BadRequests >= d.Requests || !near(d.BadRequestRatio, d.BadRequests/d.Requests) {
				t.Errorf("%s: bad request ratio %v of %v/%v", d.Name, d.BadRequestRatio, d.BadRequests, d.Requests)
			}
		}
	})
	t.Run("tiers and the cluster are the sums of their domains", func(t *testing.T) {
		var req, bad, kwh float64
		for di, d := range m.Domains {
			tier := m.Tiers[di] // one domain a tier
			if !near(tier.Requests, d.Requests) || !near(tier.BadRequests, d.BadRequests) || !near(tier.BadRequestRatio, d.BadRequestRatio) || !near(tier.EnergyKWh, d.EnergyKWh) {
				t.Errorf("tier P%d %+v, domain %+v", tier.Priority, tier, d)
			}
			req, bad, kwh = req+d.Requests, bad+d.BadRequests, kwh+d.EnergyKWh
		}
		if !near(m.Requests, req) || !near(m.BadRequests, bad) || !near(m.BadRequestRatio, bad/req) || !near(m.EnergyKWh, kwh) {
			t.Errorf("cluster %v requests, %v bad (%v), %v kWh; domains sum to %v, %v, %v kWh", m.Requests, m.BadRequests, m.BadRequestRatio, m.EnergyKWh, req, bad, kwh)
		}
	})
	t.Run("the starved domain has the larger bad share", func(t *testing.T) {
		if m.Domains[1].BadRequestRatio <= m.Domains[0].BadRequestRatio {
			t.Errorf("e %v, d %v", m.Domains[1].BadRequestRatio, m.Domains[0].BadRequestRatio)
		}
	})
	t.Run("energy is idle watts per node plus watts per busy core", func(t *testing.T) {
		cl := cfg.Cluster
		want := (sums.nodeSeconds*cl.NodeIdleWatts + sums.busyCoreSecs*cl.BusyCoreWatts) / 3.6e6
		if !near(m.EnergyKWh, want) || want <= 0 {
			t.Fatalf("energy %v kWh, want %v", m.EnergyKWh, want)
		}
		// The defaults: 0.64 W a vCPU idle, 3.80 W busy (Cloud Carbon Footprint, Cascade Lake).
		if cl.NodeIdleWatts != 0.64*cl.NodeCores || math.Abs(cl.BusyCoreWatts-3.16) > 1e-12 {
			t.Fatalf("power model defaults %v W idle a node of %v cores, %v W a busy core", cl.NodeIdleWatts, cl.NodeCores, cl.BusyCoreWatts)
		}
	})
}

func TestNoTrafficNoRequestsNoRatio(t *testing.T) {
	cfg, sc, tr := world(64, 0, true)
	s := mustNew(t, cfg, sc, tr)
	m := s.Run(hold{})
	if m.Requests != 0 || m.BadRequests != 0 || m.BadRequestRatio != 0 {
		t.Fatalf("%v requests, %v bad, ratio %v", m.Requests, m.BadRequests, m.BadRequestRatio)
	}
	if m.EnergyKWh <= 0 {
		t.Fatalf("idle nodes drew no energy: %v kWh", m.EnergyKWh)
	}
}
