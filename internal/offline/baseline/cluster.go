package baseline

import (
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// ClusterHPA is a simulated cluster's own autoscaling on the apps Regiment
// does not write: one HPA (DefaultHPASettings, bounds the app's min and max
// replicas) per app of every domain whose Soldier runs in recommend mode (or
// shadow, its alias). It is what moves those apps in a simulation, as a real
// cluster's HPA controller moves them while such a Soldier only observes and
// records. The set of apps is fixed when it is built.
type ClusterHPA struct {
	hpa     *HPA
	apps    []int   // ids of the apps it scales
	scales  []bool  // per app id: among apps
	scratch []int32 // every app's target, for the HPA's Decide
}

// NewClusterHPA returns the HPAs of cfg's recommend-mode domains, or nil
// when every domain's Soldier writes its own targets (or is off).
func NewClusterHPA(cfg *domains.Config) *ClusterHPA {
	var apps []int
	scales := make([]bool, cfg.AppCount())
	for _, a := range cfg.Apps() {
		if cfg.ModeOf(a.Domain).Recommends() {
			apps, scales[a.ID] = append(apps, a.ID), true
		}
	}
	if len(apps) == 0 {
		return nil
	}
	return &ClusterHPA{hpa: NewHPA(cfg, DefaultHPASettings(cfg)), apps: apps, scales: scales, scratch: make([]int32, len(scales))}
}

// Scales reports whether the HPAs scale app id; false for a nil ClusterHPA.
func (c *ClusterHPA) Scales(id int) bool {
	return c != nil && c.scales[id]
}

// Act lets the HPAs reconcile at now on telemetry t and set their apps'
// targets; the other apps' targets are left alone. A nil ClusterHPA does
// nothing. It does not allocate.
func (c *ClusterHPA) Act(now time.Time, t *sim.Telemetry, targets []int32) {
	if c == nil {
		return
	}
	copy(c.scratch, targets)
	c.hpa.Decide(now, t, c.scratch)
	for _, id := range c.apps {
		targets[id] = c.scratch[id]
	}
}
