package wire

import (
	"time"
)

// DefaultMaxSkew is how far in the future a directive's IssuedAt may be
// before Intake rejects it.
const DefaultMaxSkew = time.Minute

// Reasons Intake.Accept gives for a rejection; fixed strings, fit for counting.
const (
	RejectInvalid     = "invalid"      // Validate fails
	RejectWrongDomain = "wrong_domain" // not for Intake.Domain
	RejectReplayed    = "replayed"     // (Term, Seq) not newer than the last accepted
	RejectFuture      = "future"       // IssuedAt more than MaxSkew after now
	RejectStale       = "stale"        // IssuedAt + TTL before now
	// Intake sanity (IntakeBounds): what no real Commander sends.
	RejectTermAhead = "term_ahead"   // Term past the Commander's clock-derived terms
	RejectSeqJump   = "seq_jump"     // Seq ahead of the last by more than the ticks between them allow
	RejectTTL       = "ttl_too_long" // TTL longer than IntakeBounds.MaxTTL
	RejectBudget    = "budget"       // Cores past Share of the pool's cap
	// Rejected before Intake, by the bus (a Soldier with directive keys).
	RejectUnsigned     = "unsigned"      // no signature, ErrUnsigned
	RejectBadSignature = "bad_signature" // not signed by a trusted key, ErrBadSignature
	// RejectVersion: a contract version this build does not read (IsVersion):
	// a sender more than one minor, or a major, apart.
	RejectVersion = "version"
)

// SeqSlack is how many more sequence numbers than Commander ticks a
// directive may run ahead of the last accepted one in the same term
// (IntakeBounds.Tick): ticks run late, a reload shortens the tick, the first
// tick comes at start.
const SeqSlack = 16

// BudgetTolerance is how far a directive's Cores may be from its Share of
// IntakeBounds.CapacityCores, as a fraction of the pool.
const BudgetTolerance = 0.01

// IntakeBounds is what a real Commander can send, from the cluster config
// both read. A directive outside them is refused even when well-formed (and
// signed): one such message must not be able to wedge a Soldier. The zero
// value bounds nothing.
type IntakeBounds struct {
	// TermClock says terms are the Commander's clock at its start in Unix
	// nanoseconds, or one more than the last term it found (cmd/commander):
	// a term more than MaxSkew past now is refused.
	TermClock bool
	// Tick is the Commander's tick. Within a term, Seq may run ahead of the
	// last accepted one by at most the ticks between their IssuedAt, plus
	// SeqSlack. Zero: no bound.
	Tick time.Duration
	// MaxTTL is the longest TTL accepted (twice the configured directive
	// TTL, so a reload on one side first still passes). Zero: MaxTTL.
	MaxTTL time.Duration
	// CapacityCores is the contested pool's cap (cluster.capacity_cores):
	// Cores must be at most Share of it, within BudgetTolerance of the pool
	// (so a budget past its share is refused, while a capacity reload on
	// one side first passes while small). Cores may be less: the Commander
	// shares the pool the nodes hold when that is smaller (pool.Watcher).
	// Zero: no bound.
	CapacityCores float64
}

// Intake is a Soldier's gate for directives: it accepts a directive only if it
// is valid, for its domain, newer than the last one it accepted while that one
// is in force, current, and within Bounds. The zero value accepts any domain
// with DefaultMaxSkew. Intake does no I/O and reads no clock; it is not safe
// for concurrent use.
//
// Recovery: the last accepted (Term, Seq) holds back older ones only until
// that directive expires, so a bad directive that got through (one within
// Bounds, not signed-checked) is followed by the real Commander's next
// directive at most its TTL (<= Bounds.MaxTTL) later, without a restart.
type Intake struct {
	// Domain, when not empty, is the only domain accepted.
	Domain string
	// MaxSkew is how far IssuedAt may be ahead of now. Zero means DefaultMaxSkew.
	MaxSkew time.Duration
	// Bounds are the sanity bounds of a real Commander's directives.
	Bounds IntakeBounds

	last Directive
	have bool
}

// Accept decides whether d replaces the last accepted directive at now. It
// checks, in order: Validate (without a domain lookup), the domain, that
// (Term, Seq) is newer than the last accepted while that one has not
// expired, that IssuedAt is not more than MaxSkew ahead of now, that
// IssuedAt + TTL is not before now, then Bounds (term, seq jump, TTL,
// budget). On a rejection reason is one of the Reject constants and the last
// accepted directive is kept.
func (in *Intake) Accept(d Directive, now time.Time) (ok bool, reason string) {
	skew := in.MaxSkew
	if skew == 0 {
		skew = DefaultMaxSkew
	}
	switch {
	case d.Validate(nil) != nil:
		return false, RejectInvalid
	case in.Domain != "" && d.Domain != in.Domain:
		return false, RejectWrongDomain
	case in.have && !d.Newer(in.last) && !in.last.Expired(now):
		return false, RejectReplayed
	case d.IssuedAt.After(now.Add(skew)):
		return false, RejectFuture
	case d.Expired(now):
		return false, RejectStale
	}
	if reason := in.Bounds.check(d, in.last, in.have, now, skew); reason != "" {
		return false, reason
	}
	in.last, in.have = d, true
	return true, ""
}

// check returns why d is outside b, or "". last is the last accepted
// directive when have.
func (b IntakeBounds) check(d, last Directive, have bool, now time.Time, skew time.Duration) string {
	if b.TermClock {
		if ahead := now.Add(skew).UnixNano(); ahead > 0 && d.Term > uint64(ahead) {
			return RejectTermAhead
		}
	}
	if b.Tick > 0 && have && d.Term == last.Term && d.Seq > last.Seq {
		ticks := uint64(SeqSlack)
		if gap := d.IssuedAt.Sub(last.IssuedAt); gap > 0 {
			ticks += uint64((gap + b.Tick - 1) / b.Tick)
		}
		if d.Seq-last.Seq > ticks {
			return RejectSeqJump
		}
	}
	maxTTL := b.MaxTTL
	if maxTTL <= 0 {
		maxTTL = MaxTTL
	}
	if time.Duration(d.TTL) > maxTTL {
		return RejectTTL
	}
	if c := b.CapacityCores; c > 0 && d.Cores-d.Share*c > BudgetTolerance*c {
		return RejectBudget
	}
	return ""
}

// Last returns the last accepted directive, and false if none was accepted.
// It may have expired since; check Directive.Expired.
func (in *Intake) Last() (Directive, bool) { return in.last, in.have }
