// Command commander runs Regiment's Commander as a daemon: every Commander
// tick it shares the contested pool between the domains and publishes one
// directive per domain over NATS, from the reports the Soldiers publish.
//
// It is the only place, with cmd/soldier and cmd/regiment, that handles
// signals and exit codes (the daemons' main, cmd/internal/daemonmain):
// SIGTERM and SIGINT shut it down gracefully, SIGHUP reloads the config file.
package main

import (
	"context"
	"io"
	"os"

	"github.com/regimentd/regiment/cmd/internal/daemonmain"
	"github.com/regimentd/regiment/internal/daemon"
)

const usage = `Usage: commander --config F [--nats URL] [--kubeconfig F] [--data DIR] [--listen ADDR] [--http-token-file F] [--log-level L] [--log-format text|json]
       commander --version

Runs the Commander: every commander.tick of the config it shares the
contested pool between the domains and publishes one directive per domain
over NATS, from the reports the Soldiers publish. Every tick is recorded as
an episode step in DIR/commander.db (one episode per run).

NATS: --nats, else nats.url of the config; when both are empty the Commander
starts an embedded NATS server on 127.0.0.1:4222 with JetStream under
DIR/nats (a single-binary dev mode; Soldiers connect to it by default).

Overrides: the Commander answers share pins and their cancels (regiment
override share|cancel --domain): a pinned domain's share is the pin, after
the guards (beyond its floor, ceiling and max_share_change), with room made
from the unpinned domains, lowest priority first, until the pin lapses.
Accepted pins are kept in the bus's override bucket and restored at start;
every event goes to the ledger.

Kubernetes: with --kubeconfig (a file, or "in-cluster" for the pod's
service account) the Commander publishes only while it holds the Lease
regiment-commander in kubernetes.lease_namespace (leader election, so
replicas can run side by side), and while leading reverts the HPAs of
Soldiers whose lease lapsed to their safe bounds.

HTTP on --listen: /metrics (Prometheus), /healthz (200 while the tick loop
runs), /readyz (200 while connected to NATS and while the store takes
writes; 503 with the reason otherwise, "degraded" after 3 failed writes in
a row). A damaged store is refused at start (exit 1; "regiment episodes
repair" copies what is readable).

/store (GET): a consistent snapshot of DIR/commander.db while it runs,
a bbolt file for "regiment report --episodes" and "regiment episodes
--db" (a URL or the file saved with curl), one at a time, each within
10 minutes. With --http-token-file, /metrics and /store require
"Authorization: Bearer <token>"; /healthz and /readyz stay open.

Signals: SIGTERM or SIGINT drain NATS, flush the store and exit 0; SIGHUP
re-reads the config file: a file with problems is rejected (each logged with
file:line:col) and the running config kept; a good one applies floors,
ceilings, dead_zone, max_share_change, reserve_min, the tick and
directive_ttl from the next tick. Changing the domains or apps needs a
restart.

Exit codes: 0 after a graceful shutdown, 1 on a runtime failure, 2 on a
usage error.

Example:
  commander --config examples/small.hcl --data data --log-level info
  commander --config cluster.hcl --nats nats://nats.regiment:4222 --listen :9464

Flags:
`

func main() { daemonmain.Main(run) }

// embeddedPort is where the dev-mode NATS server listens: NATS's default
// port, where a Soldier without --nats looks. Tests change it.
var embeddedPort = daemon.DefaultEmbeddedPort

// run parses args, runs the Commander until ctx ends and returns the exit
// code. Each value on reload re-reads the config file.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, reload <-chan os.Signal) int {
	o := daemon.CommanderOptions{EmbeddedPort: embeddedPort}
	fs, logging := daemon.NewFlagSet("commander", &o.ConfigPath)
	fs.StringVar(&o.NATSURL, "nats", "", "NATS server `URL`, e.g. nats://127.0.0.1:4222; default: nats.url of the config, else an embedded server")
	fs.StringVar(&o.NATSToken, "nats-token", "", "NATS authentication `token` (default $REGIMENT_NATS_TOKEN), instead of the config's nats authentication; for the embedded server, the token clients must present")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig `file`, or \"in-cluster\": publish only while leading (leader election)")
	fs.StringVar(&o.DataDir, "data", "data", "`dir`ectory for commander.db and, in dev mode, the embedded server's JetStream (nats/)")
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:9464", "`addr`ess for /metrics, /healthz, /readyz and /store")
	fs.StringVar(&o.HTTPTokenFile, "http-token-file", "", "`file` holding the bearer token that /metrics and /store require; default none")
	if code, ok := daemon.ParseFlags(fs, args, "commander", usage, stdout, stderr); !ok {
		return code
	}
	cfg, log, code, ok := daemon.Setup("commander", o.ConfigPath, *logging, &o.NATSToken, stderr)
	if !ok {
		return code
	}
	if err := daemon.Serve(ctx, daemon.NewCommanderProcess(cfg, o, daemon.Deps{}, log), reload); err != nil {
		log.Error("commander failed", "error", err)
		return 1
	}
	return 0
}
