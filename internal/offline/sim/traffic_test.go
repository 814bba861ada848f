package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// trafficWorld is one domain of n apps fed by traffic, at 10 s ticks, for a
// scenario of duration from the trace's first minute.
func trafficWorld(n int, duration time.Duration, traffic ...domains.Traffic) (*domains.Config, *domains.Scenario) {
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "t", CapacityCores: 4000},
		Domains: []domains.Domain{
			{Name: "d", SLO: domains.SLO{LatencyP99: time.Second},
				AppSets: []domains.AppSet{{Name: "a", Count: n, CPUPerReplica: 1, ServiceTime: 10 * time.Millisecond}}},
			{Name: "e", SLO: domains.SLO{LatencyP99: time.Second},
				AppSets: []domains.AppSet{{Name: "b", Count: n, CPUPerReplica: 1, ServiceTime: 10 * time.Millisecond}}},
		},
	}
	cfg.Defaults()
	sc := &domains.Scenario{Name: "t", Duration: duration, Seed: 3, Traffic: traffic}
	sc.Defaults()
	return cfg, sc
}

func mustDemand(t *testing.T, cfg *domains.Config, sc *domains.Scenario, traces map[string][]trace.Series) []demand {
	t.Helper()
	dem, err := buildDemand(cfg, cfg.Apps(), sc, traces)
	if err != nil {
		t.Fatal(err)
	}
	return dem
}

// shares is each of domain d's apps' share of its demand (scale over the sum).
func shares(dem []demand, first, n int) []float64 {
	sum := 0.0
	for _, d := range dem[first : first+n] {
		sum += d.scale
	}
	out := make([]float64, n)
	for k, d := range dem[first : first+n] {
		out[k] = d.scale / sum
	}
	return out
}

func flatTrace(n int, v float64) []float64 {
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = v
	}
	return vals
}

// TestAppSkew pins app_skew, the sigma of the log-normal weights that split a
// timeseries trace's demand between a domain's apps.
func TestAppSkew(t *testing.T) {
	const n = 50
	ts := func(skew float64, equal bool) domains.Traffic {
		return domains.Traffic{Domain: "d", Format: domains.FormatTimeseries, PeakRPS: 1000, AppSkew: skew, EqualShares: equal}
	}
	other := domains.Traffic{Domain: "e", Format: domains.FormatTimeseries, PeakRPS: 1000}
	traces := map[string][]trace.Series{"d": {{Values: flatTrace(120, 1)}}, "e": {{Values: flatTrace(120, 1)}}}
	run := func(tr domains.Traffic) (d, e []float64) {
		cfg, sc := trafficWorld(n, time.Hour, tr, other)
		dem := mustDemand(t, cfg, sc, traces)
		return shares(dem, 0, n), shares(dem, n, n)
	}
	base, baseE := run(ts(1, false))

	t.Run("equal shares at app_skew 0", func(t *testing.T) {
		got, _ := run(ts(0, true))
		for k, s := range got {
			if math.Abs(s-1.0/n) > 1e-12 {
				t.Fatalf("app %d: share %v, want %v", k, s, 1.0/n)
			}
		}
	})
	t.Run("an unset app_skew is the default 1", func(t *testing.T) {
		cfg, sc := trafficWorld(n, time.Hour, ts(0, false), other)
		sc.Traffic[0].AppSkew = 0 // as if Defaults had not run
		got := shares(mustDemand(t, cfg, sc, traces), 0, n)
		for k := range got {
			if got[k] != base[k] {
				t.Fatalf("app %d: share %v, want the default's %v", k, got[k], base[k])
			}
		}
	})
	t.Run("the log of a weight ratio scales with app_skew", func(t *testing.T) {
		got, _ := run(ts(3, false))
		for k := 1; k < n; k++ {
			want := 3 * math.Log(base[k]/base[0])
			if l := math.Log(got[k] / got[0]); math.Abs(l-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Fatalf("app %d: log share ratio %v at app_skew 3, want 3 x %v", k, l, want/3)
			}
		}
		if top(got, 5) <= top(base, 5) {
			t.Fatalf("top 5 apps carry %.2f at app_skew 3 and %.2f at 1; want more at 3", top(got, 5), top(base, 5))
		}
	})
	t.Run("a domain's app_skew leaves the other domains' shares alone", func(t *testing.T) {
		for _, tr := range []domains.Traffic{ts(0, true), ts(3, false)} {
			_, e := run(tr)
			for k := range e {
				if e[k] != baseE[k] {
					t.Fatalf("app_skew %v of domain d moved domain e's app %d: %v, want %v", tr.AppSkew, k, e[k], baseE[k])
				}
			}
		}
	})
}

// top is the sum of the k largest of s.
func top(s []float64, k int) float64 {
	c := append([]float64(nil), s...)
	sum := 0.0
	for range k {
		j := 0
		for i := range c {
			if c[i] > c[j] {
				j = i
			}
		}
		sum += c[j]
		c[j] = -1
	}
	return sum
}

// TestPeakRPSOf pins peak_rps_of: which maximum of the trace maps to
// peak_rps, the whole trace's or the replayed window's.
func TestPeakRPSOf(t *testing.T) {
	start := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	// A quiet first hour at 100, a busy second at 400, a spike of 800 at
	// minute 61, and 200 from minute 120 on.
	vals := make([]float64, 180)
	for i := range vals {
		switch {
		case i < 60:
			vals[i] = 100
		case i < 120:
			vals[i] = 400
		default:
			vals[i] = 200
		}
	}
	vals[61] = 800
	az := []trace.Series{{Name: "f0", Values: vals}, {Name: "f1", Values: flatTrace(180, 50)}}
	ts := []trace.Series{{Name: "ts", Start: start, Values: vals}}
	cases := []struct {
		name     string
		format   domains.TraceFormat
		of       domains.PeakOf
		start    time.Time // scenario start
		duration time.Duration
		want     float64 // the domain's rate at its first minute, for peak_rps 1000
	}{
		{name: "trace: the whole trace's maximum maps to peak_rps", format: domains.FormatTimeseries, of: domains.PeakOfTrace,
			start: start, duration: time.Hour, want: 1000 * 100.0 / 800},
		{name: "window: the replayed minutes' maximum maps to peak_rps", format: domains.FormatTimeseries, of: domains.PeakOfWindow,
			start: start, duration: 59 * time.Minute, want: 1000},
		{name: "window: the minute at the scenario's end is replayed", format: domains.FormatTimeseries, of: domains.PeakOfWindow,
			start: start, duration: time.Hour, want: 1000 * 100.0 / 400},
		{name: "window: from the scenario's start", format: domains.FormatTimeseries, of: domains.PeakOfWindow,
			start: start.Add(2 * time.Hour), duration: 30 * time.Minute, want: 1000},
		{name: "trace: azure-functions map the summed maxima", format: domains.FormatAzureFunctions, of: domains.PeakOfTrace,
			duration: time.Hour, want: 1000 * 150.0 / 850},
		{name: "window: azure-functions map the summed maxima within the window", format: domains.FormatAzureFunctions, of: domains.PeakOfWindow,
			start: time.Date(2019, 7, 15, 2, 0, 0, 0, time.UTC), duration: 30 * time.Minute, want: 1000},
		{name: "window: azure-functions from the scenario's time of day", format: domains.FormatAzureFunctions, of: domains.PeakOfWindow,
			start: time.Date(2019, 7, 15, 0, 30, 0, 0, time.UTC), duration: 2 * time.Hour, want: 1000 * 150.0 / 850},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := domains.Traffic{Domain: "d", Format: tc.format, PeakRPS: 1000, PeakRPSOf: tc.of}
			series := ts
			if tc.format == domains.FormatAzureFunctions {
				series = az
			}
			cfg, sc := trafficWorld(2, tc.duration, tr)
			sc.Start = tc.start
			dem := mustDemand(t, cfg, sc, map[string][]trace.Series{"d": series})
			got := dem[0].rps(0, 0) + dem[1].rps(0, 0)
			if math.Abs(got-tc.want) > 1e-3 {
				t.Fatalf("rate at the first minute: %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("window: past the trace's end it wraps as the replay does", func(t *testing.T) {
		short := flatTrace(10, 100)
		short[2] = 1000
		tr := domains.Traffic{Domain: "d", Format: domains.FormatTimeseries, PeakRPS: 1000, PeakRPSOf: domains.PeakOfWindow}
		cfg, sc := trafficWorld(2, 5*time.Minute, tr) // minutes 8, 9, then 0 to 3
		sc.Start = start.Add(8 * time.Minute)
		dem := mustDemand(t, cfg, sc, map[string][]trace.Series{"d": {{Start: start, Values: short}}})
		if got := dem[0].rps(4, 0) + dem[1].rps(4, 0); math.Abs(got-1000) > 1e-3 {
			t.Fatalf("rate at the wrapped spike: %v, want 1000", got)
		}
	})
	t.Run("window: a window of zeros is an error", func(t *testing.T) {
		quiet := append(flatTrace(60, 0), flatTrace(60, 5)...)
		tr := domains.Traffic{Domain: "d", Format: domains.FormatTimeseries, PeakRPS: 1000, PeakRPSOf: domains.PeakOfWindow}
		cfg, sc := trafficWorld(2, 30*time.Minute, tr)
		_, err := buildDemand(cfg, cfg.Apps(), sc, map[string][]trace.Series{"d": {{Values: quiet}}})
		if err == nil || !strings.Contains(err.Error(), "all zero in the 31 minutes the scenario replays") {
			t.Fatalf("got %v, want an error about the all-zero window", err)
		}
	})
}

// TestFunctionRows pins function_rows: only the even or odd rows (0-based, in
// file order) of an azure-functions trace are candidates, before ranking and
// function_offset and function_stride.
func TestFunctionRows(t *testing.T) {
	// Row i's function has a flat rate of peaks[i]: the busiest is row 1.
	peaks := []float64{5, 9, 2, 7, 4, 8}
	var series []trace.Series
	for i, p := range peaks {
		series = append(series, trace.Series{Name: string(rune('a' + i)), Values: flatTrace(60, p)})
	}
	cases := []struct {
		name           string
		rows           domains.Rows
		offset, stride int
		want           []float64 // the picked functions' rates, in app order
	}{
		{name: "all rows, from the busiest down", rows: domains.RowsAll, stride: 1, want: []float64{9, 8, 7}},
		{name: "unset is all rows", rows: "", stride: 1, want: []float64{9, 8, 7}},
		{name: "even rows are rows 0, 2, 4", rows: domains.RowsEven, stride: 1, want: []float64{5, 4, 2}},
		{name: "odd rows are rows 1, 3, 5", rows: domains.RowsOdd, stride: 1, want: []float64{9, 8, 7}},
		{name: "offset and stride rank within the rows", rows: domains.RowsEven, offset: 1, stride: 2, want: []float64{4, 5, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := domains.Traffic{Domain: "d", Format: domains.FormatAzureFunctions, PeakRPS: 1000,
				FunctionRows: tc.rows, FunctionOffset: tc.offset, FunctionStride: tc.stride}
			cfg, sc := trafficWorld(3, time.Hour, tr)
			dem := mustDemand(t, cfg, sc, map[string][]trace.Series{"d": series})
			for k, want := range tc.want {
				if got := float64(dem[k].series[0]); got != want {
					t.Fatalf("app %d: function of rate %v, want %v (apps want %v)", k, got, want, tc.want)
				}
			}
		})
	}

	t.Run("even and odd rows share no function", func(t *testing.T) {
		picked := map[float64]domains.Rows{}
		for _, rows := range []domains.Rows{domains.RowsEven, domains.RowsOdd} {
			tr := domains.Traffic{Domain: "d", Format: domains.FormatAzureFunctions, PeakRPS: 1000, FunctionRows: rows, FunctionStride: 1}
			cfg, sc := trafficWorld(3, time.Hour, tr)
			for k, d := range mustDemand(t, cfg, sc, map[string][]trace.Series{"d": series})[:3] {
				v := float64(d.series[0])
				if other, dup := picked[v]; dup {
					t.Fatalf("app %d of the %s rows has the function of rate %v, also picked from the %s rows", k, rows, v, other)
				}
				picked[v] = rows
			}
		}
	})
	t.Run("a trace without odd rows is an error", func(t *testing.T) {
		tr := domains.Traffic{Domain: "d", Format: domains.FormatAzureFunctions, PeakRPS: 1000, FunctionRows: domains.RowsOdd, FunctionStride: 1}
		cfg, sc := trafficWorld(3, time.Hour, tr)
		_, err := buildDemand(cfg, cfg.Apps(), sc, map[string][]trace.Series{"d": series[:1]})
		if err == nil || !strings.Contains(err.Error(), "has no odd rows") {
			t.Fatalf("got %v, want an error about the missing odd rows", err)
		}
	})
}

func TestFunctionsSummed(t *testing.T) {
	// Row i's function runs at rates[i] in minute 0 and twice that in minute 1.
	rates := []float64{5, 9, 2, 7}
	var series []trace.Series
	for i, p := range rates {
		v := flatTrace(60, p)
		v[1] = 2 * p
		series = append(series, trace.Series{Name: string(rune('a' + i)), Values: v})
	}
	traces := map[string][]trace.Series{"d": series}
	summed := func(rows domains.Rows, offset, stride int, skew float64, equal bool) []demand {
		tr := domains.Traffic{Domain: "d", Format: domains.FormatAzureFunctions, PeakRPS: 1000, FunctionRows: rows,
			FunctionOffset: offset, FunctionStride: stride, Functions: domains.FunctionsSummed, AppSkew: skew, EqualShares: equal}
		cfg, sc := trafficWorld(5, time.Hour, tr)
		return mustDemand(t, cfg, sc, traces)[:5]
	}
	t.Run("the picked functions' sum is one shape for every app", func(t *testing.T) {
		dem := summed(domains.RowsAll, 0, 1, 1, false)
		for k, d := range dem {
			if got := d.rps(0, 0) / d.scale; math.Abs(got-0.5) > 1e-6 {
				t.Errorf("app %d: minute 0 at %v of the peak, want 0.5 (the sum 23 of a peak of 46)", k, got)
			}
		}
	})
	t.Run("the apps' rates sum to peak_rps at the peak", func(t *testing.T) {
		total := 0.0
		for _, d := range summed(domains.RowsAll, 0, 1, 1.6, false) {
			total += d.rps(1, 0)
		}
		if math.Abs(total-1000) > 1e-3 {
			t.Errorf("apps sum to %v at the peak, want 1000", total)
		}
	})
	t.Run("equal shares split the sum evenly", func(t *testing.T) {
		for k, d := range summed(domains.RowsAll, 0, 1, 0, true) {
			if math.Abs(d.rps(1, 0)-200) > 1e-3 {
				t.Errorf("app %d: %v at the peak, want 200", k, d.rps(1, 0))
			}
		}
	})
	t.Run("rows, offset and stride choose the functions summed", func(t *testing.T) {
		// Odd rows are 9 and 7; offset 1 stride 1 keeps only the 7, whose
		// minute 0 is half its peak as well: the shape cannot tell, so check
		// the scale before normalising through a window-free peak.
		odd := summed(domains.RowsOdd, 0, 1, 0, true)
		if got := odd[0].rps(0, 0); math.Abs(got-100) > 1e-3 {
			t.Errorf("odd rows: minute 0 at %v, want 100 (half of the 200 each app has at the peak)", got)
		}
		mixed := append([]trace.Series(nil), series...)
		mixed[3].Values = flatTrace(60, 7) // rank 1 of the odd rows is now flat
		tr := domains.Traffic{Domain: "d", Format: domains.FormatAzureFunctions, PeakRPS: 1000, FunctionRows: domains.RowsOdd,
			FunctionOffset: 1, FunctionStride: 1, Functions: domains.FunctionsSummed, EqualShares: true}
		cfg, sc := trafficWorld(5, time.Hour, tr)
		d := mustDemand(t, cfg, sc, map[string][]trace.Series{"d": mixed})[0]
		if got := d.rps(0, 0); math.Abs(got-200) > 1e-3 {
			t.Errorf("only the flat function summed: minute 0 at %v, want 200 (flat at the peak)", got)
		}
	})
}
