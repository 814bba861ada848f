package scenario

import (
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// World is a cluster config and one scenario with its traces: everything a
// simulation needs.
type World struct {
	Config *domains.Config
	sim.Scenario
}

// LoadWorld reads and validates the cluster config at configPath and loads
// the scenario at scenarioPath for it (Load).
func LoadWorld(configPath, scenarioPath string) (World, error) {
	cfg, err := config.LoadFile(configPath)
	if err != nil {
		return World{}, err
	}
	sc, err := Load(cfg, scenarioPath)
	if err != nil {
		return World{}, err
	}
	return World{Config: cfg, Scenario: sc}, nil
}

// Load reads the scenario file at path for cfg and the traces it names,
// checked as a simulation would (Traffic).
func Load(cfg *domains.Config, path string) (sim.Scenario, error) {
	sc, err := config.LoadScenarioFile(path, cfg)
	if err != nil {
		return sim.Scenario{}, err
	}
	traces, err := Traffic(cfg, sc)
	if err != nil {
		return sim.Scenario{}, err
	}
	return sim.Scenario{Scenario: sc, Traces: traces}, nil
}

// LoadAll loads the scenario files of paths for cfg (Load), in order.
func LoadAll(cfg *domains.Config, paths []string) ([]sim.Scenario, error) {
	var scs []sim.Scenario
	for _, path := range paths {
		sc, err := Load(cfg, path)
		if err != nil {
			return nil, err
		}
		scs = append(scs, sc)
	}
	return scs, nil
}

// Read reads the scenario file at path for cfg and the traces it names,
// leaving the traffic's check to sim.New.
func Read(cfg *domains.Config, path string) (sim.Scenario, error) {
	sc, err := config.LoadScenarioFile(path, cfg)
	if err != nil {
		return sim.Scenario{}, err
	}
	traces, err := trace.Load(sc)
	if err != nil {
		return sim.Scenario{}, err
	}
	return sim.Scenario{Scenario: sc, Traces: traces}, nil
}

// Traffic reads every trace sc names and checks them against the scenario
// as a simulation of cfg would (sim.CheckTraffic); a nil cfg skips the
// check.
func Traffic(cfg *domains.Config, sc *domains.Scenario) (map[string][]trace.Series, error) {
	traces, err := trace.Load(sc)
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		if err := sim.CheckTraffic(cfg, sc, traces); err != nil {
			return nil, err
		}
	}
	return traces, nil
}
