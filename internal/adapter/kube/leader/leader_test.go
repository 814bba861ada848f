package leader

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/bus/bustest"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

// electionConfig is a small cluster whose Commander ticks every 200ms.
const electionConfig = `cluster "le" {
  capacity_cores = 100
}
commander {
  tick = "200ms"
}
domain "pay" {
  floor = 0.2
  slo {
    latency_p99 = "100ms"
  }
  apps "web" {
    cpu_per_replica = 0.5
    service_time    = "10ms"
  }
}
`

// directiveLog records every directive seen on the bus, and offers each to a
// Soldier's intake, which rejects stale or replayed ones.
type directiveLog struct {
	mu       sync.Mutex
	seen     []wire.Directive
	intake   wire.Intake
	rejected []string
}

func (l *directiveLog) add(d wire.Directive, err error) {
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, d)
	if ok, reason := l.intake.Accept(d, time.Now()); !ok {
		l.rejected = append(l.rejected, fmt.Sprintf("%s term %d seq %d: %s", d.Policy, d.Term, d.Seq, reason))
	}
}

// publishers returns, per Commander (the directive's policy field carries
// its name), the first and last issue times.
func (l *directiveLog) publishers() map[string][2]time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][2]time.Time{}
	for _, d := range l.seen {
		r, ok := out[d.Policy]
		if !ok {
			r = [2]time.Time{d.IssuedAt, d.IssuedAt}
		}
		if d.IssuedAt.Before(r[0]) {
			r[0] = d.IssuedAt
		}
		if d.IssuedAt.After(r[1]) {
			r[1] = d.IssuedAt
		}
		out[d.Policy] = r
	}
	return out
}

// lastTerm is the largest term seen.
func (l *directiveLog) lastTerm() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := uint64(0)
	for _, d := range l.seen {
		t = max(t, d.Term)
	}
	return t
}

// candidate is one Commander process: it campaigns with its own kube client
// (which the test can cut off) and publishes over its own NATS connection
// only while it leads, each leadership in a new term above every term seen
// (as cmd/commander does with the directives bucket).
type candidate struct {
	name    string
	cut     atomic.Bool
	leading atomic.Bool
	cancel  context.CancelFunc
	done    chan struct{}
}

func startCandidate(t *testing.T, env *testenv.Env, ns, url string, cfg *domains.Config, name string, log *directiveLog) *candidate {
	t.Helper()
	c := &candidate{name: name, done: make(chan struct{})}
	rc := rest.CopyConfig(env.Config)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return cutter{c, rt}
	})
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := bus.Connect(context.Background(), bus.ConnectOptions{URL: url, Cluster: cfg.Cluster.Name, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	// Built before it leads, as a standby Commander is (it keeps receiving
	// reports); its directives name it in their policy field.
	cmd := commander.New(cfg, &commander.Forecast{ReserveMin: cfg.Commander.ReserveMin}, name, conn, nil, 0, 0)
	if _, err := conn.SubscribeReports(func(r wire.DomainReport, err error) {
		if err == nil {
			cmd.OnReport(r)
		}
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.done)
		defer conn.Close()
		err := Elect(ctx, Config{Client: client, Namespace: ns,
			LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond},
			name,
			func(lctx context.Context) {
				c.leading.Store(true)
				defer c.leading.Store(false)
				cmd.BeginTerm(max(uint64(time.Now().UnixNano()), log.lastTerm()+1))
				cmd.Run(lctx, time.Now, nil)
			}, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-c.done
	})
	return c
}

// cutter fails every request of its candidate while the test cuts it off.
type cutter struct {
	c  *candidate
	rt http.RoundTripper
}

func (p cutter) RoundTrip(r *http.Request) (*http.Response, error) {
	if p.c.cut.Load() {
		return nil, errors.New("partitioned")
	}
	return p.rt.RoundTrip(r)
}

func (c *candidate) stop() {
	c.cancel()
	<-c.done
}

func TestLeaderElectionOneCommanderPublishes(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	cfg, err := config.Parse([]byte(electionConfig), "le.hcl")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	watch, err := bus.Connect(context.Background(), bus.ConnectOptions{URL: srv.ClientURL(), Cluster: "le", Name: "watch"})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	var log directiveLog
	if _, err := watch.SubscribeDirectives("pay", log.add); err != nil {
		t.Fatal(err)
	}
	bustest.ReportAsSoldier(t, watch, "le", "pay")

	a := startCandidate(t, env, ns, srv.ClientURL(), cfg, "commander-a", &log)
	b := startCandidate(t, env, ns, srv.ClientURL(), cfg, "commander-b", &log)

	// One of them leads and publishes; the other does not.
	var leader, follower *candidate
	testenv.Eventually(t, 20*time.Second, func() (bool, string) {
		return len(log.publishers()) > 0, "no directive yet"
	})
	for name := range log.publishers() {
		leader, follower = map[string]*candidate{"commander-a": a, "commander-b": b}[name], map[string]*candidate{"commander-a": b, "commander-b": a}[name]
	}
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if pubs := log.publishers(); len(pubs) != 1 || follower.leading.Load() {
			t.Fatalf("both publish: %v, follower leading %v", pubs, follower.leading.Load())
		}
	}

	// The leader is stopped (it releases the lease): the follower takes
	// over within 15 s, and never publishes while the old leader still does.
	stopped := time.Now()
	leader.stop()
	testenv.Eventually(t, 15*time.Second, func() (bool, string) {
		_, ok := log.publishers()[follower.name]
		return ok, "the follower has not published"
	})
	took := time.Since(stopped)
	pubs := log.publishers()
	if !pubs[leader.name][1].Before(pubs[follower.name][0]) {
		t.Errorf("overlap: %s published until %s, %s from %s", leader.name, pubs[leader.name][1], follower.name, pubs[follower.name][0])
	}
	t.Logf("%s took over %s after %s stopped", follower.name, took.Round(time.Millisecond), leader.name)

	// A leader cut off from the apiserver (it can neither renew nor release)
	// stops publishing after its renew deadline; a new candidate takes over
	// after the lease expires, within 15 s, without overlap.
	c := startCandidate(t, env, ns, srv.ClientURL(), cfg, "commander-c", &log)
	cutAt := time.Now()
	follower.cut.Store(true)
	testenv.Eventually(t, 15*time.Second, func() (bool, string) {
		_, ok := log.publishers()[c.name]
		return ok, "the new candidate has not published"
	})
	pubs = log.publishers()
	if !pubs[follower.name][1].Before(pubs[c.name][0]) {
		t.Errorf("overlap after a partition: %s published until %s, %s from %s", follower.name, pubs[follower.name][1], c.name, pubs[c.name][0])
	}
	t.Logf("%s took over %s after %s was cut off", c.name, time.Since(cutAt).Round(time.Millisecond), follower.name)

	// A Soldier accepted every directive: each new leader's term is above
	// the last one's.
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.rejected) > 0 {
		t.Errorf("a soldier rejected %d directives: %v", len(log.rejected), log.rejected[:min(5, len(log.rejected))])
	}
}
