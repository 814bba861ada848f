package wire

import "time"

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
	// Rejected before Intake, by the bus (a Soldier with directive keys).
	RejectUnsigned     = "unsigned"      // no signature, ErrUnsigned
	RejectBadSignature = "bad_signature" // not signed by a trusted key, ErrBadSignature
)

// Intake is a Soldier's gate for directives: it accepts a directive only if it
// is valid, for its domain, newer than the last one it accepted, and current.
// The zero value accepts any domain with DefaultMaxSkew. Intake does no I/O and
// reads no clock; it is not safe for concurrent use.
type Intake struct {
	// Domain, when not empty, is the only domain accepted.
	Domain string
	// MaxSkew is how far IssuedAt may be ahead of now. Zero means DefaultMaxSkew.
	MaxSkew time.Duration

	last Directive
	have bool
}

// Accept decides whether d replaces the last accepted directive at now. It
// checks, in order: Validate (without a domain lookup), the domain, that
// (Term, Seq) is newer than the last accepted, that IssuedAt is not more than
// MaxSkew ahead of now, and that IssuedAt + TTL is not before now. On a
// rejection reason is one of the Reject constants and the last accepted
// directive is kept.
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
	case in.have && !d.Newer(in.last):
		return false, RejectReplayed
	case d.IssuedAt.After(now.Add(skew)):
		return false, RejectFuture
	case d.Expired(now):
		return false, RejectStale
	}
	in.last, in.have = d, true
	return true, ""
}

// Last returns the last accepted directive, and false if none was accepted.
// It may have expired since; check Directive.Expired.
func (in *Intake) Last() (Directive, bool) { return in.last, in.have }
