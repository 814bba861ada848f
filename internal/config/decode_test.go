package config

import (
	"slices"
	"testing"
)

func TestFieldsOfTaggedNodes(t *testing.T) {
	nodes := map[string]node{
		"config": &configHCL{}, "cluster": &clusterHCL{}, "commander": &commanderHCL{}, "soldier": &soldierHCL{},
		"domain": &domainHCL{}, "slo": &sloHCL{}, "apps": &appSetHCL{}, "store": &storeHCL{},
		"kubernetes": &kubernetesHCL{}, "prometheus": &prometheusHCL{}, "queries": &queriesHCL{}, "workload": &workloadHCL{},
		"ladder": &ladderHCL{}, "fallback": &fallbackHCL{}, "nats": &natsHCL{}, "tls": &natsTLSHCL{},
		"reward": &rewardHCL{}, "scenario file": &scenarioFileHCL{}, "scenario": &scenarioHCL{}, "traffic": &trafficHCL{}, "event": &eventHCL{},
	}
	for name, n := range nodes {
		t.Run("every tagged field of "+name+" is a value with a unique name", func(t *testing.T) {
			var names []string
			for _, f := range fieldsOf(n) { // panics on a tagged field that is not a value
				if f.name == "" || slices.Contains(names, f.name) {
					t.Errorf("attribute %q is empty or repeated", f.name)
				}
				names = append(names, f.name)
			}
		})
	}
	t.Run("attributes keep struct order", func(t *testing.T) {
		var got []string
		for _, f := range fieldsOf(&ladderHCL{}) {
			got = append(got, f.name)
		}
		if want := []string{"alert", "freeze", "revert", "sustain", "cool_off"}; !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
}
