package report

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestEstimateUsesTheLearnedServiceTime: an app whose Soldier learned its
// service time is estimated with it, not with the config's prior, and the
// app table shows which. At 50 rps, 4 replicas of one server each: with the
// prior's 100 ms the capacity is 40 rps, a breach; with the learned 20 ms
// it is 200 rps, a load of 0.25, whose M/M/4 p99 is far under 0.5 s.
func TestEstimateUsesTheLearnedServiceTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	app := func(name string, learned float64) App {
		return App{Name: name, CPU: 0.5, ServiceTime: 0.1, Concurrency: 1, LearnedServiceTime: learned,
			RPS: []float64{50, 50}, Live: []float64{4, 4}, Recommended: []float64{4, 4}}
	}
	d := &Domain{Name: "shop", SLO: 0.5, SLOMet: []float64{1, 1}, At: []time.Time{t0, t0.Add(10 * time.Second)},
		Apps: []App{app("shop/prior", 0), app("shop/learned", 0.02)}}
	rec := &Recorded{Tick: 10 * time.Second, Domains: []*Domain{d}, Steps: 2}
	res := Compare(rec)
	by := map[string]AppResult{}
	for _, a := range res[0].Apps {
		by[a.Name] = a
	}
	if p, l := by["shop/prior"], by["shop/learned"]; p.Live.BreachMinutes != 2.0/6 || l.Live.BreachMinutes != 0 ||
		p.Learned || !l.Learned || p.ServiceTime != 0.1 || l.ServiceTime != 0.02 {
		t.Errorf("prior %+v\nlearned %+v\nwant the prior's 100 ms breaching 1/3 min, the learned 20 ms none", p, l)
	}
	if p99 := P99(50, 4, 0.02, 1); !(p99 > 0.02 && p99 < 0.5) || math.IsInf(p99, 1) {
		t.Errorf("p99 at 20 ms %g, want under the SLO", p99)
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, rec, res, 5); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| app | namespace | workload | service time | live HPA bounds |", "| shop/learned | - | - | 20ms learned | not observed |", "| shop/prior | - | - | 100ms | not observed |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report.md has no %q:\n%s", want, b.String())
		}
	}
}
