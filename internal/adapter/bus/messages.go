package bus

import (
	"context"

	"github.com/nats-io/nats.go"

	"github.com/regimentd/regiment/wire"
)

// PublishReport validates r and publishes it on its domain's report subject.
func (c *Conn) PublishReport(ctx context.Context, r wire.DomainReport) error {
	b, err := c.encodeOwn("publish report", "report", r.Cluster, r.Domain, r.Encode)
	if err != nil {
		return err
	}
	subject, err := ReportSubject(c.cluster, r.Domain)
	if err != nil {
		return err
	}
	if !c.nc.IsConnected() && !c.nc.IsClosed() && !c.nc.IsDraining() {
		// Reconnecting. Not buffered for the reconnect: a minute of buffered reports would
		// reach the Commander all at once, stale, and be used. The next
		// tick's report after the reconnect is current.
		c.droppedReports.Add(1)
		c.log.Debug("report dropped while disconnected", "domain", r.Domain, "seq", r.Seq)
		return nil
	}
	return c.publish(ctx, "report", subject, b)
}

// DroppedReports is the number of reports PublishReport dropped because the
// Conn was disconnected (reports are not buffered for a reconnect).
func (c *Conn) DroppedReports() uint64 { return c.droppedReports.Load() }

// SubscribeReports calls fn with each report of every domain. Failures are
// passed as in SubscribeDirectives.
func (c *Conn) SubscribeReports(fn func(r wire.DomainReport, err error)) (*Subscription, error) {
	subject, err := everyDomain(c.cluster, kindReport)
	if err != nil {
		return nil, err
	}
	return c.subscribe(subject, false, func(m *nats.Msg, err error) {
		fn(decoded(m, err, wire.DecodeDomainReport, func(r wire.DomainReport) error {
			return c.checkReceived("report", r.Cluster, r.Domain, lastToken(m.Subject))
		}))
	})
}

// PublishAllocation validates a and publishes it on the allocation subject.
func (c *Conn) PublishAllocation(ctx context.Context, a wire.Allocation) error {
	b, err := c.encodeOwn("publish allocation", "allocation", a.Cluster, "", func() ([]byte, error) {
		if err := a.Validate(c.known); err != nil {
			return nil, err
		}
		return a.Encode()
	})
	if err != nil {
		return err
	}
	subject, err := AllocationSubject(c.cluster)
	if err != nil {
		return err
	}
	return c.publish(ctx, "allocation", subject, b)
}

// SubscribeAllocation calls fn with each allocation. Failures are passed as
// in SubscribeDirectives.
func (c *Conn) SubscribeAllocation(fn func(a wire.Allocation, err error)) (*Subscription, error) {
	subject, err := AllocationSubject(c.cluster)
	if err != nil {
		return nil, err
	}
	return c.subscribe(subject, false, func(m *nats.Msg, err error) {
		fn(decoded(m, err, wire.DecodeAllocation, func(a wire.Allocation) error {
			if err := c.checkOwn("allocation", a.Cluster, ""); err != nil || c.known == nil {
				return err
			}
			return a.Validate(c.known)
		}))
	})
}

// PublishOverride validates o and publishes it on its domain's override
// subject.
func (c *Conn) PublishOverride(ctx context.Context, o wire.Override) error {
	b, err := c.encodeOwn("publish override", "override", o.Cluster, o.Domain, c.signedOverride(o))
	if err != nil {
		return err
	}
	subject, err := OverrideSubject(c.cluster, o.Domain)
	if err != nil {
		return err
	}
	return c.publish(ctx, "override", subject, b)
}

// SubscribeOverrides calls fn with each override for domain, or for every
// domain when domain is "", without answering requests (an observer, such as
// an audit log). Failures are passed as in SubscribeDirectives.
func (c *Conn) SubscribeOverrides(domain string, fn func(o wire.Override, err error)) (*Subscription, error) {
	return c.ServeOverrides(domain, func(o wire.Override, err error) (wire.OverrideAck, bool) {
		fn(o, err)
		return wire.OverrideAck{}, false
	})
}
