package soldier

import (
	"math"
	"testing"
	"time"
)

func TestBlindAppsHoldTheirTarget(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	apps := []App{{Name: "d/a", CPU: 1, Min: 2, Max: 10}, {Name: "d/b", CPU: 1, Min: 1, Max: 10}}
	e := NewExecutor(ExecutorConfig{OverageCap: 0.1}, 2)
	obs := &Observation{Apps: []AppObservation{{Replicas: 4, Blind: true}, {Replicas: 4}}}
	proposed := []int32{7, 6}
	guards, writes := e.Apply(t0, apps, obs, math.Inf(1), proposed, nil, nil)
	if proposed[0] != 4 || proposed[1] != 6 {
		t.Errorf("targets %v, want [4 6]: the blind app held, the other moved", proposed)
	}
	if len(guards) != 1 || guards[0] != (Guard{GuardBlind, 0, 7, 4}) {
		t.Errorf("guards %+v, want one blind guard for app 0", guards)
	}
	if len(writes) != 1 || writes[0].App != 1 {
		t.Errorf("writes %+v, want app 1 only", writes)
	}
}
