package scenario

import (
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// Check is `regiment validate`'s load: the config at configPath and, when
// scenarioPath is not "", the scenario read against it with every trace
// read and checked as a simulation reads it (Traffic), each problem handed
// to problem as it is found. With a broken config the scenario is still
// checked, without its references to domains and app sets. ok is whether
// everything loaded; then, with a scenario, overloads are the apps its
// demand drives past their max_replicas (sim.Overloads).
func Check(configPath, scenarioPath string, problem func(error)) (cfg *domains.Config, sc *domains.Scenario, overloads []sim.Overload, ok bool) {
	cfg, cfgErr := config.LoadFile(configPath)
	if cfgErr != nil {
		problem(cfgErr)
	}
	if scenarioPath == "" {
		return cfg, nil, nil, cfgErr == nil
	}
	sc, err := config.LoadScenarioFile(scenarioPath, cfg)
	if err != nil {
		problem(err)
		return cfg, nil, nil, false
	}
	traces, err := Traffic(cfg, sc)
	if err != nil {
		problem(err)
		return cfg, sc, nil, false
	}
	if cfgErr != nil {
		return cfg, sc, nil, false
	}
	s, err := sim.New(cfg, sc, traces)
	if err != nil {
		problem(err)
		return cfg, sc, nil, false
	}
	return cfg, sc, s.Overloads(), true
}
