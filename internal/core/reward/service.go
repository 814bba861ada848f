package reward

import (
	"errors"
	"fmt"
	"math"
)

// ServiceInput is the outcome of one step of the factored single-service
// policy for one service.
type ServiceInput struct {
	P99, SLA  float64 // p99 response time and its agreed limit, seconds; SLA <= 0: none
	ErrorRate float64 // share of failed requests, [0, 1]
	// CPUCores is what the service's replicas request; MaxCPUCores normalises
	// it, typically max replicas x cores per replica (<= 0 reads as 1 core).
	CPUCores, MaxCPUCores float64
	// CPUUtilDownstream is the CPU utilisation, [0, 1], of the service's
	// busiest downstream dependency, and DownstreamThreshold the utilisation
	// above which scaling up adds pressure to it; DownstreamThreshold <= 0:
	// no dependency, no penalty.
	CPUUtilDownstream, DownstreamThreshold float64
	Acted                                  bool // the step changed the service's replicas
	ScaledUp                               bool // the change was a scale-up
}

// ServiceWeights weighs the per-service terms in Total. Every weight is a
// magnitude, >= 0: the terms carry the sign and are all penalties here. The
// zero value weighs nothing; start from DefaultServiceWeights.
type ServiceWeights struct {
	SLA        float64 // SLA violation ratio, penalty in [-1, 0]; default 10
	Errors     float64 // error rate above ErrorThreshold, penalty in [-1, 0]; default 5
	CPU        float64 // CPU cost, penalty in [-1, 0]; default 0.1
	Action     float64 // any replica change, penalty in {-1, 0}; default 0.05
	Downstream float64 // scale-up into a busy dependency, penalty in {-1, 0}; default 1
	// ErrorThreshold is the error rate tolerated before the error term
	// starts, in [0, 1); default 0.01.
	ErrorThreshold float64
}

// DefaultServiceWeights are the defaults documented on ServiceWeights: the
// per-service form's 10 x SLA violation, 5 x error rate above 1%, 0.1 x CPU
// cost and 0.05 per action, plus 1 for downstream pressure (comparable to a
// 10% SLA violation).
func DefaultServiceWeights() ServiceWeights {
	return ServiceWeights{
		SLA:            10,
		Errors:         5,
		CPU:            0.1,
		Action:         0.05,
		Downstream:     1,
		ErrorThreshold: 0.01,
	}
}

// Validate reports every weight that is negative or not finite and an
// ErrorThreshold outside [0, 1), all at once.
func (w ServiceWeights) Validate() error {
	errs := checkWeights(ServiceBreakdown{Weights: w}.Terms())
	if !(w.ErrorThreshold >= 0 && w.ErrorThreshold < 1) {
		errs = append(errs, fmt.Errorf("error_threshold = %v: want in [0, 1)", w.ErrorThreshold))
	}
	return errors.Join(errs...)
}

// ServiceBreakdown is the per-service reward for one step, term by term.
// Every term is a penalty, normalised to [-1, 0].
type ServiceBreakdown struct {
	SLA        float64 // -min(1, max(0, p99 / SLA - 1))
	Errors     float64 // -min(1, max(0, errorRate - threshold))
	CPU        float64 // -min(1, cpuCores / maxCPUCores)
	Action     float64 // -1 when the step acted
	Downstream float64 // -1 when it scaled up into a dependency above threshold
	Total      float64 // weighted sum of the terms

	Weights ServiceWeights // the weights Total was computed with
}

// Service scores one step of the factored single-service policy (docs/architecture.md,
// Reward):
//
//	V = -min(1, max(0, p99 / SLA - 1))
//	E = -min(1, max(0, errorRate - threshold))
//	C = -min(1, cpuCores / maxCPUCores)
//	A = -1 if acted, else 0
//	P = -1 if scaled up and utilDownstream > downstreamThreshold, else 0
//	R = wV V + wE E + wC C + wA A + wP P
//
// It does not allocate and is safe for concurrent use.
func Service(in ServiceInput, w ServiceWeights) ServiceBreakdown {
	b := ServiceBreakdown{Weights: w}
	b.SLA = bounded(-math.Max(ratio(in.P99, in.SLA)-1, 0), -1, 0)
	b.Errors = bounded(-math.Max(in.ErrorRate-w.ErrorThreshold, 0), -1, 0)
	ref := in.MaxCPUCores
	if !(ref > 0) {
		ref = 1
	}
	b.CPU = bounded(-math.Max(in.CPUCores, 0)/ref, -1, 0)
	if in.Acted {
		b.Action = -1
	}
	// A NaN utilisation counts as above the threshold.
	if in.ScaledUp && in.DownstreamThreshold > 0 && !(in.CPUUtilDownstream <= in.DownstreamThreshold) {
		b.Downstream = -1
	}

	// R = wV V + wE E + wC C + wA A + wP P
	b.Total = w.SLA*b.SLA +
		w.Errors*b.Errors +
		w.CPU*b.CPU +
		w.Action*b.Action +
		w.Downstream*b.Downstream
	return b
}

// AppendTerms appends the terms, in the order of the fields, to dst.
func (b ServiceBreakdown) AppendTerms(dst []Term) []Term {
	w := b.Weights
	return append(dst,
		Term{"sla", b.SLA, w.SLA},
		Term{"errors", b.Errors, w.Errors},
		Term{"cpu", b.CPU, w.CPU},
		Term{"action", b.Action, w.Action},
		Term{"downstream", b.Downstream, w.Downstream},
	)
}

// Terms returns the terms in a fixed order: sla, errors, cpu, action,
// downstream. Total is not among them (see TotalName).
func (b ServiceBreakdown) Terms() []Term { return b.AppendTerms(make([]Term, 0, 5)) }
