package reward

import (
	"math"
	"strings"
	"testing"
)

// quiet is a service step within its SLA, 1% errors, 2 of 8 cores, no action.
func quiet() ServiceInput {
	return ServiceInput{P99: 0.08, SLA: 0.1, ErrorRate: 0.01, CPUCores: 2, MaxCPUCores: 8,
		CPUUtilDownstream: 0.5, DownstreamThreshold: 0.8}
}

func serviceWith(f func(*ServiceInput)) ServiceInput {
	in := quiet()
	f(&in)
	return in
}

func TestServiceTerms(t *testing.T) {
	w := DefaultServiceWeights()
	for _, tc := range []struct {
		name string
		in   ServiceInput
		term string
		want float64
	}{
		{"within the SLA scores 0", quiet(), "sla", 0},
		{"the violation ratio is p99 / SLA - 1", serviceWith(func(in *ServiceInput) { in.P99 = 0.13 }), "sla", -0.3},
		{"the violation ratio clips at 1", serviceWith(func(in *ServiceInput) { in.P99 = 1 }), "sla", -1},
		{"no SLA reads as met", serviceWith(func(in *ServiceInput) { in.SLA = 0; in.P99 = 1 }), "sla", 0},

		{"1% errors are free", quiet(), "errors", 0},
		{"errors above 1% count", serviceWith(func(in *ServiceInput) { in.ErrorRate = 0.05 }), "errors", -0.04},

		{"CPU cost is normalised by max cores", quiet(), "cpu", -0.25},
		{"no max reads as one core", serviceWith(func(in *ServiceInput) { in.CPUCores, in.MaxCPUCores = 0.5, 0 }), "cpu", -0.5},
		{"CPU cost clips at 1", serviceWith(func(in *ServiceInput) { in.CPUCores = 20 }), "cpu", -1},

		{"no action is free", quiet(), "action", 0},
		{"an action costs 1", serviceWith(func(in *ServiceInput) { in.Acted = true }), "action", -1},

		{"scaling up under a calm dependency is free", serviceWith(func(in *ServiceInput) { in.Acted, in.ScaledUp = true, true }), "downstream", 0},
		{"scaling up into a busy dependency costs 1", serviceWith(func(in *ServiceInput) {
			in.Acted, in.ScaledUp, in.CPUUtilDownstream = true, true, 0.9
		}), "downstream", -1},
		{"scaling down under a busy dependency is free", serviceWith(func(in *ServiceInput) {
			in.Acted, in.CPUUtilDownstream = true, 0.9
		}), "downstream", 0},
		{"no dependency, no pressure", serviceWith(func(in *ServiceInput) {
			in.Acted, in.ScaledUp, in.CPUUtilDownstream, in.DownstreamThreshold = true, true, 0.9, 0
		}), "downstream", 0},
		{"an unknown downstream utilisation counts as busy", serviceWith(func(in *ServiceInput) {
			in.Acted, in.ScaledUp, in.CPUUtilDownstream = true, true, math.NaN()
		}), "downstream", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := term(t, Service(tc.in, w).Terms(), tc.term); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("%s = %v, want %v", tc.term, got, tc.want)
			}
		})
	}
}

func TestServiceTotal(t *testing.T) {
	in := serviceWith(func(in *ServiceInput) {
		in.P99 = 0.12
		in.ErrorRate = 0.03
		in.Acted, in.ScaledUp, in.CPUUtilDownstream = true, true, 0.95
	})
	b := Service(in, DefaultServiceWeights())
	// R = 10 V + 5 E + 0.1 C + 0.05 A + 1 P
	want := 10*-0.2 +
		5*-0.02 +
		0.1*-0.25 +
		0.05*-1 +
		1*-1
	if math.Abs(b.Total-want) > 1e-9 {
		t.Errorf("Total = %v, want %v (%+v)", b.Total, want, b)
	}
}

func TestServiceTermOrder(t *testing.T) {
	var names []string
	for _, tm := range Service(quiet(), DefaultServiceWeights()).Terms() {
		names = append(names, tm.Name)
	}
	if got, want := strings.Join(names, ","), "sla,errors,cpu,action,downstream"; got != want {
		t.Errorf("terms %s, want %s", got, want)
	}
}
