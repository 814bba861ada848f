package bus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/regimentd/regiment/wire"
)

// ConnectOptions configures a Conn.
type ConnectOptions struct {
	// URL is the server to connect to, e.g. "nats://127.0.0.1:4222"; a
	// comma-separated list for a NATS cluster. Required.
	URL string
	// Token is an authentication token. Empty: none. When set it wins over
	// TokenFile, NkeySeedFile and Credentials (a flag beats the config).
	Token string
	// TokenFile is the path to a file holding the token (surrounding
	// whitespace trimmed). Empty: none.
	TokenFile string
	// NkeySeedFile is the path to a file holding the user's nkey seed. Empty:
	// none.
	NkeySeedFile string
	// Credentials is the path to a .creds file (user JWT and nkey seed).
	// Empty: none. At most one of TokenFile, NkeySeedFile and Credentials.
	Credentials string
	// TLS secures the connection. Default off. SetAuth fills these
	// authentication and TLS fields from the config.
	TLS TLS
	// InboxPrefix is the subject prefix of the reply inboxes the Conn's
	// requests (JetStream calls) use. Default "_INBOX". A server with
	// per-role permissions lets each user subscribe to its own prefix only;
	// see Role.InboxPrefix.
	InboxPrefix string
	// Name identifies the connection in server monitoring, e.g.
	// "soldier-payment". Default "regiment".
	Name string
	// Cluster is the Regiment cluster name: the subject namespace. Messages
	// of other clusters are refused. Required, a subject token.
	Cluster string
	// KnownDomain, when set, reports whether a domain is configured; messages
	// for other domains are refused. Nil: any well-formed domain.
	KnownDomain func(domain string) bool
	// Logger receives connection events: disconnect at Warn, reconnect at
	// Info. Default: no logging.
	Logger hclog.Logger
	// ReconnectWait is the delay before the first reconnect attempt; it
	// doubles per failed attempt up to MaxReconnectWait. Default 250ms.
	ReconnectWait time.Duration
	// MaxReconnectWait caps the reconnect backoff. Default 10s.
	MaxReconnectWait time.Duration
	// ReconnectJitter is the upper bound of the random delay added to each
	// reconnect wait, so that many Soldiers do not reconnect in step.
	// Default 500ms.
	ReconnectJitter time.Duration
	// DrainTimeout bounds Drain. Default 10s.
	DrainTimeout time.Duration
	// Signer, when set, signs every directive PublishDirective sends (the
	// Commander's nats { directive_signing_key_file }). Nil: unsigned.
	Signer *Signer
	// DirectiveKeys, when not empty, are the public nkeys whose signature a
	// received directive must carry (a Soldier's nats { directive_keys }; two
	// during a key rollover): SubscribeDirectives and LastDirective refuse
	// any other with an error wrapping wire.ErrUnsigned or
	// wire.ErrBadSignature. Empty: directives are not checked.
	DirectiveKeys []string
	// OverrideSigner, when set, signs every override RequestOverride and
	// PublishOverride send (the operator's nats {
	// override_signing_key_file }). Nil: unsigned.
	OverrideSigner *Signer
	// OverrideKeys, when not empty, are the public nkeys whose signature a
	// received or stored override must carry (the Commander's and Soldiers'
	// nats { override_keys }): ServeOverrides and Overrides refuse any other
	// with an error wrapping wire.ErrUnsigned or wire.ErrBadSignature.
	// Empty: overrides are not checked.
	OverrideKeys []string
	// Replicas is how many servers of a NATS cluster hold each key-value
	// bucket EnsureBuckets creates or updates (KeyValueConfig.Replicas): 1 to
	// 5 (JetStream's limit), at most the cluster's size. Default 1. Raising it
	// on an existing bucket makes the server add peers and copy the data.
	Replicas int
}

// Conn is a connection to the bus for one cluster.
type Conn struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	cluster string
	known   func(string) bool
	log     hclog.Logger
	bucket  string
	// replicas of the buckets created or updated, >= 1
	replicas int

	signer *Signer   // nil: directives go unsigned
	verify *Verifier // nil: received directives are not checked

	overrideSigner *Signer   // nil: overrides go unsigned
	overrideVerify *Verifier // nil: received and stored overrides are not checked

	mu sync.Mutex
	kv jetstream.KeyValue // the directive bucket; nil until first used

	denied         atomic.Uint64 // permission violations reported by the server
	droppedReports atomic.Uint64 // reports not sent while disconnected
	closing        atomic.Bool
	closed         chan struct{} // closed when the connection is closed for good
	drainErr       atomic.Pointer[error]
}

// Connect connects to the server at opts.URL. A deadline on ctx bounds the
// initial connection; afterwards the Conn reconnects forever until Drain or
// Close.
func Connect(ctx context.Context, opts ConnectOptions) (*Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bus: connect: %w", err)
	}
	if opts.URL == "" {
		return nil, errors.New("bus: connect: URL is required")
	}
	bucket, err := DirectiveBucket(opts.Cluster)
	if err != nil {
		return nil, fmt.Errorf("bus: connect: cluster: %w", err)
	}
	if opts.Name == "" {
		opts.Name = "regiment"
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	setDefault(&opts.ReconnectWait, 250*time.Millisecond)
	setDefault(&opts.MaxReconnectWait, 10*time.Second)
	setDefault(&opts.ReconnectJitter, 500*time.Millisecond)
	setDefault(&opts.DrainTimeout, 10*time.Second)

	c := &Conn{
		cluster:  opts.Cluster,
		known:    opts.KnownDomain,
		log:      opts.Logger,
		bucket:   bucket,
		replicas: max(opts.Replicas, 1),
		closed:   make(chan struct{}),
		signer:   opts.Signer,

		overrideSigner: opts.OverrideSigner,
	}
	if len(opts.DirectiveKeys) > 0 {
		if c.verify, err = NewVerifier(opts.DirectiveKeys); err != nil {
			return nil, fmt.Errorf("bus: connect: %w", err)
		}
	}
	if len(opts.OverrideKeys) > 0 {
		if c.overrideVerify, err = NewOverrideVerifier(opts.OverrideKeys); err != nil {
			return nil, fmt.Errorf("bus: connect: %w", err)
		}
	}
	nopts := []nats.Option{
		nats.Name(opts.Name),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(backoff(opts.ReconnectWait, opts.MaxReconnectWait, opts.ReconnectJitter)),
		nats.DrainTimeout(opts.DrainTimeout),
		nats.DisconnectErrHandler(c.onDisconnect),
		nats.ReconnectHandler(c.onReconnect),
		nats.ClosedHandler(func(*nats.Conn) { close(c.closed) }),
		nats.ErrorHandler(c.onAsyncError),
	}
	if d, ok := ctx.Deadline(); ok {
		nopts = append(nopts, nats.Timeout(time.Until(d)))
	}
	auth, err := opts.authOptions()
	if err != nil {
		return nil, fmt.Errorf("bus: connect %s: %w", opts.URL, err)
	}
	nopts = append(nopts, auth...)
	if opts.InboxPrefix != "" {
		nopts = append(nopts, nats.CustomInboxPrefix(opts.InboxPrefix))
	}
	nc, err := nats.Connect(opts.URL, nopts...)
	if err != nil {
		return nil, fmt.Errorf("bus: connect %s: %w", opts.URL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("bus: connect %s: jetstream: %w", opts.URL, err)
	}
	c.nc, c.js = nc, js
	c.log.Debug("nats connected", "url", nc.ConnectedUrlRedacted(), "cluster", c.cluster)
	return c, nil
}

func setDefault(p *time.Duration, v time.Duration) {
	if *p <= 0 {
		*p = v
	}
}

// backoff is the reconnect delay after the n-th failed round through the
// server list: wait x 2^(n-1), capped at max, plus up to jitter.
func backoff(wait, max, jitter time.Duration) nats.ReconnectDelayHandler {
	return func(n int) time.Duration {
		d := wait
		for i := 1; i < n && d < max; i++ {
			d *= 2
		}
		d = min(d, max)
		if jitter > 0 {
			d += rand.N(jitter)
		}
		return d
	}
}

func (c *Conn) onDisconnect(nc *nats.Conn, err error) {
	if c.closing.Load() || err == nil {
		c.log.Debug("nats disconnected", "error", err)
		return
	}
	c.log.Warn("nats disconnected", "error", err)
}

func (c *Conn) onReconnect(nc *nats.Conn) {
	c.log.Info("nats reconnected", "url", nc.ConnectedUrlRedacted())
}

func (c *Conn) onAsyncError(_ *nats.Conn, sub *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrDrainTimeout) {
		c.drainErr.Store(&err)
	}
	subject := ""
	if sub != nil {
		subject = sub.Subject
	}
	if errors.Is(err, nats.ErrPermissionViolation) {
		c.denied.Add(1)
		c.log.Error("nats permission denied", "subject", subject, "error", err)
		return
	}
	c.log.Warn("nats async error", "subject", subject, "error", err)
}

// Denied is the number of publishes and subscriptions the server refused
// for lack of permission (see Permissions) since Connect. The server
// drops a refused publish and reports it asynchronously, so Publish* does
// not fail; a nonzero count means this connection's credentials do not fit
// its role.
func (c *Conn) Denied() uint64 { return c.denied.Load() }

// Cluster is the cluster this Conn serves.
func (c *Conn) Cluster() string { return c.cluster }

// Connected reports whether the Conn is connected now (not reconnecting,
// draining or closed).
func (c *Conn) Connected() bool { return c.nc.IsConnected() }

// Flush waits until the server has processed everything published so far.
func (c *Conn) Flush(ctx context.Context) error {
	if err := c.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("bus: flush: %w", err)
	}
	return nil
}

// Drain stops delivery gracefully: subscriptions stop taking new messages and
// finish the ones in flight, pending publishes are flushed, and the
// connection closes. It blocks until then or DrainTimeout.
func (c *Conn) Drain() error {
	c.closing.Store(true)
	err := c.nc.Drain()
	switch {
	case errors.Is(err, nats.ErrConnectionClosed):
		return nil
	case err != nil:
		<-c.closed // Drain closes a reconnecting connection at once
		return fmt.Errorf("bus: drain: %w", err)
	}
	<-c.closed
	if p := c.drainErr.Load(); p != nil {
		return fmt.Errorf("bus: drain: %w", *p)
	}
	return nil
}

// Close closes the connection without draining. It is idempotent.
func (c *Conn) Close() {
	c.closing.Store(true)
	c.nc.Close()
}

// publish sends an encoded message on subject.
func (c *Conn) publish(ctx context.Context, what, subject string, b []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bus: publish %s: %w", what, err)
	}
	if err := c.nc.Publish(subject, b); err != nil {
		return fmt.Errorf("bus: publish %s on %s: %w", what, subject, err)
	}
	return nil
}

// encodeOwn checks that a msg of cluster and domain is this Conn's to send
// (checkOwn), then encodes it with encode. Errors name op, e.g. "bus:
// publish report: ...".
func (c *Conn) encodeOwn(op, msg, cluster, domain string, encode func() ([]byte, error)) ([]byte, error) {
	if err := c.checkOwn(msg, cluster, domain); err != nil {
		return nil, fmt.Errorf("bus: %s: %w", op, err)
	}
	b, err := encode()
	if err != nil {
		return nil, fmt.Errorf("bus: %s: %w", op, err)
	}
	return b, nil
}

// checkOwn refuses to publish a message of another cluster or of an
// unknown domain.
func (c *Conn) checkOwn(msg, cluster, domain string) error {
	if cluster != c.cluster {
		return &wire.FieldError{Message: msg, Field: "cluster", Problem: fmt.Sprintf("%q is not this connection's cluster %q", cluster, c.cluster)}
	}
	if domain != "" && c.known != nil && !c.known(domain) {
		return &wire.FieldError{Message: msg, Field: "domain", Problem: fmt.Sprintf("%q is not a known domain", domain)}
	}
	return nil
}

// ErrWrongDomain: a received message names a domain other than its
// subject's, or one not configured. The error wraps the wire.FieldError too.
var ErrWrongDomain = errors.New("wrong domain")

// checkReceived refuses a decoded message of another cluster, of an unknown
// domain, or whose domain is not subjectDomain, its subject's domain token
// (the last two wrap ErrWrongDomain).
func (c *Conn) checkReceived(msg, cluster, domain, subjectDomain string) error {
	if err := c.checkOwn(msg, cluster, ""); err != nil {
		return err
	}
	if err := c.checkOwn(msg, cluster, domain); err != nil {
		return fmt.Errorf("%w: %w", ErrWrongDomain, err)
	}
	if domain != subjectDomain {
		return fmt.Errorf("%w: %w", ErrWrongDomain, &wire.FieldError{Message: msg, Field: "domain", Problem: fmt.Sprintf("%q does not match the subject's %q", domain, subjectDomain)})
	}
	return nil
}

// ErrMisrouted: a message reached a subscription by a route the subscriber
// did not make. Its subject is not one the subscription names (a JetStream
// consumer someone else created delivers a stored message under its stream
// subject, "$KV.<bucket>.<key>", to any delivery subject), or it carries a
// reply subject that is not a request's inbox (a consumer's "$JS.ACK..."
// reply, or any other subject an answer would be aimed at).
var ErrMisrouted = errors.New("message not delivered by the subscription's own route")
