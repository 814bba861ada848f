package sim

import "testing"

func TestCascades(t *testing.T) {
	tests := []struct {
		name    string
		targets map[int]int32 // app id -> target for one step; apps 0, 1 call app 2
		want    int
	}{
		{"healthy callers and callee do not cascade", nil, 0},
		{"a starved callee cascades into both callers", map[int]int32{2: 0}, 2},
		{"a starved caller breaches on its own, not by cascade", map[int]int32{0: 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, sc, tr := world(400, 400, true)
			s := mustNew(t, cfg, sc, tr)
			for id, n := range tt.targets {
				s.targets[id] = n
			}
			s.Step()
			got := make([]int, 1)
			s.AddCascades(got)
			if got[0] != tt.want {
				t.Fatalf("cascading apps %d, want %d (apps: %+v)", got[0], tt.want, s.Current().Apps)
			}
		})
	}
}

func TestCurrentIsTheNewestTick(t *testing.T) {
	cfg, sc, tr := world(400, 400, false)
	cfg.Cluster.TelemetryLag = 30e9 // 3 ticks
	s := mustNew(t, cfg, sc, tr)
	for range 5 {
		s.Step()
	}
	if got, want := s.Current().At, s.Now(); !got.Equal(want) {
		t.Fatalf("Current().At = %s, want the step just taken, %s", got, want)
	}
	if lag := s.Now().Sub(s.Telemetry().At); lag != 30e9 {
		t.Fatalf("Telemetry() is %s old, want 30s", lag)
	}
}

func TestDomainTicksAddUpToCompliance(t *testing.T) {
	cfg, sc, tr := world(400, 400, false)
	s := mustNew(t, cfg, sc, tr)
	m := s.Run(hold{})
	with, breached := s.DomainTicks(0)
	if with != 3*float64(s.Steps()) || 1-breached/with != m.Domains[0].SLOCompliance {
		t.Fatalf("DomainTicks = %v, %v over %d steps; Metrics compliance %v", with, breached, s.Steps(), m.Domains[0].SLOCompliance)
	}
}

func TestInspectDoesNotAllocate(t *testing.T) {
	cfg, sc, tr := world(400, 400, false)
	s := mustNew(t, cfg, sc, tr)
	buf := make([]int, 1)
	allocs := testing.AllocsPerRun(100, func() {
		s.Step()
		_ = s.Current()
		s.AddCascades(buf)
		_, _ = s.DomainTicks(0)
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per tick, want 0", allocs)
	}
}
