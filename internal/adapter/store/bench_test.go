package store

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"
)

// realisticStep is a Soldier-sized step: 40 observations, 10 actions,
// 6 reward terms, 5 outcomes, 1 guard, with seeded values.
func realisticStep(rng *rand.Rand, id string, layout []string) Step {
	st := Step{
		Episode: id,
		Obs:     make([]float64, len(layout)),
		Action:  make(map[string]float64, 10),
		Reward:  make(map[string]float64, 6),
		Outcome: make(map[string]float64, 5),
		Guards:  []Guard{{Name: "budget-cap", Target: "replicas/app-3", Before: 14, After: 12, Reason: "spend over budget x 1.1"}},
	}
	for i := range st.Obs {
		st.Obs[i] = rng.NormFloat64()
	}
	for i := range 8 {
		st.Action[fmt.Sprintf("replicas/app-%d", i)] = float64(rng.IntN(50) + 2)
	}
	st.Action["share"], st.Action["cores"] = rng.Float64(), rng.Float64()*2000
	for _, k := range []string{"slo", "budget", "alignment", "oscillation", "cold_start", "total"} {
		st.Reward[k] = rng.Float64()*2 - 1
	}
	for _, k := range []string{"p99_seconds", "error_rate", "cost_core_hours", "slo_compliant", "replicas"} {
		st.Outcome[k] = rng.Float64()
	}
	return st
}

// BenchmarkAppend measures batched appends of realistic steps to a real file
// (fsync per batch). Run: go test ./internal/adapter/store/ -run '^$' -bench Append -benchtime 20000x
func BenchmarkAppend(b *testing.B) {
	for _, batch := range []int{1, 64, 256, 1024} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			layout := make([]string, 40)
			for i := range layout {
				layout[i] = fmt.Sprintf("f%02d", i)
			}
			e := Episode{ID: "sol-payment", Level: "soldier", Domain: "payment", ObsLayout: layout, ObsVersion: 1, Started: t0}
			if err := s.BeginEpisode(e); err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			st := realisticStep(rng, e.ID, layout)
			a := s.NewAppender(batch, 0)
			b.ReportAllocs()
			var seq uint64
			for b.Loop() {
				seq++
				st.Seq = seq
				st.At = t0.Add(time.Duration(seq) * 10 * time.Second)
				if err := a.Append(st); err != nil {
					b.Fatal(err)
				}
			}
			if err := a.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}
