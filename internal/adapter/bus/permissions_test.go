package bus

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

// testConfig is a cluster of two domains, payment and fraud.
var testConfig = &domains.Config{
	Cluster: domains.Cluster{Name: testCluster},
	Domains: []domains.Domain{{Name: "payment"}, {Name: "fraud"}},
}

// secured is a nats-server started from the configuration WriteServerConfig
// renders for testConfig, with a fresh nkey per role.
type secured struct {
	url   string
	seeds map[string]string // user -> seed file
	conf  []byte
}

// startSecured renders the server config (with tls when its CertFile is
// set), parses it as nats-server does (server.ProcessConfigFile) and starts
// the server on a random loopback port with JetStream in a temp dir.
func startSecured(t *testing.T, tls ServerTLS) *secured {
	t.Helper()
	roles, err := Permissions(testConfig)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &secured{seeds: map[string]string{}}
	keys := map[string]string{}
	for _, r := range roles {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := kp.Seed()
		keys[r.User], _ = kp.PublicKey()
		s.seeds[r.User] = filepath.Join(dir, r.User+".nk")
		if err := os.WriteFile(s.seeds[r.User], seed, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var conf bytes.Buffer
	if err := WriteServerConfig(&conf, roles, ServerConfig{StoreDir: filepath.Join(dir, "js"), TLS: tls, Nkeys: keys}); err != nil {
		t.Fatal(err)
	}
	s.conf = conf.Bytes()
	path := filepath.Join(dir, "nats-server.conf")
	if err := os.WriteFile(path, s.conf, 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server refuses the rendered config: %v\n%s", err, s.conf)
	}
	opts.Host, opts.Port, opts.NoSigs, opts.NoLog = "127.0.0.1", server.RANDOM_PORT, true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	s.url = srv.ClientURL()
	return s
}

// as connects with user's nkey seed and inbox prefix.
func (s *secured) as(t *testing.T, user string, mod ...func(*ConnectOptions)) *Conn {
	t.Helper()
	return connect(t, s.url, user, append([]func(*ConnectOptions){func(o *ConnectOptions) {
		o.NkeySeedFile = s.seeds[user]
		o.InboxPrefix = InboxPrefix(testCluster, user)
		o.KnownDomain = func(d string) bool { return d == "payment" || d == "fraud" }
	}}, mod...)...)
}

// quiet fails the test if ch yields anything: each caller first makes sure
// that what it must not see would have arrived by now.
func quiet[T any](t *testing.T, ch <-chan result[T], what string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s: got %+v, %v", what, r.v, r.err)
	default:
	}
}

func TestPermissionsOnARealServer(t *testing.T) {
	s := startSecured(t, ServerTLS{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	commander := s.as(t, CommanderUser)
	payment := s.as(t, SoldierUser("payment"))
	fraud := s.as(t, SoldierUser("fraud"))
	operator := s.as(t, OperatorUser)
	legit := directive("payment", 1, 1)
	if err := commander.EnsureBuckets(ctx); err != nil {
		t.Fatal(err)
	}

	t.Run("a soldier's credentials cannot publish a directive", func(t *testing.T) {
		fn, got := collect[wire.Directive]()
		if _, err := payment.SubscribeDirectives("payment", fn); err != nil {
			t.Fatal(err)
		}
		flush(t, payment)
		// The domain's own Soldier (on a second connection), another domain's
		// Soldier and the operator each try to slip in a directive.
		for i, user := range []string{SoldierUser("payment"), SoldierUser("fraud"), OperatorUser} {
			attacker := s.as(t, user)
			forged := directive("payment", 99, uint64(1000+i))
			if err := attacker.publishDirective(ctx, forged, false); err != nil {
				t.Fatal(err) // the client sends it; the server drops it
			}
			flush(t, attacker)
			eventually(t, 5*time.Second, user+"'s permission violation", func() bool { return attacker.Denied() == 1 })
			// Storing it as the last directive is refused as well.
			sctx, scancel := context.WithTimeout(ctx, time.Second)
			if err := attacker.PublishDirective(sctx, forged); err == nil {
				t.Errorf("%s stored a directive in the bucket", user)
			}
			scancel()
		}
		if err := commander.PublishDirective(ctx, legit); err != nil {
			t.Fatal(err)
		}
		if r := receive(t, got, "the commander's directive"); r.err != nil || !reflect.DeepEqual(r.v, legit) {
			t.Fatalf("the soldier got %+v, %v; want the commander's %+v (forged ones were delivered first)", r.v, r.err, legit)
		}
		quiet(t, got, "after the commander's directive")
		if d, ok, err := commander.LastDirective(ctx, "payment"); err != nil || !ok || !reflect.DeepEqual(d, legit) {
			t.Fatalf("the bucket holds %+v, %v, %v; want the commander's directive", d, ok, err)
		}
	})

	t.Run("a soldier cannot subscribe to another domain's directives", func(t *testing.T) {
		spy := s.as(t, SoldierUser("payment"))
		sfn, spied := collect[wire.Directive]()
		if _, err := spy.SubscribeDirectives("fraud", sfn); err != nil {
			t.Fatal(err)
		}
		flush(t, spy)
		eventually(t, 5*time.Second, "the spy's permission violation", func() bool { return spy.Denied() == 1 })
		fn, got := collect[wire.Directive]()
		if _, err := fraud.SubscribeDirectives("fraud", fn); err != nil {
			t.Fatal(err)
		}
		flush(t, fraud)
		want := directive("fraud", 1, 2)
		if err := commander.PublishDirective(ctx, want); err != nil {
			t.Fatal(err)
		}
		if r := receive(t, got, "fraud's directive"); r.err != nil || !reflect.DeepEqual(r.v, want) {
			t.Fatalf("fraud's soldier got %+v, %v", r.v, r.err)
		}
		flush(t, spy)
		quiet(t, spied, "payment's soldier subscribed to fraud")
	})

	t.Run("a soldier reads only its own last directive", func(t *testing.T) {
		restarted := s.as(t, SoldierUser("payment"))
		if d, ok, err := restarted.LastDirective(ctx, "payment"); err != nil || !ok || !reflect.DeepEqual(d, legit) {
			t.Fatalf("LastDirective(payment) = %+v, %v, %v; want the commander's", d, ok, err)
		}
		sctx, scancel := context.WithTimeout(ctx, time.Second)
		defer scancel()
		if _, ok, err := restarted.LastDirective(sctx, "fraud"); err == nil || ok {
			t.Fatalf("payment's soldier read fraud's last directive (ok %v, err %v)", ok, err)
		}
	})

	t.Run("a soldier publishes only its own domain's reports", func(t *testing.T) {
		fn, got := collect[wire.DomainReport]()
		if _, err := commander.SubscribeReports(fn); err != nil {
			t.Fatal(err)
		}
		flush(t, commander)
		report := func(domain string) wire.DomainReport {
			return wire.DomainReport{Version: wire.Version, Cluster: testCluster, Domain: domain, Seq: 7, SentAt: t0, Mode: wire.ModeActive}
		}
		before := payment.Denied()
		if err := payment.PublishReport(ctx, report("fraud")); err != nil {
			t.Fatal(err)
		}
		flush(t, payment)
		eventually(t, 5*time.Second, "the forged report's violation", func() bool { return payment.Denied() == before+1 })
		want := report("payment")
		if err := payment.PublishReport(ctx, want); err != nil {
			t.Fatal(err)
		}
		if r := receive(t, got, "payment's report"); r.err != nil || r.v.Domain != "payment" {
			t.Fatalf("the commander got %+v, %v; want payment's report (fraud's forged one first)", r.v, r.err)
		}
		quiet(t, got, "after payment's report")
	})

	t.Run("overrides reach their owner and are stored", func(t *testing.T) {
		serve := func(c *Conn, domain, from string) {
			if _, err := c.ServeOverrides(domain, func(o wire.Override, err error) (wire.OverrideAck, bool) {
				if err != nil || o.ForCommander() != (from == CommanderUser) {
					return wire.OverrideAck{}, false
				}
				if err := c.StoreOverride(ctx, o); err != nil {
					return wire.OverrideAck{Version: wire.Version, Cluster: o.Cluster, Domain: o.Domain, App: o.App, From: from, At: t0, Reason: err.Error()}, true
				}
				return wire.OverrideAck{Version: wire.Version, Cluster: o.Cluster, Domain: o.Domain, App: o.App, From: from, Accepted: true, At: t0}, true
			}); err != nil {
				t.Fatal(err)
			}
			flush(t, c)
		}
		serve(commander, "", CommanderUser)
		serve(payment, "payment", "soldier")
		pins := []wire.Override{sharePin("payment", 0.3), replicaPin("payment", "checkout-0", 20)}
		for _, o := range pins {
			a, err := operator.RequestOverride(ctx, o)
			if err != nil || !a.Accepted {
				t.Fatalf("override %s: ack %+v, %v", o.Target(), a, err)
			}
		}
		for name, c := range map[string]*Conn{"payment's soldier": payment, "the operator": operator} {
			got, err := c.Overrides(ctx, "payment")
			if err != nil || !reflect.DeepEqual(got, pins) {
				t.Fatalf("%s lists %+v, %v; want %+v", name, got, err, pins)
			}
		}
	})

	for name, c := range map[string]*Conn{"commander": commander, "operator": operator, "fraud": fraud} {
		if n := c.Denied(); n != 0 {
			t.Errorf("%s was denied %d times doing its own job", name, n)
		}
	}
	if n := payment.Denied(); n != 1 {
		t.Errorf("payment's soldier was denied %d times, want 1 (the forged report)", n)
	}
}

func TestNkeyAuth(t *testing.T) {
	s := startSecured(t, ServerTLS{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stranger, _ := nkeys.CreateUser()
	seed, _ := stranger.Seed()
	strangerFile := filepath.Join(t.TempDir(), "stranger.nk")
	if err := os.WriteFile(strangerFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rule    string
		opts    ConnectOptions
		wantErr string // empty: connects
	}{
		{"a configured nkey connects", ConnectOptions{NkeySeedFile: s.seeds[CommanderUser]}, ""},
		{"an unknown nkey is refused", ConnectOptions{NkeySeedFile: strangerFile}, "authorization"},
		{"no credentials are refused", ConnectOptions{}, "authorization"},
		{"a missing seed file is named", ConnectOptions{NkeySeedFile: filepath.Join(t.TempDir(), "none.nk")}, "nkey_seed_file"},
		{"two ways to authenticate are refused", ConnectOptions{NkeySeedFile: s.seeds[CommanderUser], TokenFile: "x"}, "exclude each other"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			o := tt.opts
			o.URL, o.Cluster = s.url, testCluster
			c, err := Connect(ctx, o)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			if !strings.Contains(strings.ToLower(err.Error()), tt.wantErr) {
				t.Fatalf("error %q does not mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestTokenFileAuth(t *testing.T) {
	e, err := StartEmbedded(EmbeddedOptions{StoreDir: t.TempDir(), Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, wrong, empty := file("good", "s3cret\n"), file("wrong", "guess"), file("empty", " \n")
	tests := []struct {
		rule    string
		opts    ConnectOptions
		wantErr string
	}{
		{"the token in the file connects (whitespace trimmed)", ConnectOptions{TokenFile: good}, ""},
		{"a wrong token is refused", ConnectOptions{TokenFile: wrong}, "authorization"},
		{"a flag token wins over the file", ConnectOptions{TokenFile: wrong, Token: "s3cret"}, ""},
		{"an empty token file is named", ConnectOptions{TokenFile: empty}, "is empty"},
		{"a missing token file is named", ConnectOptions{TokenFile: filepath.Join(dir, "none")}, "token_file"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			o := tt.opts
			o.URL, o.Cluster = e.ClientURL(), testCluster
			c, err := Connect(ctx, o)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			if !strings.Contains(strings.ToLower(err.Error()), tt.wantErr) {
				t.Fatalf("error %q does not mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestSetAuthCopiesTheConfig(t *testing.T) {
	n := domains.NATS{URL: "tls://n:4222", NkeySeedFile: "/s/seed", TLS: domains.NATSTLS{Enabled: true, CAFile: "/s/ca", ServerName: "n"}}
	var o ConnectOptions
	o.SetAuth(n)
	if o.NkeySeedFile != "/s/seed" || o.TokenFile != "" || o.Credentials != "" ||
		o.TLS != (TLS{Enabled: true, CAFile: "/s/ca", ServerName: "n"}) {
		t.Fatalf("got %+v", o)
	}
}

// matches reports whether subject matches the NATS pattern (a literal subject
// here, so wildcards are only on the pattern's side).
func matches(pattern, subject string) bool {
	p, s := strings.Split(pattern, "."), strings.Split(subject, ".")
	for i, tok := range p {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) || (tok != "*" && tok != s[i]) {
			return false
		}
	}
	return len(p) == len(s)
}

func allows(list []string, subject string) bool {
	for _, p := range list {
		if matches(p, subject) {
			return true
		}
	}
	return false
}

func TestPermissionsModel(t *testing.T) {
	roles, err := Permissions(testConfig)
	if err != nil {
		t.Fatal(err)
	}
	byUser := map[string]Role{}
	for _, r := range roles {
		byUser[r.User] = r
	}
	if len(roles) != 4 || len(byUser) != 4 {
		t.Fatalf("got %d roles (%d users), want commander, operator and 2 soldiers", len(roles), len(byUser))
	}
	dp, _ := DirectiveSubject(testCluster, "payment")
	df, _ := DirectiveSubject(testCluster, "fraud")
	rp, _ := ReportSubject(testCluster, "payment")
	rf, _ := ReportSubject(testCluster, "fraud")
	op, _ := OverrideSubject(testCluster, "payment")
	of, _ := OverrideSubject(testCluster, "fraud")
	kvp := "$KV.regiment_prod_directives.payment"
	tests := []struct {
		rule    string
		user    string
		publish bool // else subscribe
		subject string
		allowed bool
	}{
		{"the commander publishes directives", CommanderUser, true, dp, true},
		{"the commander stores last directives", CommanderUser, true, kvp, true},
		{"a soldier does not publish its own directives", SoldierUser("payment"), true, dp, false},
		{"a soldier does not publish another's directives", SoldierUser("payment"), true, df, false},
		{"a soldier does not store directives", SoldierUser("payment"), true, kvp, false},
		{"the operator does not publish directives", OperatorUser, true, dp, false},
		{"a soldier subscribes to its own directives", SoldierUser("payment"), false, dp, true},
		{"a soldier does not subscribe to another's directives", SoldierUser("payment"), false, df, false},
		{"a soldier does not subscribe to every directive", SoldierUser("payment"), false, "regiment.prod.directive.*", false},
		{"a soldier publishes its own reports", SoldierUser("payment"), true, rp, true},
		{"a soldier does not publish another's reports", SoldierUser("payment"), true, rf, false},
		{"a soldier does not read reports", SoldierUser("payment"), false, rf, false},
		{"a soldier hears its own overrides", SoldierUser("payment"), false, op, true},
		{"a soldier does not hear another's overrides", SoldierUser("payment"), false, of, false},
		{"a soldier does not send overrides", SoldierUser("payment"), true, op, false},
		{"the operator sends overrides", OperatorUser, true, of, true},
		{"a soldier reads only its own last directive", SoldierUser("payment"), true, "$JS.API.DIRECT.GET.KV_regiment_prod_directives.$KV.regiment_prod_directives.fraud", false},
		{"a soldier does not read another's inbox", SoldierUser("payment"), false, InboxPrefix(testCluster, CommanderUser) + ".x.y", false},
		{"the commander reads its own inbox", CommanderUser, false, InboxPrefix(testCluster, CommanderUser) + ".x.y", true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			r := byUser[tt.user]
			list := r.Subscribe
			if tt.publish {
				list = r.Publish
			}
			if got := allows(list, tt.subject); got != tt.allowed {
				t.Fatalf("%s may %v %s: %v, want %v (list %q)", tt.user, map[bool]string{true: "publish", false: "subscribe"}[tt.publish], tt.subject, got, tt.allowed, list)
			}
		})
	}
}

func TestServerConfigReadsNkeysFromTheEnvironment(t *testing.T) {
	roles, err := Permissions(testConfig)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, r := range roles {
		kp, _ := nkeys.CreateUser()
		pub, _ := kp.PublicKey()
		t.Setenv(NkeyEnvVar(r.User), pub)
		want[pub] = true
	}
	var conf bytes.Buffer
	if err := WriteServerConfig(&conf, roles, ServerConfig{NkeyEnv: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(conf.String(), `nkey: "`) {
		t.Fatalf("an nkey is written into the file:\n%s", conf.String())
	}
	path := filepath.Join(t.TempDir(), "nats-server.conf")
	if err := os.WriteFile(path, conf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.Nkeys) != len(roles) {
		t.Fatalf("%d nkey users, want %d", len(opts.Nkeys), len(roles))
	}
	for _, u := range opts.Nkeys {
		if !want[u.Nkey] {
			t.Errorf("user nkey %q is not one of the environment's", u.Nkey)
		}
	}

	t.Run("users whose variables collide are refused", func(t *testing.T) {
		cfg := &domains.Config{Cluster: domains.Cluster{Name: testCluster}, Domains: []domains.Domain{{Name: "a-b"}, {Name: "a_b"}}}
		roles, err := Permissions(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteServerConfig(&bytes.Buffer{}, roles, ServerConfig{NkeyEnv: true}); err == nil || !strings.Contains(err.Error(), "share the variable") {
			t.Fatalf("got %v, want a shared-variable error", err)
		}
	})
}
