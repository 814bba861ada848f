package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regimentd/regiment/bus"
	"github.com/regimentd/regiment/bus/wire"
	"github.com/regimentd/regiment/commander"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/kube/testenv"
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

// directiveLog records every directive seen on the bus: its term and when it
// was issued.
type directiveLog struct {
	mu   sync.Mutex
	seen []wire.Directive
}

func (l *directiveLog) add(d wire.Directive, err error) {
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, d)
}

// terms returns, per term, the first and last issue times.
func (l *directiveLog) terms() map[uint64][2]time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[uint64][2]time.Time{}
	for _, d := range l.seen {
		r, ok := out[d.Term]
		if !ok {
			r = [2]time.Time{d.IssuedAt, d.IssuedAt}
		}
		if d.IssuedAt.Before(r[0]) {
			r[0] = d.IssuedAt
		}
		if d.IssuedAt.After(r[1]) {
			r[1] = d.IssuedAt
		}
		out[d.Term] = r
	}
	return out
}

// candidate is one Commander process: it campaigns with its own kube client
// (which the test can cut off) and publishes over its own NATS connection
// only while it leads.
type candidate struct {
	name    string
	term    uint64
	cut     atomic.Bool
	leading atomic.Bool
	cancel  context.CancelFunc
	done    chan struct{}
}

func startCandidate(t *testing.T, env *testenv.Env, ns, url string, cfg *domains.Config, name string, term uint64) *candidate {
	t.Helper()
	c := &candidate{name: name, term: term, done: make(chan struct{})}
	rc := rest.CopyConfig(env.Config)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if c.cut.Load() {
				return nil, errors.New("partitioned")
			}
			return rt.RoundTrip(r)
		})
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
	go func() {
		defer close(c.done)
		defer conn.Close()
		err := LeaderElect(ctx, ElectionConfig{Client: client, Namespace: ns,
			LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond},
			name,
			func(lctx context.Context) {
				c.leading.Store(true)
				defer c.leading.Store(false)
				cmd := commander.New(cfg, &commander.Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", conn, nil, term, 0)
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

func (c *candidate) stop() {
	c.cancel()
	<-c.done
}

func TestLeaderElectionOneCommanderPublishes(t *testing.T) {
	env := testenv.Require(t)
	ns := namespace(t, env.Client)
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

	a := startCandidate(t, env, ns, srv.ClientURL(), cfg, "commander-a", 1)
	b := startCandidate(t, env, ns, srv.ClientURL(), cfg, "commander-b", 2)
	byTerm := map[uint64]*candidate{1: a, 2: b}

	// One of them leads and publishes; the other does not.
	var leader, follower *candidate
	eventually(t, 20*time.Second, func() (bool, string) {
		terms := log.terms()
		return len(terms) > 0, "no directive yet"
	})
	for term := range log.terms() {
		leader = byTerm[term]
	}
	follower = map[*candidate]*candidate{a: b, b: a}[leader]
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if terms := log.terms(); len(terms) != 1 || follower.leading.Load() {
			t.Fatalf("both publish: terms %v, follower leading %v", terms, follower.leading.Load())
		}
	}

	// The leader is stopped (it releases the lease): the follower takes
	// over within 15 s, and never publishes while the old leader still does.
	stopped := time.Now()
	leader.stop()
	eventually(t, 15*time.Second, func() (bool, string) {
		_, ok := log.terms()[follower.term]
		return ok, "the follower has not published"
	})
	took := time.Since(stopped)
	terms := log.terms()
	if !terms[leader.term][1].Before(terms[follower.term][0]) {
		t.Errorf("overlap: %s published until %s, %s from %s", leader.name, terms[leader.term][1], follower.name, terms[follower.term][0])
	}
	t.Logf("%s took over %s after %s stopped", follower.name, took.Round(time.Millisecond), leader.name)

	// A leader cut off from the apiserver (it can neither renew nor release)
	// stops publishing after its renew deadline; a new candidate takes over
	// after the lease expires, within 15 s, without overlap.
	c := startCandidate(t, env, ns, srv.ClientURL(), cfg, "commander-c", 3)
	cutAt := time.Now()
	follower.cut.Store(true)
	eventually(t, 15*time.Second, func() (bool, string) {
		_, ok := log.terms()[c.term]
		return ok, "the new candidate has not published"
	})
	terms = log.terms()
	if !terms[follower.term][1].Before(terms[c.term][0]) {
		t.Errorf("overlap after a partition: %s published until %s, %s from %s", follower.name, terms[follower.term][1], c.name, terms[c.term][0])
	}
	t.Logf("%s took over %s after %s was cut off", c.name, time.Since(cutAt).Round(time.Millisecond), follower.name)
	keys := make([]uint64, 0, len(terms))
	for k := range terms {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	if fmt.Sprint(keys) != fmt.Sprint([]uint64{1, 2, 3}) {
		t.Errorf("terms seen %v, want 1, 2 and 3", keys)
	}
}
