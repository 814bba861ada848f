package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/regimentd/regiment/wire"
)

// ErrNoResponder: an override was sent as a request and nobody serves its
// domain's override subject (no Commander, or no Soldier of the domain, is
// connected).
var ErrNoResponder = errors.New("no responder")

// RequestOverride validates o, sends it on its domain's override subject as a
// request and returns the first answer: the Commander's for a share pin or its
// cancel, the domain's Soldier's for a replica pin or its cancel (see
// ServeOverrides). It fails with an error wrapping ErrNoResponder when nobody
// serves the subject, or ctx's error when no answer comes before ctx ends.
// A refusal is a valid answer (Accepted false), not an error.
func (c *Conn) RequestOverride(ctx context.Context, o wire.Override) (wire.OverrideAck, error) {
	b, err := c.encodeOwn("request override", "override", o.Cluster, o.Domain, c.signedOverride(o))
	if err != nil {
		return wire.OverrideAck{}, err
	}
	subject, err := OverrideSubject(c.cluster, o.Domain)
	if err != nil {
		return wire.OverrideAck{}, err
	}
	m, err := c.nc.RequestWithContext(ctx, subject, b)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return wire.OverrideAck{}, fmt.Errorf("bus: request override on %s: %w", subject, ErrNoResponder)
	case err != nil:
		return wire.OverrideAck{}, fmt.Errorf("bus: request override on %s: %w", subject, err)
	}
	a, err := wire.DecodeOverrideAck(m.Data)
	if err == nil && (a.Cluster != o.Cluster || a.Domain != o.Domain || a.App != o.App) {
		err = &wire.FieldError{Message: "override_ack", Field: "app", Problem: fmt.Sprintf("answers %q of cluster %q, not the override's %q", a.App+a.Domain, a.Cluster, o.Target())}
	}
	if err != nil {
		return wire.OverrideAck{}, fmt.Errorf("bus: request override on %s: answer: %w", subject, err)
	}
	return a, nil
}

// ServeOverrides calls fn with each override for domain, or for every domain
// when domain is "". Failures are passed as in SubscribeDirectives. With
// OverrideKeys, an override request that fails its signature check is
// answered with a refusal naming the reason by its owner (the Commander,
// serving every domain, for share pins; a Soldier for replica pins). When the
// override came as a request (RequestOverride) and fn returns true, its
// OverrideAck is sent back; fn returns false to stay silent and leave the
// answer to the other party (a Soldier leaves share overrides to the
// Commander, the Commander leaves replica overrides to the Soldier), and
// for messages it cannot attribute (failed decoding).
func (c *Conn) ServeOverrides(domain string, fn func(o wire.Override, err error) (wire.OverrideAck, bool)) (*Subscription, error) {
	var subject string
	var err error
	if domain == "" {
		subject, err = everyDomain(c.cluster, kindOverride)
	} else {
		subject, err = OverrideSubject(c.cluster, domain)
	}
	if err != nil {
		return nil, err
	}
	return c.subscribe(subject, true, func(m *nats.Msg, err error) {
		o, err := decoded(m, err, wire.DecodeOverride, func(o wire.Override) error {
			return c.checkReceived("override", o.Cluster, o.Domain, lastToken(m.Subject))
		})
		unsigned := false
		if err == nil && c.overrideVerify != nil {
			if err = c.overrideVerify.VerifyOverride(o); err != nil {
				unsigned = true
			}
		}
		signed := o
		if err != nil {
			o = wire.Override{}
		}
		a, reply := fn(o, err)
		if unsigned && signed.ForCommander() == (domain == "") {
			// The override's owner answers a signature refusal itself, so
			// that the operator hears why instead of waiting out a timeout.
			a, reply = wire.OverrideAck{Version: wire.Version, Cluster: signed.Cluster, Domain: signed.Domain, App: signed.App,
				From: map[bool]string{true: "commander", false: "soldier"}[domain == ""], At: time.Now().UTC(),
				Reason: "refused: " + err.Error()}, true
		} else if err != nil {
			// Nothing else failing is answered: a misrouted message's reply
			// may be any subject (checkRoute answers only inboxes, so that a
			// requester cannot aim the answer at a directive or report
			// subject), and a malformed one cannot be attributed.
			return
		}
		if !reply || m.Reply == "" {
			return
		}
		a.Reason = wire.Clip(a.Reason, wire.MaxReason)
		b, err := a.Encode()
		if err != nil {
			c.log.Warn("override answer not sent", "subject", m.Subject, "error", err)
			return
		}
		if err := m.Respond(b); err != nil {
			c.log.Warn("override answer not sent", "subject", m.Subject, "error", err)
		}
	})
}

// StoreOverride keeps an accepted pin in the cluster's override bucket
// (created on first use) so that a restarted Commander or Soldier still
// honours it (Overrides), or deletes the pin a cancel names. The key is the
// domain for a share pin and "<domain>.<app>" for a replica pin; entries are
// also dropped by the bucket after wire.MaxOverride.
func (c *Conn) StoreOverride(ctx context.Context, o wire.Override) error {
	b, err := c.encodeOwn("store override", "override", o.Cluster, o.Domain, o.Encode)
	if err != nil {
		return err
	}
	kv, err := c.overrides(ctx, true)
	if err != nil {
		return fmt.Errorf("bus: store override for %s: %w", o.Target(), err)
	}
	key := overrideKey(o)
	if o.Cancel {
		err = kv.Delete(ctx, key)
	} else {
		_, err = kv.Put(ctx, key, b)
	}
	if err != nil {
		return fmt.Errorf("bus: store override for %s: %w", o.Target(), err)
	}
	return nil
}

// Overrides returns the pins stored for domain (every domain when domain is
// ""), share pins first, then by app; none when the bucket does not exist.
// They are decoded and validated like live overrides but may have lapsed:
// check Active. An entry that fails decoding is skipped and reported in the
// returned error alongside the good ones.
func (c *Conn) Overrides(ctx context.Context, domain string) ([]wire.Override, error) {
	if domain != "" {
		if err := ValidToken(domain); err != nil {
			return nil, err
		}
	}
	kv, err := c.overrides(ctx, false)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bus: list overrides: %w", err)
	}
	keys, err := c.overrideKeys(ctx, kv, domain)
	if err != nil {
		return nil, fmt.Errorf("bus: list overrides: %w", err)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys) // a listing may repeat a key written meanwhile
	var out []wire.Override
	var errs []error
	for _, k := range keys {
		if d, _, _ := strings.Cut(k, "."); domain != "" && d != domain {
			continue
		}
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted since listed
		}
		if err != nil {
			return out, fmt.Errorf("bus: list overrides: %s: %w", k, err)
		}
		o, err := wire.DecodeOverride(e.Value())
		if err == nil {
			if d, _, _ := strings.Cut(k, "."); o.Cancel || overrideKey(o) != k || d != o.Domain {
				err = fmt.Errorf("entry does not match its key")
			} else {
				err = c.checkOwn("override", o.Cluster, o.Domain)
			}
		}
		if err == nil && c.overrideVerify != nil {
			if err = c.overrideVerify.VerifyOverride(o); errors.Is(err, wire.ErrUnsigned) {
				err = fmt.Errorf("%w (stored before overrides were signed: re-issue it with a signing key)", err)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("override %s: %w", k, err))
			continue
		}
		out = append(out, o)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("bus: list overrides: %w", errors.Join(errs...))
	}
	return out, nil
}

// overrideKeys lists the keys of domain's pins, or of every pin when domain
// is "". For one domain it asks the stream which subjects under
// "$KV.<overrides>.<domain>.*" hold messages (STREAM.INFO with a subjects
// filter) and looks up "<domain>" directly: the calls a Soldier's credential
// allows (Permissions). A Soldier creates no consumer: a consumer may
// deliver to any subject, the route of issue 34.
func (c *Conn) overrideKeys(ctx context.Context, kv jetstream.KeyValue, domain string) ([]string, error) {
	if domain == "" {
		keys, err := kv.Keys(ctx)
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return nil, nil
		}
		return keys, err
	}
	var keys []string
	switch _, err := kv.Get(ctx, domain); {
	case err == nil:
		keys = append(keys, domain)
	case !errors.Is(err, jetstream.ErrKeyNotFound):
		return nil, err
	}
	bucket := kv.Bucket()
	s, err := c.js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		return nil, err
	}
	prefix := "$KV." + bucket + "."
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(prefix+domain+".*"))
	if err != nil {
		return nil, err
	}
	for subject := range info.State.Subjects {
		keys = append(keys, strings.TrimPrefix(subject, prefix)) // deleted ones are skipped by Get
	}
	return keys, nil
}

// overrideKey is o's key in the override bucket: "<domain>" for a share pin,
// "<domain>.<app>" for a replica pin (app without its domain prefix).
func overrideKey(o wire.Override) string {
	if o.App == "" {
		return o.Domain
	}
	_, app, _ := strings.Cut(o.App, "/")
	return o.Domain + "." + app
}

// overrides returns the override bucket. A missing one is created when
// create is set (which only the Commander's credential may do; it does so at
// start, EnsureBuckets), else it is jetstream.ErrBucketNotFound. Overrides
// are rare: the handle is not cached.
func (c *Conn) overrides(ctx context.Context, create bool) (jetstream.KeyValue, error) {
	name, err := OverrideBucket(c.cluster)
	if err != nil {
		return nil, err
	}
	kv, err := c.js.KeyValue(ctx, name)
	if !create || !errors.Is(err, jetstream.ErrBucketNotFound) {
		return kv, err
	}
	return c.createOverrides(ctx)
}

// createOverrides creates the override bucket or updates its configuration.
func (c *Conn) createOverrides(ctx context.Context) (jetstream.KeyValue, error) {
	name, err := OverrideBucket(c.cluster)
	if err != nil {
		return nil, err
	}
	return c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:       name,
		Description:  "Regiment: operator pins in force, per domain and app",
		History:      1,
		TTL:          wire.MaxOverride,
		MaxValueSize: wire.MaxPayload,
		Storage:      jetstream.FileStorage,
		Replicas:     c.replicas,
	})
}

// isInbox reports whether subject is a request's reply inbox: under the
// default "_INBOX." prefix or a per-user "_INBOX_<cluster>_<user>." one
// (InboxPrefix).
func isInbox(subject string) bool {
	return strings.HasPrefix(subject, "_INBOX.") || strings.HasPrefix(subject, "_INBOX_")
}

// signedOverride is o's encoder: signed when the Conn has an
// OverrideSigner.
func (c *Conn) signedOverride(o wire.Override) func() ([]byte, error) {
	return func() ([]byte, error) {
		if c.overrideSigner != nil {
			var err error
			if o, err = c.overrideSigner.SignOverride(o); err != nil {
				return nil, err
			}
		}
		return o.Encode()
	}
}
