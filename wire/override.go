package wire

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// MaxOverride is the longest an override may pin: Until - IssuedAt.
const MaxOverride = 24 * time.Hour

// Override event kinds, as the Commander's and the Soldiers' ledgers record
// them: a pin of a domain's share or of an app's replicas.
const (
	OverrideAccepted  = "accepted"  // a pin was taken (it applies from the next decision)
	OverrideRejected  = "rejected"  // an override was refused; the event's reason says why
	OverrideApplied   = "applied"   // a pin's share or target is in force for the first time
	OverrideExpired   = "expired"   // a pin lapsed at its Until and no longer applies
	OverrideCancelled = "cancelled" // a pin was lifted by a cancel before its Until
)

// MaxOverrideSkew is how far an override's IssuedAt may be ahead of the
// receiver's clock.
const MaxOverrideSkew = time.Minute

// Override is an operator's pin: a domain's share (for the Commander) or one
// app's replicas (for the domain's Soldier), from IssuedAt until Until, at
// most MaxOverride later. A pin is set by exactly one of Share and Replicas;
// Replicas needs App, Share forbids it. A cancel (Cancel set, neither Share nor
// Replicas, no Until) lifts the domain's share pin, or App's replica pin when
// App is set, before its deadline.
type Override struct {
	Version int    `json:"version"`
	Minor   int    `json:"minor,omitempty"` // the contract's minor version; see Minor
	Cluster string `json:"cluster"`
	Domain  string `json:"domain"`
	// App is "domain/app" for a replica pin or its cancel; empty for a share
	// pin or its cancel.
	App      string   `json:"app,omitempty"`
	Share    *float64 `json:"share,omitempty"`    // pinned fraction of the pool, [0, 1]
	Replicas *int     `json:"replicas,omitempty"` // pinned replicas, >= 0
	Cancel   bool     `json:"cancel,omitempty"`   // lift the pin named by Domain and App
	// IssuedAt is the operator's clock when sent; it orders overrides of the
	// same target (an older one is refused) and bounds Until.
	IssuedAt time.Time `json:"issued_at"`
	// Until is when a pin lapses: after IssuedAt, at most MaxOverride later.
	// Zero (absent) for a cancel.
	Until  time.Time `json:"until,omitzero"`
	By     string    `json:"by"`     // who; 1 to MaxName bytes
	Reason string    `json:"reason"` // why; at most MaxReason bytes
	// Signer names the key that signed the override (the operator's public
	// nkey, "U..."), for humans and logs; a verifier tries every key it
	// trusts. Empty: unsigned. At most MaxName bytes.
	Signer string `json:"signer,omitempty"`
	// Sig is the ed25519 signature of SignedBytes, SigSize bytes in standard
	// base64. Empty: unsigned.
	Sig string `json:"sig,omitempty"`
}

// SignedBytes is what an override's signature covers: o encoded without
// Signer and Sig, deterministic as Directive.SignedBytes. It does not
// validate o.
func (o Override) SignedBytes() []byte {
	o.Signer, o.Sig = "", ""
	b, _ := json.Marshal(o) // cannot fail: no type here fails to marshal
	return b
}

// Validate checks o against the contract. known, when not nil, reports
// whether a domain name is configured.
func (o Override) Validate(known func(domain string) bool) error {
	c := checker{msg: "override"}
	c.version(o.Version, o.Minor)
	c.name("cluster", o.Cluster)
	c.domain("domain", o.Domain, known)
	if o.App != "" {
		dom, app, ok := strings.Cut(o.App, "/")
		if !ok || dom != o.Domain || !ValidName(app) {
			c.fail("app", "%q is not \"%s/<app>\"", truncate(o.App), o.Domain)
		}
	}
	switch {
	case o.Cancel && (o.Share != nil || o.Replicas != nil):
		c.fail("cancel", "with share or replicas; a cancel names its pin by domain and app only")
	case o.Cancel:
	case o.Share == nil && o.Replicas == nil:
		c.fail("share", "and replicas both unset; set exactly one")
	case o.Share != nil && o.Replicas != nil:
		c.fail("share", "and replicas both set; set exactly one")
	case o.Share != nil:
		c.unit("share", *o.Share)
		if o.App != "" {
			c.fail("app", "must be empty for a share override")
		}
	default:
		c.count("replicas", *o.Replicas)
		if o.App == "" {
			c.fail("app", "is required for a replicas override")
		}
	}
	c.time("issued_at", o.IssuedAt)
	switch {
	case o.Cancel:
		if !o.Until.IsZero() {
			c.fail("until", "must be unset for a cancel")
		}
	default:
		c.time("until", o.Until)
		if c.err == nil {
			if d := o.Until.Sub(o.IssuedAt); d <= 0 || d > MaxOverride {
				c.fail("until", "is %s after issued_at, want (0,%s]", d, MaxOverride)
			}
		}
	}
	c.text("by", o.By, MaxName, true)
	c.text("reason", o.Reason, MaxReason, false)
	c.signature(o.Signer, o.Sig)
	return c.result()
}

// ForCommander reports whether the Commander handles o (a share pin or its
// cancel); otherwise the domain's Soldier does (an app's replica pin or its
// cancel).
func (o Override) ForCommander() bool { return o.App == "" }

// Target names what o pins: "<domain>" for a share, "<domain>/<app>" for
// replicas (o.App).
func (o Override) Target() string {
	if o.App != "" {
		return o.App
	}
	return o.Domain
}

// Active reports whether the override is a pin still in force at now.
func (o Override) Active(now time.Time) bool { return !o.Cancel && !now.After(o.Until) }

// Admit is the admission rule the Commander and the Soldiers share: why a
// valid override o offered at now is refused, given the pin in force on its
// target (nil: none), or "" when it may be taken. It refuses an override
// issued more than MaxOverrideSkew ahead of now, a cancel of no pin, one
// issued before the pin in force, and a pin already lapsed. clock names the
// receiver in the reason ("the Commander's").
func (o Override) Admit(now time.Time, inForce *Override, clock string) string {
	switch {
	case o.IssuedAt.Sub(now) > MaxOverrideSkew:
		return fmt.Sprintf("issued_at %s is %s ahead of %s clock (limit %s)", Stamp(o.IssuedAt), o.IssuedAt.Sub(now).Round(time.Second), clock, MaxOverrideSkew)
	case o.Cancel && inForce == nil:
		what := "pin"
		if o.ForCommander() {
			what = "share pin"
		}
		return fmt.Sprintf("%s has no %s to cancel", o.Target(), what)
	case inForce != nil && o.IssuedAt.Before(inForce.IssuedAt):
		return fmt.Sprintf("issued %s, before the pin in force (issued %s)", Stamp(o.IssuedAt), Stamp(inForce.IssuedAt))
	case !o.Cancel && !o.Active(now):
		return fmt.Sprintf("lapsed at %s", Stamp(o.Until))
	}
	return ""
}

// Stamp is t as the override messages and the ledger write it: RFC 3339, UTC.
func Stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Encode validates o (without a domain lookup) and encodes it.
func (o Override) Encode() ([]byte, error) { return encodeValid("override", o, Override.check) }

// DecodeOverride decodes and validates one override (without a domain
// lookup). Errors wrap ErrTooLarge, ErrMalformed or ErrInvalid.
func DecodeOverride(b []byte) (Override, error) { return decodeValid("override", b, Override.check) }

// OverrideAck is the answer of the Commander (to a share override) or of the
// domain's Soldier (to a replica override) to an override sent as a request:
// whether it was accepted, and why not.
type OverrideAck struct {
	Version int    `json:"version"`
	Minor   int    `json:"minor,omitempty"` // the contract's minor version; see Minor
	Cluster string `json:"cluster"`
	Domain  string `json:"domain"`
	App     string `json:"app,omitempty"` // the override's App
	// From is who answered: "commander" or "soldier".
	From     string    `json:"from"`
	Accepted bool      `json:"accepted"`
	At       time.Time `json:"at"`     // the answerer's clock
	Reason   string    `json:"reason"` // why refused, or what was done; at most MaxReason bytes
}

// Validate checks a against the contract.
func (a OverrideAck) Validate() error {
	c := checker{msg: "override_ack"}
	c.version(a.Version, a.Minor)
	c.name("cluster", a.Cluster)
	c.name("domain", a.Domain)
	if a.App != "" {
		if dom, app, ok := strings.Cut(a.App, "/"); !ok || dom != a.Domain || !ValidName(app) {
			c.fail("app", "%q is not \"%s/<app>\"", truncate(a.App), a.Domain)
		}
	}
	if a.From != "commander" && a.From != "soldier" {
		c.fail("from", "%q is not \"commander\" or \"soldier\"", truncate(a.From))
	}
	c.time("at", a.At)
	c.text("reason", a.Reason, MaxReason, false)
	return c.result()
}

// Encode validates a and encodes it.
func (a OverrideAck) Encode() ([]byte, error) {
	return encodeValid("override_ack", a, OverrideAck.Validate)
}

// DecodeOverrideAck decodes and validates one acknowledgement. Errors wrap
// ErrTooLarge, ErrMalformed or ErrInvalid.
func DecodeOverrideAck(b []byte) (OverrideAck, error) {
	return decodeValid("override_ack", b, OverrideAck.Validate)
}
