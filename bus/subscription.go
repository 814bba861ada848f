package bus

import (
	"fmt"

	"github.com/nats-io/nats.go"
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

// subscribe registers an async handler on subject.
func (c *Conn) subscribe(subject string, h nats.MsgHandler) (*Subscription, error) {
	sub, err := c.nc.Subscribe(subject, h)
	if err != nil {
		return nil, fmt.Errorf("bus: subscribe %s: %w", subject, err)
	}
	return &Subscription{sub: sub}, nil
}
