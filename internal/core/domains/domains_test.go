package domains

import (
	"testing"
	"time"
)

func TestAppsExpandSetsAndMapDependencies(t *testing.T) {
	c := &Config{Domains: []Domain{
		{Name: "pay", AppSets: []AppSet{{Name: "checkout", Count: 3, DependsOn: []string{"fraud/scoring"}}}},
		{Name: "fraud", AppSets: []AppSet{{Name: "scoring", Count: 2}, {Name: "rules", Count: 1}}},
	}}
	apps := c.Apps()
	if len(apps) != 6 || c.AppCount() != 6 {
		t.Fatalf("%d apps, want 6", len(apps))
	}
	names := []string{"pay/checkout-0", "pay/checkout-1", "pay/checkout-2", "fraud/scoring-0", "fraud/scoring-1", "fraud/rules"}
	for i, want := range names {
		if apps[i].Name != want || apps[i].ID != i {
			t.Fatalf("app %d is %q (id %d), want %q", i, apps[i].Name, apps[i].ID, want)
		}
	}
	// App i of a set calls app i mod n of the callee set.
	for i, want := range []int{3, 4, 3} {
		if len(apps[i].Deps) != 1 || apps[i].Deps[0] != want {
			t.Fatalf("%s calls %v, want [%d]", apps[i].Name, apps[i].Deps, want)
		}
	}
}

func TestEventFactorRampsHoldsAndRepeats(t *testing.T) {
	e := Event{At: time.Hour, Ramp: 10 * time.Minute, Hold: 20 * time.Minute, Every: 24 * time.Hour}
	tests := []struct {
		at   time.Duration
		want float64
	}{
		{0, 0},
		{time.Hour + 5*time.Minute, 0.5},
		{time.Hour + 15*time.Minute, 1},
		{time.Hour + 35*time.Minute, 0.5},
		{time.Hour + 41*time.Minute, 0},
		{25*time.Hour + 15*time.Minute, 1}, // the next day
	}
	for _, tt := range tests {
		if got := e.Factor(tt.at); got != tt.want {
			t.Errorf("Factor(%s) = %v, want %v", tt.at, got, tt.want)
		}
	}
}

func TestDefaultsFillOnlyZeroFields(t *testing.T) {
	c := &Config{Soldier: Soldier{Tick: 5 * time.Second}, Domains: []Domain{{AppSets: []AppSet{{MaxReplicas: 7}}}}}
	c.Defaults()
	c.Defaults() // idempotent
	if c.Soldier.Tick != 5*time.Second || c.Commander.Tick != time.Minute || c.Commander.DirectiveTTL != 3*time.Minute {
		t.Fatalf("ticks: soldier %s commander %s ttl %s", c.Soldier.Tick, c.Commander.Tick, c.Commander.DirectiveTTL)
	}
	a := c.Domains[0].AppSets[0]
	if a.MaxReplicas != 7 || a.MinReplicas != 1 || a.Count != 1 || a.Timeout != 5*time.Second {
		t.Fatalf("app set defaults: %+v", a)
	}
}
