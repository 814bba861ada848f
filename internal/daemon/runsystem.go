package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// SystemRun is what a run of the System did (RunSystem).
type SystemRun struct {
	SystemStats
	Metrics sim.Metrics   // the simulated cluster's
	Wall    time.Duration // how long the run took
	Stopped bool          // ctx ended it before the scenario did
}

// RunSystem runs the Commander and Soldiers over an embedded NATS server
// against the simulation s at speed (System; `regiment run`), calling
// progress with the simulated and the wall time elapsed, and returns what
// it did.
func RunSystem(ctx context.Context, cfg *domains.Config, s *sim.Sim, dataDir string, speed float64, log hclog.Logger,
	progress func(simElapsed, wall time.Duration)) (run SystemRun, err error) {
	sys := NewSystem(cfg, s, dataDir, log)
	defer func() { err = errors.Join(err, sys.Close()) }()
	if err := sys.Open(ctx); err != nil {
		return run, err
	}
	start := time.Now()
	run.Stopped, err = sys.Run(ctx, speed, func(simElapsed time.Duration) { progress(simElapsed, time.Since(start)) })
	run.Wall = time.Since(start)
	if err != nil {
		return run, err
	}
	if err := sys.Close(); err != nil {
		return run, err
	}
	run.SystemStats = sys.Stats()
	sys.Cluster().Sim(func(s *sim.Sim) { run.Metrics = s.Metrics() })
	return run, nil
}

// WriteSummary writes what the run of cfg on the scenario named scenario
// did next to its baselines, the policies names on the same traffic: the
// policies run, the domains only recommended, a table of cost, SLO,
// breaches and churn, and, the first baseline being regiment-independent,
// the hierarchy's worth.
func (r SystemRun) WriteSummary(out io.Writer, cfg *domains.Config, scenario string, names []string, baselines []sim.Metrics) {
	m := r.Metrics
	if r.Stopped {
		fmt.Fprintf(out, "stopped after %s simulated (interrupted)\n\n", time.Duration(m.SimSeconds)*time.Second)
	}
	fmt.Fprintf(out, "cluster %s, scenario %s: %s simulated in %s (%.0fx real time)\n",
		cfg.Cluster.Name, scenario, time.Duration(m.SimSeconds)*time.Second, r.Wall.Round(time.Millisecond), m.SimSeconds/r.Wall.Seconds())
	fmt.Fprintf(out, "regiment: commander policy %s, soldier policy %s\n",
		cmp.Or(cfg.Commander.Policy, commander.ForecastPolicy), cmp.Or(cfg.Soldier.Policy, soldier.ProportionalPolicy))
	var recommend []string
	for di, d := range cfg.Domains {
		if cfg.ModeOf(di).Recommends() {
			recommend = append(recommend, d.Name)
		}
	}
	if len(recommend) > 0 {
		fmt.Fprintf(out, "recommend mode (nothing written; the cluster's HPAs scale them): %s; review with: regiment report\n",
			strings.Join(recommend, ", "))
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\tregiment\t")
	for i := range baselines {
		fmt.Fprintf(tw, "%s\t", names[i])
	}
	fmt.Fprintln(tw)
	row := func(name string, cell func(m sim.Metrics) string) {
		fmt.Fprintf(tw, "%s\t%s\t", name, cell(m))
		for _, b := range baselines {
			fmt.Fprintf(tw, "%s\t", cell(b))
		}
		fmt.Fprintln(tw)
	}
	row("cost (core-hours)", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.CostCoreHours) })
	row("cost", func(m sim.Metrics) string { return fmt.Sprintf("%.2f", m.Cost) })
	row("SLO compliance", func(m sim.Metrics) string { return fmt.Sprintf("%.4f", m.SLOCompliance) })
	row("breach app-minutes", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.BreachAppMinutes) })
	if slices.ContainsFunc(append([]sim.Metrics{m}, baselines...), func(m sim.Metrics) bool { return m.BreachAppMinutesAtMax > 0 }) {
		row("of which at max_replicas", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.BreachAppMinutesAtMax) })
	}
	row("bad-request ratio", func(m sim.Metrics) string { return fmt.Sprintf("%.5f", m.BadRequestRatio) })
	row("energy (kWh)", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.EnergyKWh) })
	row("scaling actions", func(m sim.Metrics) string { return fmt.Sprintf("%d", m.ScalingActions) })
	row("peak nodes", func(m sim.Metrics) string { return fmt.Sprintf("%d", m.PeakNodes) })
	row("node churn", func(m sim.Metrics) string { return fmt.Sprintf("%d", m.NodeChurn) })
	if cfg.Cluster.Provisioner != domains.ProvisionerTokenBucket { // the default bucket never fails a launch
		row("provisioner stalls", func(m sim.Metrics) string {
			if m.ProvisionerStalls == 0 {
				return "0"
			}
			return fmt.Sprintf("%d (%.1f min)", m.ProvisionerStalls, m.LongestStallMinutes)
		})
		row("node requests in 2 min", func(m sim.Metrics) string { return fmt.Sprintf("%d", m.MaxNodeRequests2m) })
	}
	row("pending pod-hours", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.PendingPodHours) })
	tw.Flush()
	if len(baselines) > 0 && !r.Stopped {
		in := baselines[0] // names[0], regiment-independent
		fmt.Fprintf(out, "\nthe hierarchy's worth, regiment x %s: cost %.3f, breaches %s, bad requests %s\n",
			names[0], ratio(m.CostCoreHours, in.CostCoreHours), ratioText(m.BreachAppMinutes, in.BreachAppMinutes), ratioText(m.BadRequests, in.BadRequests))
	}
}

// WriteStored writes where the run's episodes went and how to inspect them.
func (r SystemRun) WriteStored(out io.Writer) {
	fmt.Fprintf(out, "\n%d episodes, %d steps written to %s; %d replica writes; %d messages rejected\n",
		r.Episodes, r.Steps, r.DBPath, r.Writes, r.Rejected)
	fmt.Fprintf(out, "inspect: regiment episodes list --data %s\n", filepath.Dir(r.DBPath))
}

// ratio is a / b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// ratioText is a / b to two decimals, "n/a" when b is 0.
func ratioText(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}
