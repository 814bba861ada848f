package wire

import (
	"encoding/base64"
	"encoding/json"
	"time"
)

// Directive is the Commander's order to one domain's Soldier for the next
// ticks: its share of the contested pool and what that share means in cores.
type Directive struct {
	Version int    `json:"version"`         // the contract's major version, Version
	Minor   int    `json:"minor,omitempty"` // the contract's minor version: Minor-1 or Minor; absent is 0
	Cluster string `json:"cluster"`         // cluster name
	Domain  string `json:"domain"`          // the domain this directive is for
	// Term is the Commander's term (epoch): it increases whenever a new
	// Commander process or leader starts issuing, so Seq restarts are detected.
	Term uint64 `json:"term"`
	// Seq numbers directives within a Term, increasing.
	Seq      uint64    `json:"seq"`
	IssuedAt time.Time `json:"issued_at"` // Commander's clock when issued
	// TTL is how long after IssuedAt the directive stays valid, in (0, MaxTTL].
	// A Soldier whose directive expires falls back to its baseline policy.
	TTL      Duration `json:"ttl"`
	Share    float64  `json:"share"`    // fraction of the contested pool, [0, 1]
	Cores    float64  `json:"cores"`    // budget in cores (share x pool), >= 0
	Urgency  float64  `json:"urgency"`  // how fast to move toward the budget, [0, 1]
	Headroom float64  `json:"headroom"` // spare capacity to keep above demand, fraction [0, 1]
	Policy   string   `json:"policy"`   // name of the policy that decided; at most MaxName bytes
	Reason   string   `json:"reason"`   // why, for humans; at most MaxReason bytes
	// Signer names the key that signed the directive (the Commander's public
	// nkey, "U..."), for humans and logs; a verifier tries every key it
	// trusts, not just this one. Empty: unsigned. At most MaxName bytes.
	Signer string `json:"signer,omitempty"`
	// Sig is the ed25519 signature of SignedBytes, SigSize bytes in standard
	// base64 (a string keeps Directive comparable). Empty: unsigned.
	Sig string `json:"sig,omitempty"`
}

// SigSize is the size of a directive signature (ed25519), before base64.
const SigSize = 64

// SignedBytes is what a directive's signature covers: d encoded without
// Signer and Sig. Encoding is deterministic (fields in struct order, floats
// and times in their shortest exact form), so a decoded directive yields the
// bytes its signer signed. It does not validate d.
func (d Directive) SignedBytes() []byte {
	d.Signer, d.Sig = "", ""
	b, _ := json.Marshal(d) // cannot fail: no type here fails to marshal
	return b
}

// Validate checks d against the contract. known, when not nil, reports
// whether a domain name is configured.
func (d Directive) Validate(known func(domain string) bool) error {
	c := checker{msg: "directive"}
	c.version(d.Version, d.Minor)
	c.name("cluster", d.Cluster)
	c.domain("domain", d.Domain, known)
	c.time("issued_at", d.IssuedAt)
	if d.TTL <= 0 || time.Duration(d.TTL) > MaxTTL {
		c.fail("ttl", "%s out of range (0,%s]", d.TTL, MaxTTL)
	}
	c.unit("share", d.Share)
	c.nonNeg("cores", d.Cores)
	c.unit("urgency", d.Urgency)
	c.unit("headroom", d.Headroom)
	c.text("policy", d.Policy, MaxName, false)
	c.text("reason", d.Reason, MaxReason, false)
	c.signature(d.Signer, d.Sig)
	return c.result()
}

// signature checks a signed message's signer and sig fields: a name, and
// SigSize bytes in standard base64; each may be empty (unsigned).
func (c *checker) signature(signer, sig string) {
	if signer != "" {
		c.name("signer", signer)
	}
	if sig != "" {
		if b, err := base64.StdEncoding.DecodeString(sig); err != nil || len(b) != SigSize {
			c.fail("sig", "not %d bytes of standard base64 (an ed25519 signature)", SigSize)
		}
	}
}

// Expires is when d stops being valid: IssuedAt + TTL.
func (d Directive) Expires() time.Time { return d.IssuedAt.Add(time.Duration(d.TTL)) }

// Expired reports whether d is past its TTL at now.
func (d Directive) Expired(now time.Time) bool { return now.After(d.Expires()) }

// Newer reports whether d's (Term, Seq) is strictly after prev's.
func (d Directive) Newer(prev Directive) bool {
	if d.Term != prev.Term {
		return d.Term > prev.Term
	}
	return d.Seq > prev.Seq
}

// Encode validates d (without a domain lookup) and encodes it.
func (d Directive) Encode() ([]byte, error) { return encodeValid("directive", d, Directive.check) }

// DecodeDirective decodes and validates one directive (without a domain
// lookup). Errors wrap ErrTooLarge, ErrMalformed or ErrInvalid.
func DecodeDirective(b []byte) (Directive, error) {
	return decodeValid("directive", b, Directive.check)
}
