package sim

import (
	"math"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// noiseWorld is trafficWorld with flat traces, domain d at peakD rps and
// domain e at peakE, n apps each with equal shares, Poisson arrivals and
// traffic d's burst.
func noiseWorld(n int, duration time.Duration, peakD, peakE, burstSigma, burstCorr float64) (*domains.Config, *domains.Scenario, map[string][]trace.Series) {
	d := domains.Traffic{Domain: "d", Format: domains.FormatTimeseries, PeakRPS: peakD, EqualShares: true,
		BurstSigma: burstSigma, BurstCorrelation: burstCorr}
	e := domains.Traffic{Domain: "e", Format: domains.FormatTimeseries, PeakRPS: peakE, EqualShares: true}
	cfg, sc := trafficWorld(n, duration, d, e)
	sc.ArrivalNoise = domains.NoisePoisson
	minutes := int(duration/time.Minute) + 2
	return cfg, sc, map[string][]trace.Series{"d": {{Values: flatTrace(minutes, 1)}}, "e": {{Values: flatTrace(minutes, 1)}}}
}

// lambdas runs s for ticks ticks under hold and returns each tick's arrival
// rates, tick-major.
func lambdas(s *Sim, ticks int) [][]float64 {
	out := make([][]float64, ticks)
	for k := range out {
		s.Step()
		out[k] = make([]float64, len(s.apps))
		for i := range s.apps {
			out[k][i] = s.apps[i].lambda
		}
	}
	return out
}

func TestPoissonNoiseScalesWithTheRate(t *testing.T) {
	const n, ticks = 10, 3000
	// Per app: 10,000 rps (100,000 arrivals a tick: the normal
	// approximation) and 0.4 rps (4 a tick: inversion).
	cfg, sc, tr := noiseWorld(n, time.Duration(ticks)*10*time.Second, n*10000, n*0.4, 0, 0)
	s := mustNew(t, cfg, sc, tr)
	dt := s.dt
	got := lambdas(s, ticks)
	for _, c := range []struct {
		name string
		app  int
		rate float64
	}{{"normal approximation at 100,000 a tick", 0, 10000}, {"inversion at 4 a tick", n, 0.4}} {
		t.Run(c.name, func(t *testing.T) {
			var sum, sq float64
			for k := range got {
				x := got[k][c.app] * dt // the tick's count
				if c.rate*dt < PoissonNormalAbove && x != math.Round(x) {
					t.Fatalf("tick %d: count %v is not whole", k, x)
				}
				sum += x
				sq += x * x
			}
			mean := sum / ticks
			variance := sq/ticks - mean*mean
			want := c.rate * dt
			// The count's mean and variance are both rate x dt (index of
			// dispersion 1); over 3,000 ticks the sample variance is within
			// 10% of it (its relative sd is sqrt(2/3000) = 2.6%).
			if math.Abs(mean-want) > 4*math.Sqrt(want/ticks) {
				t.Errorf("mean count %.4g, want %.4g", mean, want)
			}
			if r := variance / want; r < 0.9 || r > 1.1 {
				t.Errorf("variance/mean %.3f, want 1 (Poisson)", r)
			}
		})
	}
}

func TestBurstIsSharedByADomainsAppsAndSizedByItsSigma(t *testing.T) {
	const n, ticks, sigma, phi = 10, 6 * 600, 0.05, 0.6
	cfg, sc, tr := noiseWorld(n, time.Duration(ticks)*10*time.Second, n*1e6, n*1e6, sigma, phi)
	s := mustNew(t, cfg, sc, tr)
	got := lambdas(s, ticks)
	var minutes []float64 // ln multiplier of domain d at whole minutes
	for k, row := range got {
		// Poisson at 10^7 a tick is 0.03%: the apps of d move together.
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := range n {
			lo, hi = min(lo, row[i]), max(hi, row[i])
		}
		if hi/lo > 1.003 {
			t.Fatalf("tick %d: domain d's apps at %.4g..%.4g: the burst is not shared", k+1, lo, hi)
		}
		for i := n; i < 2*n; i++ {
			if math.Abs(row[i]/1e6-1) > 0.003 {
				t.Fatalf("tick %d: domain e, without burst_sigma, at %.6g rps", k+1, row[i])
			}
		}
		if (k+1)%6 == 0 {
			minutes = append(minutes, math.Log(row[0]/1e6))
		}
	}
	var sum, sq, lag float64
	for m, x := range minutes {
		sum += x
		sq += x * x
		if m > 0 {
			lag += x * minutes[m-1]
		}
	}
	k := float64(len(minutes))
	mean := sum / k
	sd := math.Sqrt(sq/k - mean*mean)
	corr := (lag/(k-1) - mean*mean) / (sd * sd)
	if math.Abs(sd-sigma)/sigma > 0.15 {
		t.Errorf("sd of ln burst %.4f, want %.4f", sd, sigma)
	}
	if math.Abs(corr-phi) > 0.1 {
		t.Errorf("lag-1 minute autocorrelation %.3f, want %.2f", corr, phi)
	}
	if math.Abs(mean+sigma*sigma/2) > 3*sigma/math.Sqrt(k*(1-phi)/(1+phi)) {
		t.Errorf("mean ln burst %.4f, want %.4f (a mean-1 multiplier)", mean, -sigma*sigma/2)
	}
}

func TestFutureReplaysPoissonAndBurstDraws(t *testing.T) {
	cfg, sc, tr := noiseWorld(4, 2*time.Hour, 4*3, 4*5000, 0.1, 0.5)
	s := mustNew(t, cfg, sc, tr)
	for range 17 {
		s.Step()
	}
	f := s.Future()
	for range 200 {
		tick, want, _ := f.Next()
		want = append([]float64(nil), want...)
		s.Step()
		for i := range s.apps {
			if s.apps[i].lambda != want[i] {
				t.Fatalf("tick %d app %d: Future said %v, Step drew %v", tick, i, want[i], s.apps[i].lambda)
			}
		}
	}
}

func TestSameSeedSameRunWithTrafficStructure(t *testing.T) {
	cfg, sc, tr := noiseWorld(6, time.Hour, 600, 50, 0.05, 0.5)
	sc.Traffic[0].AppOwn, sc.Traffic[0].EqualShares, sc.Traffic[0].AppSkew = 0.5, false, 1
	a := lambdas(mustNew(t, cfg, sc, tr), 100)
	b := lambdas(mustNew(t, cfg, sc, tr), 100)
	for k := range a {
		for i := range a[k] {
			if a[k][i] != b[k][i] {
				t.Fatalf("tick %d app %d: %v then %v", k+1, i, a[k][i], b[k][i])
			}
		}
	}
}

func TestAppOwnGivesAppsCorrelatedButDifferentShapes(t *testing.T) {
	const n, minutes, shift = 20, 600, 30
	// A diurnal-like shape with minute-to-minute jitter inside the
	// replayed window and within app_shift of it, and 1000x further out:
	// no app reads further than app_shift.
	vals := make([]float64, 3*minutes)
	for m := range vals {
		vals[m] = 1000
	}
	for m := minutes - shift; m < 2*minutes+2+shift; m++ {
		k := m - minutes
		vals[m] = (2 + math.Sin(2*math.Pi*float64(k)/300)) * (1 + 0.05*math.Sin(float64(k)*1.7))
	}
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := map[string][]trace.Series{"d": {{Start: start, Values: vals}}, "e": {{Start: start, Values: vals}}}
	mk := func(own float64, from, length int) []demand {
		d := domains.Traffic{Domain: "d", Format: domains.FormatTimeseries, PeakRPS: 1000, PeakRPSOf: domains.PeakOfWindow, AppOwn: own, AppShift: shift * time.Minute}
		e := domains.Traffic{Domain: "e", Format: domains.FormatTimeseries, PeakRPS: 1000, PeakRPSOf: domains.PeakOfWindow}
		cfg, sc := trafficWorld(n, time.Duration(length)*time.Minute, d, e)
		sc.Start = start.Add(time.Duration(minutes+from) * time.Minute)
		return mustDemand(t, cfg, sc, tr)
	}
	series := func(d demand, length int) []float64 {
		out := make([]float64, length)
		for m := range out {
			out[m] = d.rps(m, 0) / d.scale
		}
		return out
	}
	split, own := mk(0, 0, minutes), mk(0.5, 0, minutes)
	for k := range n {
		if own[k].scale != split[k].scale {
			t.Fatalf("app %d: share %v with app_own, %v without", k, own[k].scale, split[k].scale)
		}
		for m, v := range series(own[k], minutes) {
			if v > 3.2 {
				t.Fatalf("app %d minute %d: %v: read a minute more than app_shift outside the window", k, m, v)
			}
		}
	}
	distinct := 0
	for k := 1; k < n; k++ {
		c := correlation(series(own[0], minutes), series(own[k], minutes))
		if c < 0.5 {
			t.Errorf("apps 0 and %d: correlation %.3f, want the domain's shape in common (> 0.5)", k, c)
		}
		if c < 0.9999 {
			distinct++
		}
		if s := correlation(series(split[0], minutes), series(split[k], minutes)); s < 0.99999 {
			t.Errorf("app_own 0: apps 0 and %d correlate %.6f, want one shape", k, s)
		}
	}
	if distinct < n/2 {
		t.Errorf("%d of %d apps differ from app 0, want most", distinct, n-1)
	}
	// A scenario cut from this one at the same minutes (a training
	// episode: from minute 100 for 200 minutes) replays the same shapes,
	// up to the scale its own window's peak gives.
	cut := mk(0.5, 100, 200)
	for k := range n {
		whole, part := series(own[k], minutes)[100:300], series(cut[k], 200)
		ratio := part[0] / whole[0]
		for m := range part {
			if math.Abs(part[m]-ratio*whole[m]) > 1e-5*whole[m] {
				t.Fatalf("app %d minute %d: %v in the cut, %v x %v in the whole", k, 100+m, part[m], ratio, whole[m])
			}
		}
	}
}

func correlation(a, b []float64) float64 {
	var sa, sb, saa, sbb, sab float64
	for i := range a {
		sa += a[i]
		sb += b[i]
		saa += a[i] * a[i]
		sbb += b[i] * b[i]
		sab += a[i] * b[i]
	}
	k := float64(len(a))
	return (sab/k - sa*sb/k/k) / math.Sqrt((saa/k-sa*sa/k/k)*(sbb/k-sb*sb/k/k))
}

func TestWrapIsModulo(t *testing.T) {
	for _, c := range []struct{ j, n, want int }{{-3, 10, 7}, {12, 10, 2}, {0, 10, 0}, {9, 10, 9}, {-25, 10, 5}, {5, 1, 0}} {
		if got := wrap(c.j, c.n); got != c.want {
			t.Errorf("wrap(%d, %d) = %d, want %d", c.j, c.n, got, c.want)
		}
	}
}

func TestWarmupIsNotAccounted(t *testing.T) {
	// The trace triples one minute in and falls back at minute 4: the
	// initial state, sized for minute 0, breaches until the policy scales.
	jump := func(at int) (*domains.Config, *domains.Scenario, map[string][]trace.Series) {
		cfg, sc, tr := world(4000, 400, true)
		for m := range tr["d"][0].Values {
			if m >= at && m < at+3 {
				tr["d"][0].Values[m] = 300
			}
		}
		sc.Duration = 30 * time.Minute
		return cfg, sc, tr
	}
	run := func(at int, warmup time.Duration) Metrics {
		cfg, sc, tr := jump(at)
		sc.Warmup = warmup
		return mustNew(t, cfg, sc, tr).Run(hold{})
	}
	counted := run(1, 0)
	if counted.BreachAppMinutes == 0 {
		t.Fatalf("the jump at minute 1 breached nothing without a warm-up; the test needs a breach: %+v", counted)
	}
	warm := run(1, 10*time.Minute)
	if warm.BreachAppMinutes != 0 {
		t.Errorf("a 10 m warm-up still counts %.2f breach app-minutes of a jump in its first minutes", warm.BreachAppMinutes)
	}
	if want := 20 * 60.0; warm.SimSeconds != want {
		t.Errorf("accounted %v s, want %v (30 m - 10 m of warm-up)", warm.SimSeconds, want)
	}
	// The same jump after the warm-up counts as it did at the start.
	late := run(15, 10*time.Minute)
	if late.BreachAppMinutes == 0 {
		t.Errorf("a jump after the warm-up was not counted")
	}
}

func TestStepDoesNotAllocateWithTrafficStructure(t *testing.T) {
	cfg, sc, tr := noiseWorld(50, 6*time.Hour, 50*500, 50*2, 0.05, 0.6)
	sc.Traffic[0].AppOwn, sc.Traffic[0].EqualShares, sc.Traffic[0].AppSkew = 0.5, false, 1.6
	s := mustNew(t, cfg, sc, tr)
	for range 30 {
		s.Step()
	}
	if allocs := testing.AllocsPerRun(200, s.Step); allocs != 0 {
		t.Fatalf("%.1f allocations per tick, want 0", allocs)
	}
}
