// Command regiment is Regiment's operator CLI: run the whole system on a
// simulated cluster, validate configs, simulate, evaluate, train, inspect
// episode logs, and give a cluster back (regiment kube restore).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/regimentd/regiment/internal/cli"
)

// command is one subcommand: it parses args and returns the exit code.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands is the subcommand table, in the order --help lists them.
var commands = []struct {
	name string
	command
}{
	// Each subcommand lives in its own file: validate.go, sim.go, episodes.go, ...
	{"run", command{"run Commander, Soldiers and embedded NATS on a simulated cluster", runRun}},
	{"validate", command{"check a config (and a scenario) and report every problem", runValidate}},
	{"sim", command{"simulate a scenario with one policy and print its metrics", runSim}},
	{"eval", command{"compare policies on scenarios over seeds; write report.json, report.md and plots", runEval}},
	{"episodes", command{"inspect recorded episodes: list, show, why, export, stats, prune", runEpisodes}},
	{"override", command{"pin a domain's share or an app's replicas for a bounded time, above any policy", runOverride}},
	{"nats-config", command{"print a nats-server config with per-role users and permissions", runNATSConfig}},
	{"forecast", command{"score the Commander's demand forecaster on a recorded trace (P80 calibration, MAPE)", runForecast}},
	{"calibrate", command{"fit the simulator to recorded episodes and report how well it replays them", runCalibrate}},
	{"report", command{"compare what recommend-mode Soldiers would have done with what the cluster did", runReport}},
	{"train", command{"train a learned policy (soldier, commander or joint stage) with PPO on the simulator", runTrain}},
	{"kube", command{"give back what Regiment took on a cluster: restore the objects' original specs", runKube}},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		fmt.Fprint(stdout, cli.Version("regiment"))
		return 0
	}
	names := make([]string, len(commands))
	for i, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
		names[i] = c.name
	}
	return cli.UnknownSubcommand(stderr, "regiment", args[0], names)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Regiment: hierarchical multi-agent autoscaling for shared Kubernetes clusters.")
	fmt.Fprintln(w, "\nUsage: regiment <command> [flags]   (regiment <command> --help for its flags; regiment --version)")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
}
