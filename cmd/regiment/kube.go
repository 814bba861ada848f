package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/core/domains"
)

// kubeUsage is what `regiment kube --help` prints before restore's flags.
const kubeUsage = `Usage: regiment kube restore (--domain D | --all) [flags]

Acts on a Kubernetes cluster with a kubeconfig.

  restore   Gives back what Regiment took: every HPA (hpa-bounds actuation),
            Deployment or StatefulSet (replicas actuation) a Soldier of
            --domain D (or of any domain, --all) marked with the label
            regiment.io/managed-by gets the spec it had before Regiment's
            first write (the annotation regiment.io/original: HPA min and
            max replicas, or workload replicas), and loses Regiment's labels
            and annotations. An HPA an older Regiment bounded, without an
            original, goes to its safe bounds (the app's configured min and
            max replicas). Restoring twice changes nothing the second time.
            A Soldier still running in active mode takes its apps back on
            its next write: stop it first (--stop-soldiers, the chart's
            uninstall hook does), or set its mode to "off" (it then restores
            its apps itself).

Prints what it changed. Exits 0 when everything was restored, 1 on an
error (it goes on past each and reports them all), 2 on a usage error.

Examples:
  regiment kube restore --domain payment
  regiment kube restore --all --namespaces shop,search --kubeconfig ~/.kube/prod
  regiment kube restore --all --namespaces shop --kubeconfig in-cluster --stop-soldiers regiment

Flags:
`

// kubeFlags are the flags of regiment kube restore.
type kubeFlags struct {
	domain, namespaces, kubeconfig, stopSoldiers string
	all                                          bool
	timeout                                      time.Duration
}

func runKube(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f kubeFlags
	fs := flag.NewFlagSet("kube", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.domain, "domain", "", "restore the objects of this `domain`'s Soldier")
	fs.BoolVar(&f.all, "all", false, "restore the objects of every domain's Soldier")
	fs.StringVar(&f.namespaces, "namespaces", "", "comma-separated `namespaces` to search; default: all (needs cluster-wide list)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", kube.DefaultKubeconfig(), "kubeconfig `file`, or \"in-cluster\" for the pod's service account")
	fs.StringVar(&f.stopSoldiers, "stop-soldiers", "", "first scale the chart's Soldier Deployments in this `namespace` to 0 and wait until their pods are gone")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "give up after this long")
	usage := subcommandUsage(fs, kubeUsage)
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch sub := args[0]; sub {
	case "-h", "--help", "help":
		usage(stdout)
		return 0
	case "restore":
	default:
		return cli.UnknownSubcommand(stderr, "regiment kube", sub, []string{"restore"})
	}
	if err := fs.Parse(args[1:]); err != nil {
		if err == flag.ErrHelp {
			usage(stdout)
			return 0
		}
		return kubeUsageError(stderr, "%v", cli.FlagError(fs, err))
	}
	switch {
	case fs.NArg() > 0:
		return kubeUsageError(stderr, "unexpected argument %q", fs.Arg(0))
	case f.all == (f.domain != ""):
		return kubeUsageError(stderr, "give exactly one of --domain D and --all")
	case f.kubeconfig == "":
		return kubeUsageError(stderr, "--kubeconfig is required: no $KUBECONFIG and no ~/.kube/config")
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	return restore(ctx, f, stdout, stderr)
}

// restore runs regiment kube restore with valid flags f.
func restore(ctx context.Context, f kubeFlags, stdout, stderr io.Writer) int {
	fail := cli.Failer("regiment kube restore", stderr)
	var cfg domains.Config
	cfg.Defaults()
	client, err := kube.Client(f.kubeconfig, cfg.Kubernetes)
	if err != nil {
		return fail(err)
	}
	nss := cli.SplitList(f.namespaces)
	if f.domain != "" {
		marked, err := kube.MarkedDomains(ctx, client, nss)
		if err != nil {
			return fail(err)
		}
		if !slices.Contains(marked, f.domain) {
			if _, close := cli.Suggest(f.domain, marked); close {
				return kubeUsageError(stderr, "--domain: no object is marked for %v", cli.UnknownName("domain", f.domain, "the marked objects", marked))
			}
			fmt.Fprintf(stderr, "regiment kube restore: no object is marked for domain %q (marked: %s)\n", f.domain, orNone(marked))
		}
	}
	if f.stopSoldiers != "" {
		n, err := kube.StopSoldiers(ctx, client, f.stopSoldiers, kube.SoldierSelector, time.Second)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "stopped %d soldiers in %s\n", n, f.stopSoldiers)
	}
	done, err := kube.NewRestorer(client, nss).Restore(ctx, f.domain)
	kube.WriteRestored(stdout, done)
	if err != nil {
		return fail(err)
	}
	return 0
}

// orNone is names joined by ", ", or "none".
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func kubeUsageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "regiment kube: %s\nRun 'regiment kube --help' for usage and examples.\n", fmt.Sprintf(format, args...))
	return 2
}
