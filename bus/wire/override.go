package wire

import (
	"strings"
	"time"
)

// Override is an operator's pin: a domain's share (for the Commander) or one
// app's replicas (for the domain's Soldier), until a deadline. Exactly one of
// Share and Replicas is set; Replicas needs App, Share forbids it.
type Override struct {
	Version int    `json:"version"`
	Cluster string `json:"cluster"`
	Domain  string `json:"domain"`
	// App is "domain/app" for a replica pin; empty for a share pin.
	App      string    `json:"app,omitempty"`
	Share    *float64  `json:"share,omitempty"`    // pinned fraction of the pool, [0, 1]
	Replicas *int      `json:"replicas,omitempty"` // pinned replicas, >= 0
	Until    time.Time `json:"until"`              // the pin lapses after this
	By       string    `json:"by"`                 // who; 1 to MaxName bytes
	Reason   string    `json:"reason"`             // why; at most MaxReason bytes
}

// Validate checks o against the contract. known, when not nil, reports
// whether a domain name is configured.
func (o Override) Validate(known func(domain string) bool) error {
	c := checker{msg: "override"}
	c.version(o.Version)
	c.name("cluster", o.Cluster)
	c.domain("domain", o.Domain, known)
	if o.App != "" {
		dom, app, ok := strings.Cut(o.App, "/")
		if !ok || dom != o.Domain || !ValidName(app) {
			c.fail("app", "%q is not \"%s/<app>\"", truncate(o.App), o.Domain)
		}
	}
	switch {
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
	c.time("until", o.Until)
	c.text("by", o.By, MaxName, true)
	c.text("reason", o.Reason, MaxReason, false)
	return c.result()
}

// Active reports whether the override is still in force at now.
func (o Override) Active(now time.Time) bool { return !now.After(o.Until) }

// Encode validates o (without a domain lookup) and encodes it.
func (o Override) Encode() ([]byte, error) {
	if err := o.Validate(nil); err != nil {
		return nil, err
	}
	return encode("override", o)
}

// DecodeOverride decodes and validates one override (without a domain
// lookup). Errors wrap ErrTooLarge, ErrMalformed or ErrInvalid.
func DecodeOverride(b []byte) (Override, error) {
	var o Override
	if err := decode("override", b, &o); err != nil {
		return Override{}, err
	}
	if err := o.Validate(nil); err != nil {
		return Override{}, err
	}
	return o, nil
}
