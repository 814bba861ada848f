package reward

import "fmt"

// CommanderWeightNames, SoldierWeightNames and ServiceWeightNames name each
// weight as operators write it in the config's reward block, in field order.
var (
	CommanderWeightNames = []string{"adherence", "degradation", "cost", "churn", "proactivity", "floor_proximity", "floor_margin", "energy"}
	SoldierWeightNames   = []string{"adherence", "utilisation", "alignment", "oscillation", "cold_start", "utilisation_target"}
	ServiceWeightNames   = []string{"sla", "errors", "cpu", "action", "downstream", "error_threshold"}
)

// Set sets the named weight (see CommanderWeightNames).
func (w *CommanderWeights) Set(name string, v float64) error {
	p := map[string]*float64{"adherence": &w.Adherence, "degradation": &w.Degradation, "cost": &w.Cost, "churn": &w.Churn,
		"proactivity": &w.Proactivity, "floor_proximity": &w.FloorProximity, "floor_margin": &w.FloorMargin, "energy": &w.Energy}[name]
	return set(p, name, v)
}

// Set sets the named weight (see SoldierWeightNames).
func (w *SoldierWeights) Set(name string, v float64) error {
	p := map[string]*float64{"adherence": &w.Adherence, "utilisation": &w.Utilisation, "alignment": &w.Alignment,
		"oscillation": &w.Oscillation, "cold_start": &w.ColdStart, "utilisation_target": &w.UtilisationTarget}[name]
	return set(p, name, v)
}

// Set sets the named weight (see ServiceWeightNames).
func (w *ServiceWeights) Set(name string, v float64) error {
	p := map[string]*float64{"sla": &w.SLA, "errors": &w.Errors, "cpu": &w.CPU, "action": &w.Action,
		"downstream": &w.Downstream, "error_threshold": &w.ErrorThreshold}[name]
	return set(p, name, v)
}

func set(p *float64, name string, v float64) error {
	if p == nil {
		return fmt.Errorf("unknown reward weight %q", name)
	}
	*p = v
	return nil
}
