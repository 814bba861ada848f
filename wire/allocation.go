package wire

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Allocation is the Commander's whole split of the contested pool for one
// tick: a share per domain plus the reserve kept for uncertainty.
type Allocation struct {
	Version  int                `json:"version"`
	Minor    int                `json:"minor,omitempty"` // the contract's minor version; see Minor
	Cluster  string             `json:"cluster"`
	Term     uint64             `json:"term"` // as in Directive
	Seq      uint64             `json:"seq"`  // as in Directive; the directives of a tick share it
	IssuedAt time.Time          `json:"issued_at"`
	Shares   map[string]float64 `json:"shares"`  // domain -> fraction of the pool, each [0, 1]
	Reserve  float64            `json:"reserve"` // unallocated fraction, [0, 1]
	// CapacityTargetCores is the Commander's capacity plan, the node cores
	// it asked the pool to hold (commander.PlanCapacity); 0 without a plan.
	CapacityTargetCores float64 `json:"capacity_target_cores,omitempty"`
}

// Validate checks a against the contract, including that the shares and the
// reserve sum to 1 within SumTolerance. known, when not nil, reports whether a
// domain name is configured.
func (a Allocation) Validate(known func(domain string) bool) error {
	c := checker{msg: "allocation"}
	c.version(a.Version, a.Minor)
	c.name("cluster", a.Cluster)
	c.time("issued_at", a.IssuedAt)
	if len(a.Shares) > MaxDomains {
		c.fail("shares", "has %d domains, limit %d", len(a.Shares), MaxDomains)
	}
	c.unit("reserve", a.Reserve)
	c.nonNeg("capacity_target_cores", a.CapacityTargetCores)
	if c.err != nil {
		return c.result()
	}
	// Sum in name order so the result does not depend on map order.
	names := make([]string, 0, len(a.Shares))
	for name := range a.Shares {
		names = append(names, name)
	}
	slices.Sort(names)
	sum := a.Reserve
	for _, name := range names {
		field := fmt.Sprintf("shares[%s]", truncate(name))
		c.domain(field, name, known)
		c.unit(field, a.Shares[name])
		sum += a.Shares[name]
	}
	if c.err == nil && math.Abs(sum-1) > SumTolerance {
		c.fail("shares", "plus reserve sum to %.9g, want 1", sum)
	}
	return c.result()
}

// Encode validates a (without a domain lookup) and encodes it.
func (a Allocation) Encode() ([]byte, error) { return encodeValid("allocation", a, Allocation.check) }

// DecodeAllocation decodes and validates one allocation (without a domain
// lookup). Errors wrap ErrTooLarge, ErrMalformed or ErrInvalid.
func DecodeAllocation(b []byte) (Allocation, error) {
	return decodeValid("allocation", b, Allocation.check)
}
