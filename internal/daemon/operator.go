package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

// OverrideRequest is what an operator asks of a running system (`regiment
// override`): a pin of a domain's share or of an app's replicas, or its
// cancel.
type OverrideRequest struct {
	Domain string // the domain to pin or cancel
	App    string // the app, as domain/app (or app with Domain)
	By     string // who pins, for the ledger
	Reason string // why, for the ledger; required for a pin
	// Share is the pinned fraction of the pool, [0, 1]; < 0: not given.
	Share float64
	// Replicas is the pinned replica count; < 0: not given.
	Replicas int
	For      time.Duration // how long a pin lasts, at most wire.MaxOverride
}

// BuildOverride turns req, for the subcommand sub of `regiment override`
// ("share", "replicas" or "cancel"), into an override issued at now,
// checking names against cfg. Its errors name the command's flags.
func BuildOverride(cfg *domains.Config, sub string, f OverrideRequest, now time.Time) (wire.Override, error) {
	o := wire.Override{Version: wire.Version, Cluster: cfg.Cluster.Name, IssuedAt: now,
		By: wire.CleanText(f.By, 0), Reason: wire.CleanText(f.Reason, 0)} // cleaned, not clipped: too long is refused
	if f.App != "" {
		app, err := resolveApp(cfg, f.Domain, f.App)
		if err != nil {
			return o, err
		}
		o.App = app
		o.Domain, _, _ = strings.Cut(app, "/")
	} else {
		if f.Domain == "" {
			return o, fmt.Errorf("--domain is required for %s", sub)
		}
		if err := CheckDomain(cfg, f.Domain); err != nil {
			return o, err
		}
		o.Domain = f.Domain
	}
	pin := func() error {
		switch {
		case f.For <= 0:
			return errors.New("--for is required: how long the pin lasts, e.g. 30m (at most 24h)")
		case f.For > wire.MaxOverride:
			return fmt.Errorf("--for %s is longer than the %s a pin may last; pin again when it lapses", f.For, wire.MaxOverride)
		case strings.TrimSpace(f.Reason) == "":
			return errors.New("--reason is required for a pin: it goes to the ledger")
		}
		o.Until = now.Add(f.For)
		return nil
	}
	switch sub {
	case "share":
		switch {
		case f.App != "":
			return o, errors.New("share pins a domain: use --domain, not --app (for an app, use replicas)")
		case f.Share < 0 || f.Share > 1:
			return o, fmt.Errorf("--share is required, a fraction of the pool in [0,1] (got %g)", f.Share)
		}
		o.Share = &f.Share
		if err := pin(); err != nil {
			return o, err
		}
	case "replicas":
		switch {
		case f.App == "":
			return o, errors.New("--app is required for replicas, as domain/app")
		case f.Replicas < 0:
			return o, errors.New("--replicas is required, a replica count >= 0")
		}
		o.Replicas = &f.Replicas
		if err := pin(); err != nil {
			return o, err
		}
	case "cancel":
		o.Cancel = true
	}
	if err := o.Validate(nil); err != nil {
		var fe *wire.FieldError
		if errors.As(err, &fe) {
			if flag, ok := overrideFlagOf[fe.Field]; ok {
				return o, fmt.Errorf("--%s: %s %s", flag, fe.Field, fe.Problem)
			}
		}
		return o, err
	}
	return o, nil
}

// overrideFlagOf names the flag behind each override field.
var overrideFlagOf = map[string]string{
	"domain": "domain", "app": "app", "share": "share", "replicas": "replicas",
	"until": "for", "by": "by", "reason": "reason",
}

// resolveApp checks app ("domain/app", or "app" with domain) against cfg and
// returns its full name. An app the config does not list is refused unless
// its domain discovers apps: only the domain's running Soldier knows those,
// and it refuses an app it does not run (soldier.Pins.OnOverride).
func resolveApp(cfg *domains.Config, domain, app string) (string, error) {
	if !strings.Contains(app, "/") {
		if domain == "" {
			return "", fmt.Errorf("--app %q: give it as domain/app, or with --domain", app)
		}
		app = domain + "/" + app
	}
	d, _, _ := strings.Cut(app, "/")
	if domain != "" && d != domain {
		return "", fmt.Errorf("--app %q is not in --domain %s", app, domain)
	}
	if err := CheckDomain(cfg, d); err != nil {
		return "", fmt.Errorf("--app %q: %w", app, err)
	}
	var names []string
	for _, a := range cfg.Apps() {
		if a.Name == app {
			return app, nil
		}
		if strings.HasPrefix(a.Name, d+"/") {
			names = append(names, a.Name)
		}
	}
	if cfg.Domains[cfg.Domain(d)].Discover != nil {
		return app, nil // the Soldier checks it against the apps it discovered
	}
	return "", fmt.Errorf("--app: %q is not an app of %s%s", app, d, hint(app, names))
}

// CheckDomain reports an unknown domain with the closest known one.
func CheckDomain(cfg *domains.Config, domain string) error {
	if cfg.Domain(domain) >= 0 {
		return nil
	}
	names := cfg.DomainNames()
	return fmt.Errorf("--domain: %q is not a domain of cluster %s%s (domains: %s)", domain, cfg.Cluster.Name, hint(domain, names), strings.Join(names, ", "))
}

// hint is "; did you mean X?" for the option closest to name, if close
// enough to be a likely typo (config.DidYouMean).
func hint(name string, options []string) string {
	if h := config.DidYouMean(name, options); h != "" {
		return "; " + h
	}
	return ""
}

// ConnectOperator connects to cfg's NATS as the operator, within timeout:
// to url, else nats.url of the config, else DefaultNATS; a token wins over
// the config's authentication. It returns the URL too.
func ConnectOperator(ctx context.Context, cfg *domains.Config, url, token string, timeout time.Duration) (*bus.Conn, string, error) {
	if url == "" {
		url = cfg.NATS.URL
	}
	if url == "" {
		url = DefaultNATS
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	opts := bus.ConnectOptions{URL: url, Name: "regiment-override", Cluster: cfg.Cluster.Name,
		InboxPrefix: bus.InboxPrefix(cfg.Cluster.Name, bus.OperatorUser),
		KnownDomain: func(d string) bool { return cfg.Domain(d) >= 0 }}
	opts.SetAuth(cfg.NATS)
	opts.Token = token
	if err := OperatorSigning(&opts, cfg.NATS); err != nil {
		return nil, url, err
	}
	conn, err := bus.Connect(cctx, opts)
	if err != nil {
		return nil, url, err
	}
	return conn, url, nil
}

// Operator is how `regiment override` reaches a running system: cfg's
// NATS, at URL (else nats.url of the config, else DefaultNATS) with Token
// (winning over the config's authentication), each request answered within
// Timeout.
type Operator struct {
	URL, Token string
	Timeout    time.Duration
}

// DefaultOperator is who pins by default, for the ledger: $USER, else
// "operator".
func DefaultOperator() string {
	if u := os.Getenv("USER"); wire.ValidName(u) {
		return u
	}
	return "operator"
}

// SendOverride sends o and returns the answer of the daemon that took it,
// the line to print. An override refused, unanswered or not sent is an
// error worded for the operator.
func (op Operator) SendOverride(ctx context.Context, cfg *domains.Config, o wire.Override) (string, error) {
	conn, url, err := ConnectOperator(ctx, cfg, op.URL, op.Token, op.Timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	who := "the Commander"
	if !o.ForCommander() {
		who = "the Soldier of " + o.Domain
	}
	rctx, cancel := context.WithTimeout(ctx, op.Timeout)
	defer cancel()
	a, err := conn.RequestOverride(rctx, o)
	switch {
	case errors.Is(err, bus.ErrNoResponder):
		return "", fmt.Errorf("%s is not listening on %s (cluster %s): is it running and connected to this server?", who, url, cfg.Cluster.Name)
	case errors.Is(err, context.DeadlineExceeded):
		return "", fmt.Errorf("no answer from %s within %s (on %s); the override may or may not have been taken: check with 'regiment override list'", who, op.Timeout, url)
	case err != nil:
		return "", err
	}
	from := a.From
	if a.From == "soldier" {
		from += " " + a.Domain
	}
	if !a.Accepted {
		return "", fmt.Errorf("refused by %s: %s", from, wire.CleanText(a.Reason, wire.MaxReason))
	}
	return fmt.Sprintf("applied by %s from its next tick: %s", from, wire.CleanText(a.Reason, wire.MaxReason)), nil
}

// ListOverrides writes a table of the pins in force (of domain, when not
// ""), as kept in the bus's override bucket. When the bucket cannot be
// read it writes the (empty) table and returns the error.
func (op Operator) ListOverrides(ctx context.Context, w io.Writer, cfg *domains.Config, domain string) error {
	conn, _, err := ConnectOperator(ctx, cfg, op.URL, op.Token, op.Timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	lctx, cancel := context.WithTimeout(ctx, op.Timeout)
	defer cancel()
	pins, err := conn.Overrides(lctx, domain)
	now := time.Now()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tPIN\tUNTIL\tLEFT\tBY\tREASON")
	n := 0
	for _, o := range pins {
		if !o.Active(now) {
			continue
		}
		pin := fmt.Sprintf("share %.4g", derefF(o.Share))
		if o.Replicas != nil {
			pin = fmt.Sprintf("%d replicas", *o.Replicas)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.Target(), pin, o.Until.UTC().Format(time.RFC3339),
			o.Until.Sub(now).Round(time.Second), wire.CleanText(o.By, wire.MaxName), wire.CleanText(o.Reason, wire.MaxReason))
		n++
	}
	tw.Flush()
	if n == 0 {
		fmt.Fprintln(w, "no pins in force")
	}
	return err
}

func derefF(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
