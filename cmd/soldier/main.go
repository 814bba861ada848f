// Command soldier runs one domain's Soldier as a daemon: every Soldier tick
// it turns the domain's budget, from the Commander's latest directive, into
// replica targets for the domain's apps, actuates them and reports back over
// NATS.
//
// Until the Kubernetes adapter exists it drives a simulated cluster: its own
// simulation of the whole config replaying a scenario, of which it actuates
// only its domain.
//
// It is the only place, with cmd/commander and cmd/regiment, that handles
// signals and exit codes (the daemons' main, cmd/internal/daemonmain):
// SIGTERM and SIGINT shut it down gracefully, SIGHUP reloads the config file.
package main

import (
	"context"
	"io"
	"os"

	"github.com/regimentd/regiment/cmd/internal/daemonmain"
	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/daemon"
)

const usage = `Usage: soldier --config F --domain NAME (--scenario F | --kubeconfig F) [--nats URL] [--data DIR] [--listen ADDR] [--http-token-file F] [--log-level L] [--log-format text|json]
       soldier --version

Runs the Soldier of one domain: every soldier.tick of the config it sizes
the domain's apps within the budget of the Commander's latest directive
(or for demand, when it has none or it expired), actuates the changes
through its safety executor and publishes a report for the Commander. At
start it resumes from the last directive held in NATS, so a restarted
Soldier has its budget before the next Commander tick. Every tick is
recorded as an episode step in DIR/soldier-<domain>.db (one episode per run).

Cluster: with --scenario, a simulated cluster of the whole config replaying
the scenario's traffic, of which the Soldier actuates only its domain. The
simulation advances max(soldier.tick, 10s) of simulated time per tick, so
with a short tick it runs faster than real time. With --kubeconfig (a file,
or "in-cluster" for the pod's service account), the real cluster: the apps'
workloads as the config's kubernetes and workload blocks map them, observed
through informers and the prometheus block's queries, actuated per
soldier.actuation (replicas or hpa-bounds), with the Soldier's Lease
regiment-soldier-<domain> renewed in kubernetes.lease_namespace.

NATS: --nats, else nats.url of the config, else nats://127.0.0.1:4222 (where
a commander without a NATS URL serves its embedded server).

Overrides: the Soldier answers the domain's replica pins and their cancels
(regiment override replicas|cancel --app): a pinned app's target is the pin,
within its [min, max] replicas, above the policy, fallback, ladder, budget,
cooldown and error veto, until the pin lapses. Accepted pins are kept in the
bus's override bucket and restored at start; every event goes to the ledger.

HTTP on --listen: /metrics (Prometheus), /healthz (200 while the tick loop
runs), /readyz (200 once connected to NATS and after the first tick, while
the store takes writes; 503 with the reason otherwise, "degraded" after 3
failed writes in a row). A damaged store is refused at start (exit 1;
"regiment episodes repair" copies what is readable).

/store (GET): a consistent snapshot of DIR/soldier-<domain>.db while it runs,
a bbolt file for "regiment report --episodes" and "regiment episodes
--db" (a URL or the file saved with curl), one at a time, each within
10 minutes. With --http-token-file, /metrics and /store require
"Authorization: Bearer <token>"; /healthz and /readyz stay open.

Signals: SIGTERM or SIGINT stop actuating, drain NATS, flush the store and
exit 0; SIGHUP re-reads the config file: a file with problems is rejected
(each logged with file:line:col) and the running config kept; a good one
applies the executor's rules (overage_cap, scale_down_cooldown,
error_rate_veto, max_writes_per_tick), target_utilisation, mode, the tick,
the domain's SLO and its apps' replica bounds from the next tick. Changing
the domains or apps needs a restart.

Exit codes: 0 after a graceful shutdown, 1 on a runtime failure, 2 on a
usage error.

Example:
  soldier --config examples/small.hcl --domain payment \
    --scenario examples/scenarios/small-day.hcl --data data --listen 127.0.0.1:9465

Flags:
`

func main() { daemonmain.Main(run) }

// run parses args, runs the Soldier until ctx ends and returns the exit
// code. Each value on reload re-reads the config file.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, reload <-chan os.Signal) int {
	var o daemon.SoldierOptions
	fs, logging := daemon.NewFlagSet("soldier", &o.ConfigPath)
	fs.StringVar(&o.Domain, "domain", "", "the domain `name` this Soldier runs; required")
	fs.StringVar(&o.NATSURL, "nats", "", "NATS server `URL`; default: nats.url of the config, else nats://127.0.0.1:4222")
	fs.StringVar(&o.NATSToken, "nats-token", "", "NATS authentication `token` (default $REGIMENT_NATS_TOKEN), instead of the config's nats authentication")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig `file`, or \"in-cluster\": act on a real cluster instead of a simulation")
	fs.StringVar(&o.ScenarioPath, "scenario", "", "scenario `file` (HCL) driving the simulated cluster; required without --kubeconfig")
	fs.StringVar(&o.DataDir, "data", "data", "`dir`ectory for soldier-<domain>.db")
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:9465", "`addr`ess for /metrics, /healthz, /readyz and /store")
	fs.StringVar(&o.HTTPTokenFile, "http-token-file", "", "`file` holding the bearer token that /metrics and /store require; default none")
	if code, ok := daemon.ParseFlags(fs, args, "soldier", usage, stdout, stderr); !ok {
		return code
	}
	switch {
	case o.ConfigPath == "":
		return usageError(stderr, "--config is required")
	case o.Domain == "":
		return usageError(stderr, "--domain is required")
	case o.Kubeconfig != "" && o.ScenarioPath != "":
		return usageError(stderr, "--scenario and --kubeconfig exclude each other: a simulated cluster or a real one")
	case o.Kubeconfig == "" && o.ScenarioPath == "":
		return usageError(stderr, "--scenario is required: it drives the simulated cluster (or --kubeconfig for a real one)")
	}
	cfg, log, code, ok := daemon.Setup("soldier", o.ConfigPath, *logging, &o.NATSToken, stderr)
	if !ok {
		return code
	}
	if cfg.Domain(o.Domain) < 0 {
		return usageError(stderr, "--domain: %v", cli.UnknownName("domain", o.Domain, o.ConfigPath, cfg.DomainNames()))
	}
	log = log.With("domain", o.Domain)
	if err := daemon.Serve(ctx, daemon.NewSoldierProcess(cfg, o, daemon.Deps{}, nil, log), reload); err != nil {
		log.Error("soldier failed", "error", err)
		return 1
	}
	return 0
}

// usageError reports a usage problem and returns exit code 2.
func usageError(stderr io.Writer, format string, args ...any) int {
	return daemon.UsageError(stderr, "soldier", format, args...)
}
