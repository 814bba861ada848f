package calibrate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
)

// app builds an App from per-tick ready, starting and pending counts.
func appOf(ready, starting, pending []float64) *App {
	n := len(ready)
	a := &App{Ready: ready, Starting: starting, Pending: pending, RPS: make([]float64, n), CPUUtil: make([]float64, n), Target: make([]float64, n)}
	return a
}

func TestStartupDelays(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name                     string
		ready, starting, pending []float64
		want                     []float64
	}{
		{"one scale-up: delay is ticks from starting to ready",
			[]float64{2, 2, 2, 2, 4}, []float64{0, 2, 2, 2, 0}, []float64{0, 0, 0, 0, 0}, []float64{3, 3}},
		{"pending time is not startup: the clock starts when scheduled",
			[]float64{2, 2, 2, 2, 2, 3}, []float64{0, 0, 0, 1, 1, 0}, []float64{0, 1, 1, 0, 0, 0}, []float64{2}},
		{"overlapping scale-ups match first in, first out",
			[]float64{1, 1, 1, 2, 3, 3}, []float64{0, 1, 2, 1, 0, 0}, []float64{0, 0, 0, 0, 0, 0}, []float64{2, 2}},
		{"replicas starting before the recording are not timed",
			[]float64{1, 2, 2, 2, 3}, []float64{1, 0, 1, 1, 0}, []float64{0, 0, 0, 0, 0}, []float64{2}},
		{"a removal restarts the matching",
			[]float64{2, 2, 1, 1, 2}, []float64{0, 2, 1, 1, 0}, []float64{0, 0, 0, 0, 0}, nil},
		{"a missing sample restarts the matching",
			[]float64{1, 1, nan, 1, 2}, []float64{0, 1, nan, 1, 0}, []float64{0, 0, nan, 0, 0}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := startupDelays(appOf(c.ready, c.starting, c.pending), nil)
			if len(got) != len(c.want) {
				t.Fatalf("delays %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("delays %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestServiceSamples(t *testing.T) {
	opt := Options{}
	opt.defaults()
	cases := []struct {
		name             string
		rps, util, ready float64
		want             float64 // 0: no sample
	}{
		{"utilisation law: util x ready x concurrency / rps", 100, 0.5, 4, 0.5 * 4 * 2 / 100},
		{"saturated ticks hide the service time", 100, 1, 4, 0},
		{"idle ticks are noise", 100, 0.01, 4, 0},
		{"no replica serving", 100, 0.5, 0, 0},
		{"no traffic", 0, 0.5, 4, 0},
		{"missing sample", math.NaN(), 0.5, 4, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &App{RPS: []float64{c.rps}, CPUUtil: []float64{c.util}, Ready: []float64{c.ready}}
			got := serviceSamples(a, 2, opt, nil)
			switch {
			case c.want == 0 && len(got) != 0:
				t.Fatalf("samples %v, want none", got)
			case c.want != 0 && (len(got) != 1 || math.Abs(got[0]-c.want) > 1e-12):
				t.Fatalf("samples %v, want [%v]", got, c.want)
			}
		})
	}
}

// chain is a one-domain config: "front" (2 apps) calls "back" (1 app).
func chain(t *testing.T, ratio float64) *domains.Config {
	t.Helper()
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "t", CapacityCores: 400},
		Domains: []domains.Domain{{Name: "d", SLO: domains.SLO{LatencyP99: 300 * time.Millisecond}, AppSets: []domains.AppSet{
			{Name: "front", Count: 2, CPUPerReplica: 1, ServiceTime: 20 * time.Millisecond, DependsOn: []string{"d/back"}, CallRatio: ratio},
			{Name: "back", Count: 1, CPUPerReplica: 1, ServiceTime: 10 * time.Millisecond},
		}}},
	}
	cfg.Defaults()
	return cfg
}

// TestCallRatio pins the two sides of the ratio fit: tick-to-tick changes
// find the ratio under the callee's own, independent demand; the callee's
// rps/caller rps caps it when both move together.
func TestCallRatio(t *testing.T) {
	const n = 400
	cases := []struct {
		name      string
		own       func(k int, front float64) float64 // the callee's own demand
		want, tol float64
	}{
		{"no own demand: the ratio is the level ratio", func(int, float64) float64 { return 0 }, 1.5, 1e-9},
		{"independent own demand: changes find the ratio", func(k int, _ float64) float64 { return 50 + 20*math.Sin(float64(k)*1.7) }, 1.5, 0.05},
		{"own demand jumping with the caller: the cap holds the ratio", func(k int, front float64) float64 {
			if k >= 100 && k < 140 {
				return 2 * front // a flash sale in both
			}
			return 0
		}, 1.5, 1e-9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := chain(t, 1)
			r := NewRun(cfg, "t", time.Unix(0, 0), cfg.Soldier.Tick, n)
			apps := r.Domains[0].Apps
			for k := range n {
				f0 := 100 + 30*math.Sin(float64(k)*0.9) + 10*math.Cos(float64(k)*2.3)
				f1 := 80 + 25*math.Cos(float64(k)*1.3)
				apps[0].RPS[k], apps[1].RPS[k] = f0, f1
				apps[2].RPS[k] = 1.5*(f0+f1) + c.own(k, f0+f1)
			}
			e := callRatio(cfg, newLayout(cfg), []*Run{r}, 0, 0, Options{MinSamples: 30})
			if !e.Applied || math.Abs(e.New-c.want) > c.tol*c.want+5e-4 {
				t.Fatalf("ratio %v (applied %v, %s), want %v", e.New, e.Applied, e.Note, c.want)
			}
			if capped := strings.Contains(e.Note, "capped"); capped != strings.Contains(c.name, "cap") {
				t.Fatalf("capped %v: %s", capped, e.Note)
			}
		})
	}
}

// TestValidateSkipsConstantSeries: a domain whose recording never changes
// (no traffic) is reported but not judged, and does not fail the whole.
func TestValidateSkipsConstantSeries(t *testing.T) {
	cfg := chain(t, 1)
	const n = 120
	r := NewRun(cfg, "idle", time.Unix(0, 0), cfg.Soldier.Tick, n)
	d := &r.Domains[0]
	for k := range n {
		d.P99[k], d.ErrorRate[k] = 0, 0
		for j := range d.Apps {
			a := &d.Apps[j]
			a.RPS[k], a.CPUUtil[k], a.Ready[k], a.Starting[k], a.Pending[k], a.Target[k] = 0, 0, 1, 0, 0, 1
		}
	}
	v, err := Validate(cfg, []*Run{r}, 0.85)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := v.Score("d/p99")
	if !ok || !s.Skipped || s.Pass {
		t.Fatalf("d/p99 score %+v", s)
	}
	if v.Pass() {
		t.Fatalf("a validation with nothing judged passes")
	}
}

func TestFitRejectsARunOfAnotherTick(t *testing.T) {
	cfg := chain(t, 1)
	r := NewRun(cfg, "t", time.Unix(0, 0), 2*cfg.Soldier.Tick, 10)
	if _, err := Fit(cfg, []*Run{r}, Options{}); err == nil || !strings.Contains(err.Error(), "tick") {
		t.Fatalf("err %v", err)
	}
}

const patchSrc = `# keep me
cluster "t" {
  capacity_cores = 400
}
domain "d" {
  slo { latency_p99 = "300ms" }
  apps "front" {
    count = 2
    cpu_per_replica = 1
    service_time = "20ms" # nominal
    depends_on = ["d/back"]
  }
  apps "back" {
    cpu_per_replica = 1
    service_time = "10ms"
  }
}
`

func TestPatchHCL(t *testing.T) {
	sets := []SetFit{
		{Domain: "d", Set: "front", ServiceTime: Estimate{New: 0.0284, Applied: true}, StartupTime: Estimate{New: 50, Applied: true},
			CallRatio: &Estimate{New: 1.25, Applied: true}},
		{Domain: "d", Set: "back", ServiceTime: Estimate{New: 0.5, Applied: false}, StartupTime: Estimate{Old: 30, New: 30, Applied: true}},
	}
	out, err := PatchHCL([]byte(patchSrc), "t.hcl", sets)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(out, "t.hcl")
	if err != nil {
		t.Fatalf("patched config does not load: %v\n%s", err, out)
	}
	front, back := cfg.Domains[0].AppSets[0], cfg.Domains[0].AppSets[1]
	if front.ServiceTime != 28400*time.Microsecond || front.StartupTime != 50*time.Second || front.CallRatio != 1.25 {
		t.Errorf("front: service %s startup %s ratio %v", front.ServiceTime, front.StartupTime, front.CallRatio)
	}
	if back.ServiceTime != 10*time.Millisecond {
		t.Errorf("an estimate that was not applied was written: back service %s", back.ServiceTime)
	}
	if strings.Count(string(out), "startup_time") != 1 {
		t.Errorf("an estimate equal to the configured value was written:\n%s", out)
	}
	if !strings.Contains(string(out), "# keep me") {
		t.Errorf("comments lost:\n%s", out)
	}
	if _, err := PatchHCL([]byte(patchSrc), "t.hcl", []SetFit{{Domain: "d", Set: "nope"}}); err == nil {
		t.Errorf("a set without a block was accepted")
	}
}

// TestServiceTimeShrugsOffNoise: metrics with 15% multiplicative noise and
// 10% of ticks slowed threefold still give the service time within 4%: the
// median moves by the contamination only, to the clean distribution's
// 0.5/0.9 quantile, 0.14 sigma = 2% (a mean would move by 20%). The seed is
// printed.
func TestServiceTimeShrugsOffNoise(t *testing.T) {
	const seed, n, svc, conc = 42, 2000, 0.03, 4
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	a := &App{RPS: make([]float64, n), CPUUtil: make([]float64, n), Ready: make([]float64, n)}
	for k := range n {
		a.Ready[k] = float64(2 + k%7)
		a.RPS[k] = 40 + 60*r.Float64()
		util := a.RPS[k] * svc / (a.Ready[k] * conc)
		if k%10 == 0 {
			util *= 3 // a slow spell: what the median must ignore
		}
		a.CPUUtil[k] = min(1, util*(1+0.15*r.NormFloat64()))
	}
	opt := Options{}
	opt.defaults()
	e := estimate(0.01, serviceSamples(a, conc, opt, nil), 1, opt, "ticks")
	if !e.Applied || math.Abs(e.New/svc-1) > 0.04 {
		t.Fatalf("service time %.5fs from %d samples, true %.5fs", e.New, e.Samples, svc)
	}
}
