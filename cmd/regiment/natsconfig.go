package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/config"
)

// natsConfigUsage is what `regiment nats-config --help` prints before the flags.
const natsConfigUsage = `Usage: regiment nats-config --config F --seeds DIR [flags]

Prints a nats-server configuration for the cluster config: JetStream, and one
nkey user per role, each allowed only its subjects
(docs/security.md#permissions-one-user-per-role):

  commander          publishes directives and the allocation, reads reports
  operator           sends overrides, reads reports and the allocation
  soldier-<domain>   reads its domain's directives, publishes its reports

The seeds stay in DIR: give each daemon its own as the file named by
nats { nkey_seed_file = ... } in its config (a Kubernetes Secret per role).
DIR also gets directive-signing.nk, the key the Commander signs directives
with (nats { directive_signing_key_file }); its public key, printed on
stderr, goes in every Soldier's nats { directive_keys }
(docs/security.md#signed-directives). It also gets override-signing.nk,
the key the operator's regiment override signs overrides with (nats {
override_signing_key_file }); its public key goes in the Commander's and
every Soldier's nats { override_keys } (docs/security.md#signed-overrides).

The server listens on 127.0.0.1 unless --listen says otherwise, with
monitoring off unless --http; across hosts, listen on the network with
--tls-cert and --tls-key (docs/security.md#tls).
With --nkey-env the file names environment variables instead of keys
($REGIMENT_NKEY_COMMANDER, $REGIMENT_NKEY_SOLDIER_PAYMENT, ...), so it does
not change when keys do; deploy/overlays/example-secure is made this way.

Example:
  regiment nats-config --config deploy/overlays/example/regiment.hcl --seeds secrets/ \
    --tls-cert /etc/nats/tls/tls.crt --tls-key /etc/nats/tls/tls.key > nats-server.conf

Flags:
`

// runNATSConfig prints a nats-server configuration for a cluster config: one
// nkey user per role (Commander, operator, one Soldier per domain) with the
// permissions of bus.Permissions. The users' seeds live in --seeds, one file
// per user; missing ones are created, existing ones reused, so the output is
// stable across runs. Exit 1 on a bad config or an I/O failure, 2 on a usage
// error.
func runNATSConfig(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fail := cli.Failer("regiment nats-config", stderr)
	fs := cli.NewFlagSet("regiment nats-config", natsConfigUsage, stderr)
	configPath := fs.String("config", "", "cluster config `file` (HCL); required")
	seeds := fs.String("seeds", "", "`dir`ectory of the users' nkey seeds, <user>.nk; missing ones are created (mode 0600); required without --nkey-env")
	out := fs.String("out", "", "write the server config to this `file` instead of stdout")
	var sc bus.ServerConfig
	fs.StringVar(&sc.Listen, "listen", "127.0.0.1:4222", "client `address` of the server; loopback by default, 0.0.0.0:4222 for every interface (then use --tls-cert)")
	fs.StringVar(&sc.HTTP, "http", "", "monitoring `address` (/healthz), e.g. 127.0.0.1:8222; it has no authentication, so keep it off a shared network; empty: none")
	fs.StringVar(&sc.StoreDir, "store-dir", "/data", "JetStream storage `dir`ectory on the server")
	fs.StringVar(&sc.TLS.CertFile, "tls-cert", "", "server certificate `file` (PEM) as the server sees it; turns TLS on")
	fs.StringVar(&sc.TLS.KeyFile, "tls-key", "", "server key `file` (PEM)")
	fs.StringVar(&sc.TLS.CAFile, "tls-ca", "", "CA `file` (PEM) client certificates must chain to")
	fs.BoolVar(&sc.TLS.Verify, "tls-verify", false, "require client certificates (needs --tls-ca)")
	fs.BoolVar(&sc.NkeyEnv, "nkey-env", false, "write each nkey as $REGIMENT_NKEY_<USER>, read by nats-server from its environment, instead of from --seeds")
	if code, done := cli.ParseFlags(fs, args); done {
		return code
	}
	if *configPath == "" || (*seeds == "") == !sc.NkeyEnv || fs.NArg() > 0 {
		return cli.UsageFailer(fs, stderr)("--config and one of --seeds or --nkey-env are required, and it takes no arguments")
	}
	cfg, err := config.LoadFile(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	b, err := bus.ServerConfigFor(cfg, *seeds, sc, stderr)
	if err != nil {
		return fail(err)
	}
	if *out == "" {
		_, err = stdout.Write(b)
	} else {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "regiment nats-config: write config: %v\n", err)
		return 1
	}
	return 0
}
