package bus

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/regimentd/regiment/internal/core/domains"
)

// User names, one NATS user per role. A Soldier's is SoldierUser(domain).
const (
	// CommanderUser publishes directives and the allocation, reads reports,
	// answers share overrides and keeps the directive and override buckets.
	CommanderUser = "commander"
	// OperatorUser is a human's CLI (regiment override): it sends overrides
	// and watches allocations and reports. It publishes no directive.
	OperatorUser = "operator"
)

// SoldierUser is the NATS user of domain's Soldier, "soldier-<domain>".
func SoldierUser(domain string) string { return "soldier-" + domain }

// Role is what one NATS user may do: the subjects it may publish to and
// subscribe to (NATS wildcards "*" one token, ">" the rest). Anything not
// listed is refused by the server. With AllowResponses the user may also
// answer a request it received (publish once to its reply subject), which
// override answers need.
type Role struct {
	User   string // CommanderUser, OperatorUser or SoldierUser(domain)
	Domain string // the Soldier's domain; empty for the other roles
	// InboxPrefix is the reply-inbox prefix the user must connect with
	// (ConnectOptions.InboxPrefix): its JetStream replies arrive under it, and
	// it may subscribe to nothing else of the kind, so no user reads another's
	// replies.
	InboxPrefix    string
	Publish        []string
	Subscribe      []string
	AllowResponses bool
}

// InboxPrefix is the reply-inbox prefix of user in cluster,
// "_INBOX_<cluster>_<user>".
func InboxPrefix(cluster, user string) string { return "_INBOX_" + cluster + "_" + user }

// Permissions is the permission model of cfg's cluster: the Commander, the
// operator, then one Soldier per domain in config order.
//
//   - Only the Commander publishes directives (and writes the directive
//     bucket). A Soldier subscribes to its own domain's directives and
//     overrides only, reads only its own domain's last directive, and publishes
//     only its own domain's reports.
//   - The operator publishes overrides (as requests) and may read every
//     report, the allocation and the pins in force; the Commander (share pins)
//     and a Soldier (its domain's replica pins) answer them and store them.
//
// JetStream access is the exact $JS.API subjects nats.go's jetstream
// key-value client sends for what each role does with the two buckets:
//
//   - Only the Commander creates or updates a bucket (account info, then
//     STREAM.UPDATE falling back to STREAM.CREATE): it creates both at start
//     (EnsureBuckets).
//     Nobody may delete or purge a stream, create another stream, or read
//     messages by a body-given subject (STREAM.MSG.GET); so no credential can
//     add subjects or a republish rule to a bucket, the escalation of issue 16.
//   - A Soldier binds to a bucket with STREAM.INFO, reads its own keys with
//     DIRECT.GET of the key's subject, writes only "$KV.<overrides>.<domain>.*"
//     (its replica pins), and finds its own pins with STREAM.INFO and a
//     subjects filter. It creates no consumer, on any stream, under any API
//     subject (CONSUMER.CREATE, CONSUMER.DURABLE.CREATE): a push consumer
//     delivers to whatever subject its creator names, which permissions
//     cannot restrict, so a consumer on its own keys could deliver them on
//     another domain's subjects (issue 34). Receivers refuse such
//     deliveries anyway (ErrMisrouted).
//   - The Commander and the operator list every pin with an ordered consumer
//     whose filter subject is in the API subject
//     (CONSUMER.CREATE.<stream>.<name>.$KV.<overrides>.>); the server
//     refuses a request whose body filter differs from that subject. Their
//     consumers could be aimed at any subject too; what they deliver is
//     refused by every receiver (ErrMisrouted).
//
// STREAM.INFO is the one JetStream call that shows a Soldier something of
// other domains: the bucket's configuration and, when asked with a subjects
// filter, which keys exist and how many messages each holds (not their
// values). Consumer names are random, so a user that lists may delete any
// consumer of the override stream (CONSUMER.DELETE.<stream>.*): at worst it
// cuts short another role's listing, which is retried.
func Permissions(cfg *domains.Config) ([]Role, error) {
	c := cfg.Cluster.Name
	if err := ValidToken(c); err != nil {
		return nil, fmt.Errorf("bus: permissions: cluster: %w", err)
	}
	db, _ := DirectiveBucket(c)
	ob, _ := OverrideBucket(c)
	root := subjectRoot + "." + c + "."
	api := "$JS.API."
	// bind is what opening an existing bucket takes (jetstream.KeyValue).
	bind := func(b string) []string { return []string{api + "STREAM.INFO.KV_" + b} }
	// create is what CreateOrUpdateKeyValue takes: account info (limits
	// checked before creating), update, create when update finds none.
	create := func(b string) []string {
		return []string{api + "INFO", api + "STREAM.UPDATE.KV_" + b, api + "STREAM.CREATE.KV_" + b}
	}
	// list is what listing keys under filter takes: an ordered push consumer
	// (named at random) filtered on the API subject, its deletion on stop or
	// reset, and answers to the server's flow-control requests.
	list := func(b, filter string) []string {
		return []string{
			api + "CONSUMER.CREATE.KV_" + b + ".*.$KV." + b + "." + filter,
			api + "CONSUMER.DELETE.KV_" + b + ".*",
			"$JS.FC.KV_" + b + ".>",
		}
	}
	get := func(b, key string) string { return api + "DIRECT.GET.KV_" + b + ".$KV." + b + "." + key }

	commander := Role{User: CommanderUser, InboxPrefix: InboxPrefix(c, CommanderUser), AllowResponses: true}
	commander.Publish = concat(
		[]string{root + kindDirective + ".*", root + kindAllocation},
		bind(db), create(db), []string{"$KV." + db + ".*", get(db, "*")},
		bind(ob), create(ob), list(ob, ">"), []string{"$KV." + ob + ".>", get(ob, ">")},
	)
	commander.Subscribe = []string{root + kindReport + ".*", root + kindOverride + ".*", commander.InboxPrefix + ".>"}

	operator := Role{User: OperatorUser, InboxPrefix: InboxPrefix(c, OperatorUser)}
	operator.Publish = concat([]string{root + kindOverride + ".*"}, bind(ob), list(ob, ">"), []string{get(ob, ">")})
	operator.Subscribe = []string{root + kindReport + ".*", root + kindAllocation, operator.InboxPrefix + ".>"}

	roles := []Role{commander, operator}
	seen := map[string]bool{}
	for _, d := range cfg.Domains {
		if err := ValidToken(d.Name); err != nil {
			return nil, fmt.Errorf("bus: permissions: domain: %w", err)
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("bus: permissions: duplicate domain %q", d.Name)
		}
		seen[d.Name] = true
		u := SoldierUser(d.Name)
		s := Role{User: u, Domain: d.Name, InboxPrefix: InboxPrefix(c, u), AllowResponses: true}
		s.Publish = concat(
			[]string{root + kindReport + "." + d.Name},
			bind(db), []string{get(db, d.Name)},
			bind(ob),
			[]string{"$KV." + ob + "." + d.Name + ".*", get(ob, d.Name), get(ob, d.Name+".*")},
		)
		s.Subscribe = []string{root + kindDirective + "." + d.Name, root + kindOverride + "." + d.Name, s.InboxPrefix + ".>"}
		roles = append(roles, s)
	}
	return roles, nil
}

// concat joins subject lists, keeping the first of duplicates.
func concat(ss ...[]string) []string {
	var out []string
	for _, s := range ss {
		for _, v := range s {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// ServerConfig is what WriteServerConfig needs besides the roles.
type ServerConfig struct {
	// Listen is the client address. Default "127.0.0.1:4222" (loopback).
	Listen string
	// HTTP is the monitoring address (/healthz). nats-server serves it
	// without authentication. Empty: none.
	HTTP string
	// StoreDir is the JetStream directory. Default "/data".
	StoreDir string
	// TLS, when CertFile is set, makes the server require TLS.
	TLS ServerTLS
	// Nkeys maps each role's user to its public nkey ("U..."). Every role
	// needs one, unless NkeyEnv.
	Nkeys map[string]string
	// NkeyEnv writes each user's nkey as a reference to the environment
	// variable NkeyEnvVar(user), which nats-server resolves when it reads the
	// file: the file then holds no key and survives key rotation (a
	// Kubernetes Secret sets the variables). Nkeys is not used.
	NkeyEnv bool
}

// NkeyEnvVar is the environment variable holding user's public nkey in a
// config written with NkeyEnv: "REGIMENT_NKEY_" and the user in upper case
// with "-" as "_", e.g. REGIMENT_NKEY_SOLDIER_PAYMENT.
func NkeyEnvVar(user string) string {
	return "REGIMENT_NKEY_" + strings.ToUpper(strings.ReplaceAll(user, "-", "_"))
}

// ServerTLS is the server's side of TLS: its certificate and, with Verify,
// the CA that client certificates must chain to.
type ServerTLS struct {
	CertFile, KeyFile string
	CAFile            string // CA of client certificates (with Verify) and of the chain
	Verify            bool   // require a client certificate
}

// WriteServerConfig writes a nats-server configuration with JetStream and one
// nkey user per role, each allowed exactly its Role's subjects. The output is
// deterministic for equal input.
func WriteServerConfig(w io.Writer, roles []Role, sc ServerConfig) error {
	if sc.Listen == "" {
		sc.Listen = "127.0.0.1:4222"
	}
	if sc.StoreDir == "" {
		sc.StoreDir = "/data"
	}
	var b strings.Builder
	b.WriteString("# nats-server configuration for Regiment, generated by `regiment nats-config`.\n")
	b.WriteString("# One nkey user per role; each may publish and subscribe only to the subjects\n")
	b.WriteString("# listed (docs/security.md#permissions-one-user-per-role). Public keys only:\n")
	b.WriteString("# the seeds stay with the daemons (nats { nkey_seed_file = ... } in the\n")
	b.WriteString("# cluster config).\n")
	if sc.NkeyEnv {
		b.WriteString("# Each nkey is read from the environment variable named after the user.\n")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "listen: %q\n", sc.Listen)
	if sc.HTTP != "" {
		fmt.Fprintf(&b, "http: %q\n", sc.HTTP)
	}
	fmt.Fprintf(&b, "jetstream {\n  store_dir: %q\n}\n", sc.StoreDir)
	if t := sc.TLS; t.CertFile != "" {
		if t.KeyFile == "" {
			return errors.New("bus: server config: tls needs a key file with its cert file")
		}
		if t.Verify && t.CAFile == "" {
			return errors.New("bus: server config: verifying client certificates needs a CA file")
		}
		fmt.Fprintf(&b, "tls {\n  cert_file: %q\n  key_file: %q\n", t.CertFile, t.KeyFile)
		if t.CAFile != "" {
			fmt.Fprintf(&b, "  ca_file: %q\n", t.CAFile)
		}
		if t.Verify {
			b.WriteString("  verify: true\n")
		}
		b.WriteString("  timeout: 2\n}\n")
	}
	b.WriteString("authorization {\n  users: [\n")
	vars := map[string]string{}
	for _, r := range roles {
		key := fmt.Sprintf("%q", sc.Nkeys[r.User])
		if sc.NkeyEnv {
			key = "$" + NkeyEnvVar(r.User)
			if other, dup := vars[key]; dup {
				return fmt.Errorf("bus: server config: users %s and %s share the variable %s", other, r.User, key)
			}
			vars[key] = r.User
		} else if !strings.HasPrefix(sc.Nkeys[r.User], "U") {
			return fmt.Errorf("bus: server config: user %s: %q is not a public user nkey", r.User, sc.Nkeys[r.User])
		}
		fmt.Fprintf(&b, "    # %s (connects with inbox prefix %s)\n", r.User, r.InboxPrefix)
		fmt.Fprintf(&b, "    {\n      nkey: %s\n      permissions: {\n", key)
		writeList(&b, "publish", r.Publish)
		writeList(&b, "subscribe", r.Subscribe)
		if r.AllowResponses {
			b.WriteString("        allow_responses: true\n")
		}
		b.WriteString("      }\n    }\n")
	}
	b.WriteString("  ]\n}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeList(b *strings.Builder, name string, subjects []string) {
	fmt.Fprintf(b, "        %s: { allow: [\n", name)
	for _, s := range subjects {
		fmt.Fprintf(b, "          %q\n", s)
	}
	b.WriteString("        ] }\n")
}
