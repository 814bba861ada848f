package soldier

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

func TestEstimatorIsTheMedianOfItsWindow(t *testing.T) {
	add := func(e *Estimator, x float64, n int) {
		for range n {
			e.Add(x)
		}
	}
	tests := []struct {
		rule string
		fill func(e *Estimator)
		want float64
		ok   bool
	}{
		{"no estimate before EstimateMinSamples samples", func(e *Estimator) { add(e, 1, EstimateMinSamples-1) }, 0, false},
		{"one outlier among six moves the median by one rank: (12+13)/2", func(e *Estimator) {
			for _, x := range []float64{10, 1000, 11, 12, 13, 14} {
				e.Add(x)
			}
		}, 12.5, true},
		{"an odd count takes the middle sample", func(e *Estimator) {
			for _, x := range []float64{5, 1, 4, 2, 3, 100, 0.5} {
				e.Add(x)
			}
		}, 3, true},
		{"zero, negative, NaN and infinite samples are dropped", func(e *Estimator) {
			add(e, 2, EstimateMinSamples)
			for _, x := range []float64{0, -1, math.NaN(), math.Inf(1)} {
				e.Add(x)
			}
		}, 2, true},
		{"the window forgets its oldest: 44 ones and 46 twos left of 90 ones then 46 twos", func(e *Estimator) {
			add(e, 1, EstimateWindow)
			add(e, 2, 46)
		}, 2, true},
		{"45 ones and 45 twos left: the mean of the middle two", func(e *Estimator) {
			add(e, 1, EstimateWindow)
			add(e, 2, 45)
		}, 1.5, true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			var e Estimator
			tt.fill(&e)
			got, ok := e.Value()
			if ok != tt.ok || got != tt.want {
				t.Errorf("Value() = %g, %v; want %g, %v (%d samples)", got, ok, tt.want, tt.ok, e.Samples())
			}
		})
	}
}

func TestServiceTimeSample(t *testing.T) {
	// An app of 0.5-core pods whose requests cost 5 ms of CPU serves
	// 0.5 / 0.005 = 100 requests/s a replica at full use: a service time of
	// 10 ms at concurrency 1. At 40 requests/s over 2 ready replicas it uses
	// 40 x 0.005 = 0.2 cores, a utilisation of 0.2 / (2 x 0.5) = 0.2.
	busy := AppObservation{RPS: 40, CPUUtil: 0.2, Ready: 2}
	tests := []struct {
		rule string
		o    AppObservation
		conc float64
		want float64
		ok   bool
	}{
		{"cpu seconds per request over the cpu request: 1 x 0.2 x 2 / 40 = 10 ms", busy, 1, 0.010, true},
		{"concurrency 8 serves 8 at once, each 8 times longer: 8 x 0.25 x 2 / 50 = 80 ms", AppObservation{RPS: 50, CPUUtil: 0.25, Ready: 2}, 8, 0.080, true},
		{"concurrency below 1 counts as 1", busy, 0, 0.010, true},
		{"at most the p99: 1 x 0.5 x 4 / 10 = 200 ms clipped to 150 ms", AppObservation{RPS: 10, CPUUtil: 0.5, Ready: 4, P99: 0.15}, 1, 0.150, true},
		{"a p99 above the sample leaves it", AppObservation{RPS: 40, CPUUtil: 0.2, Ready: 2, P99: 0.3}, 1, 0.010, true},
		{"under LearnMinRPS no sample", AppObservation{RPS: 0.5, CPUUtil: 0.2, Ready: 2}, 1, 0, false},
		{"under LearnMinCPUUtil no sample", AppObservation{RPS: 40, CPUUtil: 0.01, Ready: 2}, 1, 0, false},
		{"no ready replica no sample", AppObservation{RPS: 40, CPUUtil: 0.2}, 1, 0, false},
		{"blind no sample", AppObservation{RPS: 40, CPUUtil: 0.2, Ready: 2, Blind: true}, 1, 0, false},
		{"missing no sample", AppObservation{RPS: 40, CPUUtil: 0.2, Ready: 2, Missing: true}, 1, 0, false},
		{"errors above LearnMaxErrorRate no sample", AppObservation{RPS: 40, CPUUtil: 0.2, Ready: 2, ErrorRate: 0.1}, 1, 0, false},
		{"NaN rps no sample", AppObservation{RPS: math.NaN(), CPUUtil: 0.2, Ready: 2}, 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, ok := ServiceTimeSample(tt.o, tt.conc)
			if ok != tt.ok || math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("ServiceTimeSample = %g, %v; want %g, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// A Soldier sizes an app whose service time it learns from the prior until
// EstimateMinSamples busy ticks, then from the learned value, and records
// it; an app with a configured service time is never touched.
func TestSoldierLearnsTheServiceTimeOfALearningApp(t *testing.T) {
	s, fc, _, rec := newTestSoldier(domains.ModeRecommend)
	prior := 1 / domains.PriorServiceTime.Seconds() // 20 requests/s
	s.cfg.Apps[1].Learn, s.cfg.Apps[1].Capacity = true, prior
	s.learning = newLearning(s.cfg.Apps)
	// d/b: 0.5 cpu x 4 ready / 200 rps = 10 ms (100/s); one tick of idle
	// load gives no sample.
	fc.obs[1] = AppObservation{RPS: 200, CPUUtil: 0.5, Ready: 4, Replicas: 4, P99: 0.05, StartupSeconds: 12}
	idle := AppObservation{RPS: 0.2, CPUUtil: 0.01, Ready: 4, Replicas: 4, StartupSeconds: 12}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	busy := fc.obs[1]
	for k := range EstimateMinSamples + 1 {
		fc.obs[1] = busy
		if k == 2 {
			fc.obs[1] = idle
		}
		if _, err := s.Tick(context.Background(), t0.Add(time.Duration(k)*10*time.Second)); err != nil {
			t.Fatal(err)
		}
		l := rec.got[len(rec.got)-1].Learned
		if len(l) != 1 || l[0].App != "d/b" {
			t.Fatalf("tick %d: learned %+v, want d/b only", k, l)
		}
		busyTicks := k // the idle tick is not a sample
		if k < 2 {
			busyTicks = k + 1
		}
		if l[0].Samples != busyTicks {
			t.Errorf("tick %d: %d samples, want %d", k, l[0].Samples, busyTicks)
		}
		learnt := busyTicks >= EstimateMinSamples
		switch {
		case !learnt && (s.cfg.Apps[1].Capacity != prior || l[0].ServiceTime != 0):
			t.Errorf("tick %d: capacity %g, learned %g; want the prior's %g and nothing learned", k, s.cfg.Apps[1].Capacity, l[0].ServiceTime, prior)
		case learnt && (math.Abs(s.cfg.Apps[1].Capacity-100) > 1e-9 || math.Abs(l[0].ServiceTime-0.010) > 1e-12):
			t.Errorf("tick %d: capacity %g, learned %g; want 100/s from 10 ms", k, s.cfg.Apps[1].Capacity, l[0].ServiceTime)
		}
		if want := 12.0; k+1 >= EstimateMinSamples && l[0].Startup != want {
			t.Errorf("tick %d: startup %g, want %g", k, l[0].Startup, want)
		}
	}
	if s.cfg.Apps[0].Capacity != 100 {
		t.Errorf("d/a, configured, has capacity %g, want its own 100", s.cfg.Apps[0].Capacity)
	}
}

// Without a learning app a Soldier keeps no learning state and records
// nothing learned: a configured domain decides and records as before.
func TestSoldierWithoutLearningAppsRecordsNothingLearned(t *testing.T) {
	s, _, _, rec := newTestSoldier(domains.ModeActive)
	if _, err := s.Tick(context.Background(), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if s.learning != nil || rec.got[0].Learned != nil {
		t.Errorf("learning %v, recorded %v; want none", s.learning, rec.got[0].Learned)
	}
}

func BenchmarkEstimatorValue(b *testing.B) {
	var e Estimator
	for i := range EstimateWindow {
		e.Add(float64(i%17) + 1)
	}
	b.ReportAllocs()
	for b.Loop() {
		e.Add(3)
		e.Value()
	}
}
