package bus

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/regimentd/regiment/wire"
)

// Subscription is a live subscription; its handler runs until Unsubscribe,
// Drain, or the Conn's Drain or Close.
type Subscription struct {
	sub *nats.Subscription
}

// Subject is the subject (possibly a wildcard) subscribed to.
func (s *Subscription) Subject() string { return s.sub.Subject }

// Unsubscribe stops delivery at once; messages not yet handled are dropped.
func (s *Subscription) Unsubscribe() error {
	if err := s.sub.Unsubscribe(); err != nil {
		return fmt.Errorf("bus: unsubscribe %s: %w", s.sub.Subject, err)
	}
	return nil
}

// Drain stops taking new messages and lets the handler finish the pending
// ones; it does not wait for them.
func (s *Subscription) Drain() error {
	if err := s.sub.Drain(); err != nil {
		return fmt.Errorf("bus: drain %s: %w", s.sub.Subject, err)
	}
	return nil
}

// subscribe registers an async handler on subject. h gets each message with
// the error of checkRoute: a message that did not come the subscription's
// own way is handed over with an error wrapping ErrMisrouted, for the
// handler to refuse and count. requests says whether a message may carry a
// reply inbox (overrides sent as requests); no other reply is accepted.
func (c *Conn) subscribe(subject string, requests bool, h func(m *nats.Msg, err error)) (*Subscription, error) {
	sub, err := c.nc.Subscribe(subject, func(m *nats.Msg) {
		err := checkRoute(subject, requests, m)
		if err != nil {
			c.log.Warn("message refused: not delivered by its subscription's route", "subscription", subject,
				"subject", wire.Clip(m.Subject, 200), "reply", wire.Clip(m.Reply, 200))
		}
		h(m, err)
	})
	if err != nil {
		return nil, fmt.Errorf("bus: subscribe %s: %w", subject, err)
	}
	return &Subscription{sub: sub}, nil
}

// checkRoute accepts a message only when it came the way its subscription
// to subscribed asks for: its subject is one the subscription names, and its
// reply, if any, is a request's inbox (and only when requests is set).
//
// A JetStream push consumer delivers a stored message to its delivery
// subject under the message's stream subject ("$KV.<bucket>.<key>") with a
// "$JS.ACK..." reply; whoever may create a consumer on a stream may aim it
// at any subscription. Such a message fails both checks: it is a stored
// value, not a message published on the subject, whatever its body says.
func checkRoute(subscribed string, requests bool, m *nats.Msg) error {
	if !subjectMatches(subscribed, m.Subject) {
		return fmt.Errorf("%w: subject %q is not one of %q (delivered by a consumer?)", ErrMisrouted, wire.Clip(m.Subject, 200), subscribed)
	}
	switch {
	case m.Reply == "":
	case !requests:
		return fmt.Errorf("%w: reply %q on a subject that takes no requests", ErrMisrouted, wire.Clip(m.Reply, 200))
	case !isInbox(m.Reply):
		return fmt.Errorf("%w: reply %q is not a request's inbox", ErrMisrouted, wire.Clip(m.Reply, 200))
	}
	return nil
}

// subjectMatches reports whether subject is matched by pattern, a NATS
// subject whose tokens may be "*" (any one token) or a last ">" (one or
// more tokens).
func subjectMatches(pattern, subject string) bool {
	p, s := strings.Split(pattern, "."), strings.Split(subject, ".")
	for i, tok := range p {
		if tok == ">" && i == len(p)-1 {
			return len(s) > i
		}
		if i >= len(s) || (tok != "*" && tok != s[i]) {
			return false
		}
	}
	return len(p) == len(s)
}

// decoded is what a subscription hands on for m, which its route passed
// or refused with err: the message decoded, then checked by check; on an
// error, the zero value and the error.
func decoded[T any](m *nats.Msg, err error, decode func([]byte) (T, error), check func(T) error) (T, error) {
	var v T
	if err == nil {
		v, err = decode(m.Data)
	}
	if err == nil {
		err = check(v)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}
