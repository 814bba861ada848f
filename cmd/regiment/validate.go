package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
)

// validateUsage is what `regiment validate --help` prints before the flags.
const validateUsage = `Usage: regiment validate --config F [--scenario F]

Checks a cluster config, and a scenario against it, and reports every problem
at once as file:line,col: problem; hint. Trace paths in a scenario resolve
against the scenario file's directory; every trace is read and checked as
regiment sim reads it, with the same errors (file and line). Exits 0 and prints a
summary if all is well, 1 if there are problems, 2 on a usage error.

Example:
  regiment validate --config examples/paymentscale.hcl --scenario examples/scenarios/flash-sale.hcl

Flags:
`

// runValidate checks a config and optionally a scenario, printing every
// problem of both to stderr (exit 1) or a one-line summary to stdout (exit 0).
// Usage errors exit 2.
func runValidate(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", validateUsage, stderr)
	configPath := fs.String("config", "", "cluster config `file` (HCL); required")
	scenarioPath := fs.String("scenario", "", "scenario `file` (HCL) to check against the config")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *configPath == "" || fs.NArg() > 0 {
		return usageFailer("validate", fs, stderr)("--config is required, and takes no arguments")
	}

	cfg, cfgErr := config.LoadFile(*configPath)
	if cfgErr != nil {
		fmt.Fprintln(stderr, cfgErr)
	}
	var sc *domains.Scenario
	if *scenarioPath != "" {
		// With a broken config, the scenario is still checked, without its
		// references to domains and app sets (cfg is nil).
		var err error
		if sc, err = config.LoadScenarioFile(*scenarioPath, cfg); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		// Every trace is read and checked as regiment sim does, with the
		// same errors (file and line).
		if _, err := loadTraffic(cfg, sc); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	if cfgErr != nil {
		return 1
	}
	fmt.Fprintln(stdout, summary(cfg, sc))
	return 0
}

// summary is one line describing a valid config and scenario, e.g.
// "ok: cluster prod, 5 domains, 12 app sets, 1550 apps; scenario s, 72h, 2 traffic, 3 events".
func summary(cfg *domains.Config, sc *domains.Scenario) string {
	sets := 0
	for _, d := range cfg.Domains {
		sets += len(d.AppSets)
	}
	s := fmt.Sprintf("ok: cluster %s, %s, %s, %s", cfg.Cluster.Name,
		plural(len(cfg.Domains), "domain"), plural(sets, "app set"), plural(cfg.AppCount(), "app"))
	discovering := 0
	for _, d := range cfg.Domains {
		if d.Discover != nil {
			discovering++
		}
	}
	if discovering > 0 {
		s += fmt.Sprintf(" (and those %s find on the cluster)", plural(discovering, "discover block")) // counted at run time
	}
	if sc != nil {
		s += fmt.Sprintf("; scenario %s, %s, %d traffic, %s", sc.Name,
			shortDuration(sc.Duration), len(sc.Traffic), plural(len(sc.Events), "event"))
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// shortDuration drops zero minutes and seconds: 72h, 1h30m, 90s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
