package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/regimentd/regiment/wire"
)

// PublishDirective validates d, publishes it on its domain's subject, then
// stores it as the domain's last directive in the cluster's directive bucket
// (created on first use). An error after the publish means live Soldiers got
// d but a restarting one would not. While disconnected nothing is sent or
// stored (a buffered directive would arrive stale): the error wraps
// nats.ErrConnectionReconnecting at once. Connected, the store waits for
// the server until ctx ends or the JetStream request times out (5s by
// default).
func (c *Conn) PublishDirective(ctx context.Context, d wire.Directive) error {
	return c.publishDirective(ctx, d, true)
}

func (c *Conn) publishDirective(ctx context.Context, d wire.Directive, store bool) error {
	b, err := c.encodeOwn("publish directive", "directive", d.Cluster, d.Domain, func() ([]byte, error) {
		if c.signer != nil {
			var err error
			if d, err = c.signer.Sign(d); err != nil {
				return nil, err
			}
		}
		return d.Encode()
	})
	if err != nil {
		return err
	}
	subject, err := DirectiveSubject(c.cluster, d.Domain)
	if err != nil {
		return err
	}
	if !c.nc.IsConnected() {
		// Not buffered for the reconnect: it would arrive stale, after the
		// next tick's directive is due anyway. And a store would only wait
		// out its timeout, once per domain, holding up the tick.
		return fmt.Errorf("bus: publish directive for %s: %w", d.Domain, nats.ErrConnectionReconnecting)
	}
	if err := c.publish(ctx, "directive", subject, b); err != nil {
		return err
	}
	if !store {
		return nil
	}
	kv, err := c.directives(ctx, true)
	if err != nil {
		return fmt.Errorf("bus: store directive for %s: %w", d.Domain, err)
	}
	if _, err := kv.Put(ctx, d.Domain, b); err != nil {
		c.forgetBucket() // it may have been lost with the server's store
		return fmt.Errorf("bus: store directive for %s in %s: %w", d.Domain, c.bucket, err)
	}
	return nil
}

// LastDirective returns the last directive stored for domain, and false if
// none was ever stored. The directive is decoded and validated like a live one
// but may be stale: run it through a wire.Intake.
func (c *Conn) LastDirective(ctx context.Context, domain string) (wire.Directive, bool, error) {
	if err := ValidToken(domain); err != nil {
		return wire.Directive{}, false, err
	}
	kv, err := c.directives(ctx, false)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return wire.Directive{}, false, nil
	}
	if err != nil {
		return wire.Directive{}, false, fmt.Errorf("bus: last directive for %s: %w", domain, err)
	}
	e, err := kv.Get(ctx, domain)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return wire.Directive{}, false, nil
	}
	if err != nil {
		return wire.Directive{}, false, fmt.Errorf("bus: last directive for %s: %w", domain, err)
	}
	d, err := c.decodeDirective(e.Value(), domain)
	if err != nil {
		return wire.Directive{}, false, fmt.Errorf("bus: last directive for %s: %w", domain, err)
	}
	return d, true, nil
}

// SubscribeDirectives calls fn with each directive published for domain. A
// message that fails decoding or validation is passed as the zero directive
// and an error wrapping wire.ErrTooLarge, wire.ErrMalformed,
// wire.ErrInvalid, wire.ErrUnsigned or wire.ErrBadSignature (with
// DirectiveKeys), or ErrWrongDomain; the caller should count it and keep its
// last good directive. fn does not see duplicates or order problems: use wire.Intake.
func (c *Conn) SubscribeDirectives(domain string, fn func(d wire.Directive, err error)) (*Subscription, error) {
	subject, err := DirectiveSubject(c.cluster, domain)
	if err != nil {
		return nil, err
	}
	return c.subscribe(subject, false, func(m *nats.Msg, err error) {
		if err != nil {
			fn(wire.Directive{}, err)
			return
		}
		fn(c.decodeDirective(m.Data, domain))
	})
}

// decodeDirective decodes b, checks its signature when the Conn has
// directive keys, then that it is for domain.
func (c *Conn) decodeDirective(b []byte, domain string) (wire.Directive, error) {
	d, err := wire.DecodeDirective(b)
	if err == nil && c.verify != nil {
		err = c.verify.Verify(d)
	}
	if err == nil {
		err = c.checkReceived("directive", d.Cluster, d.Domain, domain)
	}
	if err != nil {
		return wire.Directive{}, err
	}
	return d, nil
}

// directives returns the directive bucket, creating it when create is set.
// Without create, a missing bucket is jetstream.ErrBucketNotFound.
func (c *Conn) directives(ctx context.Context, create bool) (jetstream.KeyValue, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kv != nil {
		return c.kv, nil
	}
	var kv jetstream.KeyValue
	var err error
	if create {
		kv, err = c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:       c.bucket,
			Description:  "Regiment: last directive per domain",
			History:      1,
			MaxValueSize: wire.MaxPayload,
			Storage:      jetstream.FileStorage,
			Replicas:     c.replicas,
		})
	} else {
		kv, err = c.js.KeyValue(ctx, c.bucket)
	}
	if err != nil {
		return nil, err
	}
	c.kv = kv
	return kv, nil
}

func (c *Conn) forgetBucket() {
	c.mu.Lock()
	c.kv = nil
	c.mu.Unlock()
}

// EnsureBuckets creates the cluster's directive and override buckets, or
// brings their configuration up to date, with ConnectOptions.Replicas
// replicas each (a stream update: 1 to 3 adds two peers). The Commander calls it at start:
// its credential is the only one allowed to create or update a stream
// (Permissions), so Soldiers and the operator only ever bind to them.
func (c *Conn) EnsureBuckets(ctx context.Context) error {
	if _, err := c.directives(ctx, true); err != nil {
		return fmt.Errorf("bus: create directive bucket %s: %w", c.bucket, err)
	}
	if _, err := c.createOverrides(ctx); err != nil {
		return fmt.Errorf("bus: create override bucket: %w", err)
	}
	return nil
}
