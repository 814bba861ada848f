package commander

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/wire"
)

var pinT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func pinShare(domain string, share float64, issued time.Time, d time.Duration) wire.Override {
	return wire.Override{Version: wire.Version, Cluster: "c", Domain: domain, Share: &share,
		IssuedAt: issued, Until: issued.Add(d), By: "alice", Reason: "incident 123"}
}

func cancelShare(domain string, issued time.Time) wire.Override {
	return wire.Override{Version: wire.Version, Cluster: "c", Domain: domain, Cancel: true, IssuedAt: issued, By: "alice"}
}

func TestSharePinsOffer(t *testing.T) {
	n := 3
	replicas := wire.Override{Version: wire.Version, Cluster: "c", Domain: "p0", App: "p0/a-0", Replicas: &n,
		IssuedAt: pinT0, Until: pinT0.Add(time.Minute), By: "bob"}
	tests := []struct {
		rule   string
		before []wire.Override
		offer  wire.Override
		now    time.Time
		kind   string
		reason string
		want   []float64 // pins after
	}{
		{"a share pin is accepted", nil, pinShare("p1", 0.3, pinT0, 30*time.Minute), pinT0, wire.OverrideAccepted, "p1 pinned at share 0.3", []float64{-1, 0.3, -1}},
		{"an unknown domain is rejected", nil, pinShare("p9", 0.3, pinT0, time.Minute), pinT0, wire.OverrideRejected, "not a domain", []float64{-1, -1, -1}},
		{"a replica pin is the soldier's", nil, replicas, pinT0, wire.OverrideRejected, "Soldier's", []float64{-1, -1, -1}},
		{"a lapsed pin is rejected", nil, pinShare("p1", 0.3, pinT0, time.Minute), pinT0.Add(time.Hour), wire.OverrideRejected, "lapsed", []float64{-1, -1, -1}},
		{"a pin from the future is rejected", nil, pinShare("p1", 0.3, pinT0.Add(time.Hour), time.Minute), pinT0, wire.OverrideRejected, "ahead of the Commander's clock", []float64{-1, -1, -1}},
		{"pins summing past 1 are rejected", []wire.Override{pinShare("p0", 0.7, pinT0, time.Hour)}, pinShare("p1", 0.4, pinT0, time.Hour), pinT0, wire.OverrideRejected, "sum to 1.1", []float64{0.7, -1, -1}},
		{"a pin may replace its own domain's within the sum", []wire.Override{pinShare("p0", 0.7, pinT0, time.Hour)}, pinShare("p0", 0.9, pinT0.Add(time.Second), time.Hour), pinT0.Add(time.Second), wire.OverrideAccepted, "", []float64{0.9, -1, -1}},
		{"an older pin is rejected", []wire.Override{pinShare("p0", 0.7, pinT0.Add(time.Second), time.Hour)}, pinShare("p0", 0.2, pinT0, time.Hour), pinT0.Add(time.Second), wire.OverrideRejected, "before the pin in force", []float64{0.7, -1, -1}},
		{"a cancel lifts the pin", []wire.Override{pinShare("p3", 0.2, pinT0, time.Hour)}, cancelShare("p3", pinT0.Add(time.Minute)), pinT0.Add(time.Minute), wire.OverrideCancelled, "lifted by alice", []float64{-1, -1, -1}},
		{"a cancel without a pin is rejected", nil, cancelShare("p3", pinT0), pinT0, wire.OverrideRejected, "no share pin to cancel", []float64{-1, -1, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			p := NewSharePins([]string{"p0", "p1", "p3"})
			for _, o := range tt.before {
				if e := p.Offer(o, o.IssuedAt); e.Kind != wire.OverrideAccepted {
					t.Fatalf("setup pin refused: %s", e.Reason)
				}
			}
			e := p.Offer(tt.offer, tt.now)
			if e.Kind != tt.kind || !strings.Contains(e.Reason, tt.reason) {
				t.Fatalf("event %s %q, want %s containing %q", e.Kind, e.Reason, tt.kind, tt.reason)
			}
			for i, v := range tt.want {
				if p.Shares()[i] != v {
					t.Fatalf("pins %v, want %v", p.Shares(), tt.want)
				}
			}
		})
	}
}

func TestApplyPins(t *testing.T) {
	rules := Rules{Floors: []float64{0.2, 0.1, 0.05}, Ceilings: []float64{0.6, 0.5, 0.4}, Priorities: []int{0, 1, 3}, ReserveMin: 0.05}
	tests := []struct {
		rule    string
		shares  []float64 // after ApplyGuards
		pins    []float64
		want    []float64
		reserve float64
		guards  string
	}{
		{"no pin changes nothing", []float64{0.4, 0.3, 0.2}, []float64{-1, -1, -1}, []float64{0.4, 0.3, 0.2}, 0, ""},
		{"pin below the floor wins over the floor", []float64{0.4, 0.3, 0.2}, []float64{0.05, -1, -1}, []float64{0.05, 0.3, 0.2}, 0.45, "override"},
		{"pin above the ceiling wins over the ceiling", []float64{0.3, 0.3, 0.2}, []float64{-1, -1, 0.45}, []float64{0.3, 0.2, 0.45}, 0.05, "override,reserve"},
		{"room comes from the lowest priority first", []float64{0.4, 0.3, 0.2}, []float64{-1, 0.45, -1}, []float64{0.4, 0.45, 0.1}, 0.05, "override,reserve"},
		{"reserve_min trims unpinned to their floors only", []float64{0.4, 0.3, 0.2}, []float64{0.7, -1, -1}, []float64{0.7, 0.2, 0.05}, 0.05, "override,reserve,reserve"},
		{"past 1 unpinned go below their floors", []float64{0.4, 0.3, 0.2}, []float64{0.9, -1, -1}, []float64{0.9, 0.1, 0}, 0, "override,reserve,reserve,override"},
		{"pins of the whole pool leave no reserve", []float64{0.4, 0.3, 0.2}, []float64{0.5, 0.5, -1}, []float64{0.5, 0.5, 0}, 0, "override,override,reserve,override"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			a := NewAction(3)
			copy(a.Shares, tt.shares)
			sum := 0.0
			for _, s := range tt.shares {
				sum += s
			}
			a.Reserve = 1 - sum
			applied := ApplyPins(rules, tt.pins, &a, nil, make([]int, 0, 3))
			for i := range tt.want {
				if math.Abs(a.Shares[i]-tt.want[i]) > 1e-9 {
					t.Fatalf("shares %v, want %v (applied %+v)", a.Shares, tt.want, applied)
				}
			}
			if tt.guards != "" && math.Abs(a.Reserve-tt.reserve) > 1e-9 {
				t.Fatalf("reserve %g, want %g", a.Reserve, tt.reserve)
			}
			var names []string
			for _, g := range applied {
				names = append(names, g.Name)
			}
			if got := strings.Join(names, ","); got != tt.guards {
				t.Fatalf("guards %s, want %s", got, tt.guards)
			}
			if total := a.Shares[0] + a.Shares[1] + a.Shares[2] + a.Reserve; math.Abs(total-1) > 1e-9 {
				t.Fatalf("shares plus reserve sum to %g", total)
			}
		})
	}
}

// pinEvents keeps tick records and override events.
type pinEvents struct {
	records []Record
	events  []OverrideEvent
}

func (p *pinEvents) Record(r Record)                { p.records = append(p.records, r) }
func (p *pinEvents) RecordOverride(e OverrideEvent) { p.events = append(p.events, e) }

func (p *pinEvents) kinds() string {
	var ks []string
	for _, e := range p.events {
		ks = append(ks, e.Kind)
	}
	return strings.Join(ks, ",")
}

func TestCommanderHoldsAPinnedShareUntilItLapses(t *testing.T) {
	cfg := reloadConfig()
	pub, rec := &reloadPublisher{}, &pinEvents{}
	c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", pub, rec, 1, 0)
	now := pinT0
	firstP3 := tickWithDemand(t, c, cfg, 200, now).Shares[2] // Decision.Shares is reused
	if ok, why := c.OnOverride(pinShare("p3", 0.6, now, 30*time.Minute), now); !ok {
		t.Fatalf("pin refused: %s", why)
	}
	for k := 1; k <= 3; k++ {
		now = now.Add(time.Minute)
		dec := tickWithDemand(t, c, cfg, 200, now)
		// Above p3's ceiling (0.5) and further from its share than
		// max_share_change: the pin wins at once.
		if dec.Shares[2] != 0.6 || pub.directive("p3").Share != 0.6 {
			t.Fatalf("tick %d: p3 share %g (directive %g), want the pinned 0.6", k, dec.Shares[2], pub.directive("p3").Share)
		}
		if sum := dec.Shares[0] + dec.Shares[1] + dec.Shares[2] + dec.Reserve; math.Abs(sum-1) > 1e-9 {
			t.Fatalf("shares plus reserve sum to %g", sum)
		}
	}
	if got := rec.kinds(); got != "accepted,applied" {
		t.Fatalf("events %s, want accepted,applied", got)
	}
	g := rec.records[len(rec.records)-1].Guards
	if !containsGuard(g, GuardOverride, 2) {
		t.Fatalf("guards %+v lack the override on p3", g)
	}
	now = pinT0.Add(30*time.Minute + time.Second)
	dec := tickWithDemand(t, c, cfg, 200, now)
	if dec.Shares[2] == 0.6 || math.Abs(dec.Shares[2]-0.6) > cfg.Commander.MaxShareChange+1e-9 {
		t.Fatalf("after the pin lapsed: p3 share %g, want a step of at most max_share_change from 0.6 (first tick %g)", dec.Shares[2], firstP3)
	}
	if firstP3+cfg.Commander.MaxShareChange >= 0.6 {
		t.Fatalf("first p3 share %g: the test needs a pin beyond max_share_change", firstP3)
	}
	if got := rec.kinds(); got != "accepted,applied,expired" {
		t.Fatalf("events %s, want accepted,applied,expired", got)
	}
	if len(c.Overrides()) != 0 {
		t.Fatalf("pins in force after the deadline: %+v", c.Overrides())
	}
}

func containsGuard(g []Applied, name string, domain int) bool {
	for _, a := range g {
		if a.Name == name && a.Domain == domain {
			return true
		}
	}
	return false
}

// BenchmarkDecidePinned is BenchmarkDecide with one domain's share pinned.
func BenchmarkDecidePinned(b *testing.B) {
	cfg := testConfig()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", &nopPublisher{}, nil, 1, 0)
	for _, d := range []string{"p0", "p1", "p3"} {
		c.OnReport(report(cfg, d, 300, 0.1, now))
	}
	pin := pinShare("p1", 0.6, now, wire.MaxOverride)
	pin.Cluster = cfg.Cluster.Name
	if ok, why := c.OnOverride(pin, now); !ok {
		b.Fatal(why)
	}
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Second)
		c.Decide(now)
	}
}
