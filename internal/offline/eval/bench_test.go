package eval

import (
	"testing"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// BenchmarkObserve is the per-tick accounting of one 10 s tick of the
// 1,550-app example (the tick itself is stepped outside the timer), with and
// without per-minute sampling.
func BenchmarkObserve(b *testing.B) {
	cfg, err := config.LoadFile("../../../examples/paymentscale.hcl")
	if err != nil {
		b.Fatal(err)
	}
	sc, err := config.LoadScenarioFile("../../../examples/scenarios/slow-dependency.hcl", cfg)
	if err != nil {
		b.Fatal(err)
	}
	traces, err := trace.Load(sc)
	if err != nil {
		b.Fatal(err)
	}
	for _, sample := range []bool{false, true} {
		name := "unsampled"
		if sample {
			name = "sampled"
		}
		b.Run(name, func(b *testing.B) {
			s, err := sim.New(cfg, sc, traces)
			if err != nil {
				b.Fatal(err)
			}
			p, err := baseline.New("static", cfg, s)
			if err != nil {
				b.Fatal(err)
			}
			m := newMeter(cfg, s, sample)
			for range 360 {
				p.Decide(s.Now(), s.Telemetry(), s.Targets())
				s.Step()
			}
			b.ReportAllocs()
			for b.Loop() {
				if s.Done() {
					b.Fatal("scenario ended; lower -benchtime")
				}
				b.StopTimer()
				p.Decide(s.Now(), s.Telemetry(), s.Targets())
				s.Step()
				b.StartTimer()
				m.observe(s)
			}
		})
	}
}
