package main

import (
	"context"
	"fmt"
	"io"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/calibrate"
	"github.com/regimentd/regiment/internal/offline/episodes"
)

const calibrateUsage = `Usage: regiment calibrate --config F --episodes DIR|FILE|URL[,...] [--out calibrated.hcl] [--json report.json] [--http-token-file F]

Fits the simulator to what the Soldiers recorded, per app set of the config:

  service_time  from cpu_util = rps x service_time / (ready x concurrency),
                the median over ticks with cpu_util in [0.05, 0.95]
  startup_time  from replicas seen starting to the same replicas ready
                (first in, first out), the median; resolution one Soldier tick
  call_ratio    for sets with depends_on: the least-squares slope of the
                callee's rps changes on the callers' rps changes, at most
                the callee's smallest rps / callers' rps

An estimate replaces the configured value when it has --min-samples samples;
apps without traffic keep theirs.

Then it replays the recorded demand and replica targets through the simulator,
with the config as given and with the calibrated one, and reports the Pearson r
between recorded and simulated p99 and served rps, per domain and overall.
A series passes at r >= --target (0.85); a domain whose recording is constant
(no traffic) is shown as SKIP. Exit status 0: every series passes after
calibration; 1: some fail (the outputs are still written) or an error.

The episodes are the Soldier episodes of every *.db store in DIR (the --data
directory of "regiment run", regiment.db, or of the Soldier daemons,
soldier-<domain>.db), of bbolt files given directly, or of running daemons:
a URL, http(s)://HOST:PORT/ (a daemon's --listen address, e.g. through
kubectl port-forward), reads a consistent snapshot of its store (its /store;
the token of its --http-token-file with --http-token-file or
$REGIMENT_HTTP_TOKEN). A comma-separated list combines stores from several
hosts. Episodes that overlap in time form one run, replayed together.
Soldier steps hold per-app telemetry ("rps/<app>", "cpu_util/<app>", ...
outcome keys) from this version of Regiment on; older steps are skipped. A
store file held by a running daemon is locked: read the daemon's URL, or the
file "curl -o soldier-<domain>.db http://HOST:PORT/store" saves.

--out writes a copy of the config with the changed values edited in (comments
kept, layout as hclfmt, relative checkpoint paths rebased to the copy's
directory; the copy is checked to load); --json writes the full
report (estimates, samples, scores before and after). "regiment train --episodes DIR" runs the same
calibration before fine-tuning.

Example:
  regiment calibrate --config examples/small.hcl --episodes data --out calibrated.hcl
  regiment validate --config calibrated.hcl
  regiment calibrate --config prod.hcl --episodes http://localhost:9465/,http://localhost:9466/ --out calibrated.hcl

Flags:
`

func runCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fail := cli.Failer("regiment calibrate", stderr)
	fs := cli.NewFlagSet("regiment calibrate", calibrateUsage, stderr)
	configPath := fs.String("config", "", "cluster config `file` (HCL) to calibrate; required")
	spec := fs.String("episodes", "", "store `dir`ectory (every *.db in it), a bbolt file, a running daemon's URL (http://localhost:9465/), or a comma-separated list; required")
	tokenFile := fs.String("http-token-file", "", "`file` with the daemons' bearer token, for URLs (default $"+episodes.TokenEnv+")")
	out := fs.String("out", "", "write the calibrated config (HCL) to `file`")
	jsonOut := fs.String("json", "", "write the report as JSON to `file`")
	target := fs.Float64("target", 0.85, "Pearson r each replayed series must reach")
	minSamples := fs.Int("min-samples", 30, "fewest samples an estimate needs to replace the configured value")
	if code, done := cli.ParseFlags(fs, args); done {
		return code
	}
	if *configPath == "" || *spec == "" || fs.NArg() > 0 {
		return cli.UsageFailer(fs, stderr)("--config and --episodes are required, and nothing else")
	}
	src, err := config.ReadFile(*configPath)
	if err != nil {
		return fail(err)
	}
	cfg, err := config.Parse(src, *configPath)
	if err != nil {
		return fail(err)
	}
	res, err := episodes.CalibrateStores(ctx, cfg, *spec, *tokenFile, stderr, calibrate.Options{Target: *target, MinSamples: *minSamples})
	if err != nil {
		return fail(err)
	}
	if err := calibrate.WriteReport(stdout, res); err != nil {
		return fail(err)
	}
	if *out != "" {
		if err := calibrate.WriteConfig(src, *configPath, *out, res.Sets); err != nil {
			fmt.Fprintf(stderr, "regiment calibrate: write calibrated config: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", *out)
	}
	if *jsonOut != "" {
		if err := cli.WriteJSON(*jsonOut, res); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "wrote %s\n", *jsonOut)
	}
	if !res.After.Pass() {
		fmt.Fprintf(stdout, "\nFAIL: some replayed series stay below r = %.2f after calibration\n", *target)
		return 1
	}
	fmt.Fprintf(stdout, "\nPASS: every replayed series reaches r >= %.2f after calibration\n", *target)
	return 0
}
