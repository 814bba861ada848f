package main

import (
	"context"
	"fmt"
	"io"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/episodes"
	"github.com/regimentd/regiment/internal/offline/report"
)

const reportUsage = `Usage: regiment report --config F --episodes DIR|FILE|URL[,...] --out DIR [--top N] [--http-token-file F]

Before switching a domain to mode = "active", run it in mode = "recommend":
its Soldier observes, decides with its policy and with its baseline, reports
to the Commander and records every tick, and writes nothing to the cluster,
whose own autoscaling (its HPAs) keeps acting. This command reads those
recorded steps and compares, per domain and app, what Regiment would have done
with what the cluster did:

  replicas       over time, live (the workload's target on the cluster) and
                 recommended (the Soldier's policy after its stabiliser and
                 guards, within the Commander's budget): DIR/replicas.png,
                 each domain summed and its --top apps
  core-hours     replicas x cpu_per_replica over each recorded tick, both ways
  breach minutes estimated both ways: an app-tick breaches when the
                 simulator's steady-state M/M/c queue (c = replicas x
                 concurrency, service_time from the config) serving the
                 recorded request rate has a p99 above the domain's latency
                 objective, or a load of 98% of capacity or more; next to
                 the domain's recorded breach minutes (measured, live only)

DIR/report.md has a table per domain and the --top apps of each by the
difference in core-hours. What is estimated: the recommended side never ran,
so its p99 is the model's, and the live side is put through the same model so
the two compare; every replica counts as ready (no start-up delay, no
backlog), and requested cores stand for cost (no nodes, no bin packing). Give
the config "regiment calibrate" wrote from the same stores for service times
fitted to the cluster.

The episodes are the Soldier episodes of every *.db store in DIR (the --data
directory of the Soldier daemons, soldier-<domain>.db, or of "regiment run",
regiment.db), of bbolt files given directly, or of running daemons: a URL,
http(s)://HOST:PORT/ (a daemon's --listen address, e.g. through kubectl
port-forward), reads a consistent snapshot of its store (its /store; the
token of its --http-token-file with --http-token-file or
$REGIMENT_HTTP_TOKEN). A comma-separated list combines stores from several
hosts. Only steps recorded in recommend mode (or shadow, its alias) count.
A store file held by a running daemon is locked: read the daemon's URL, or
the file "curl -o soldier-<domain>.db http://HOST:PORT/store" saves.

The apps are the store's: every app the Soldiers recorded a decision for,
listed in the config or found by label (discover), under their names in
the store, with the namespace, workload and CPU request the Soldier
recorded (a store of an older Regiment: the config's). DIR/report.md lists
every app of each domain after the --top ones.

Example:
  regiment calibrate --config prod.hcl --episodes soldier-data --out calibrated.hcl
  regiment report --config calibrated.hcl --episodes soldier-data --out review
  regiment report --config prod.hcl --episodes http://localhost:9465/ --out review

Flags:
`

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("regiment report", reportUsage, stderr)
	configPath := fs.String("config", "", "cluster config `file` (HCL) the Soldiers ran, preferably calibrated; required")
	spec := fs.String("episodes", "", "store `dir`ectory (every *.db in it), a bbolt file, a running daemon's URL (http://localhost:9465/), or a comma-separated list; required")
	tokenFile := fs.String("http-token-file", "", "`file` with the daemons' bearer token, for URLs (default $"+episodes.TokenEnv+")")
	out := fs.String("out", "", "report `dir`ectory (created); required")
	top := fs.Int("top", 5, "apps per domain in the table and the plot, by the difference in core-hours")
	if code, done := cli.ParseFlags(fs, args); done {
		return code
	}
	fail := cli.Failer("regiment report", stderr)
	usage := cli.UsageFailer(fs, stderr)
	switch {
	case *configPath == "" || *spec == "" || *out == "" || fs.NArg() > 0:
		return usage("--config, --episodes and --out are required, and nothing else")
	case *top < 0:
		return usage("--top must be 0 or more, not %d", *top)
	}
	cfg, err := config.LoadFile(*configPath)
	if err != nil {
		return fail(err)
	}
	srcs, done, err := episodes.Resolve(ctx, *spec, *tokenFile)
	defer done()
	if err != nil {
		return fail(err)
	}
	rec, err := report.Read(ctx, cfg, srcs)
	if err != nil {
		return fail(err)
	}
	results := report.Compare(rec)
	paths, err := report.Write(*out, rec, results, *top)
	if err != nil {
		return fail(err)
	}
	report.WriteSummary(stdout, results)
	fmt.Fprintf(stdout, "wrote %s and %s\n", paths[0], paths[1])
	return 0
}
