package store

import "time"

// Episode is one run of one policy at one level: a Commander term or a
// Soldier's lifetime for a domain. Steps belong to exactly one episode.
type Episode struct {
	ID     string `json:"id"`
	Level  string `json:"level"`            // "commander" or "soldier"
	Domain string `json:"domain,omitempty"` // empty for the commander
	// Cluster names the cluster the episode ran against.
	Cluster string `json:"cluster,omitempty"`
	// Policy names the policy and checkpoint, e.g. "ppo:models/commander@42"
	// or "hpa".
	Policy string `json:"policy,omitempty"`
	// ObsLayout names each observation feature, in Step.Obs order.
	ObsLayout []string `json:"obs_layout,omitempty"`
	// ObsVersion is the layout version stored with the policy checkpoint.
	ObsVersion int               `json:"obs_version,omitempty"`
	Started    time.Time         `json:"started"`
	Ended      time.Time         `json:"ended,omitzero"` // zero while running
	Meta       map[string]string `json:"meta,omitempty"`
}

// Running reports whether the episode has not been ended.
func (e Episode) Running() bool { return e.Ended.IsZero() }

// Covers reports whether t falls within [Started, Ended], with a running
// episode open-ended.
func (e Episode) Covers(t time.Time) bool {
	return !t.Before(e.Started) && (e.Running() || !t.After(e.Ended))
}
