package bus

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/regimentd/regiment/wire"
)

// startCluster starts n nats-servers with JetStream, each in its own
// t.TempDir(), clustered over routes on loopback, and waits until JetStream
// has a meta leader that every server follows. They are shut down when the
// test ends.
func startCluster(t *testing.T, n int) []*server.Server {
	t.Helper()
	ports := freePorts(t, n)
	routes := make([]string, n)
	for i, p := range ports {
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", p)
	}
	servers := make([]*server.Server, n)
	for i := range servers {
		s, err := server.NewServer(&server.Options{
			ServerName: fmt.Sprintf("n%d", i),
			Host:       "127.0.0.1",
			Port:       server.RANDOM_PORT,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoSigs:     true,
			Cluster:    server.ClusterOpts{Name: "regiment-test", Host: "127.0.0.1", Port: ports[i]},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
		})
		if err != nil {
			t.Fatal(err)
		}
		s.SetLogger(serverLogger{testLog(t, s.Name(), hclog.Error)}, false, false)
		s.Start()
		t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatalf("server %s not ready", s.Name())
		}
		servers[i] = s
	}
	eventually(t, 15*time.Second, "a JetStream meta leader", func() bool {
		leaders := 0
		for _, s := range servers {
			if !s.JetStreamIsCurrent() {
				return false
			}
			if s.JetStreamIsLeader() {
				leaders++
			}
		}
		return leaders == 1
	})
	return servers
}

// freePorts returns n ports free on loopback a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// withReplicas sets ConnectOptions.Replicas and the Regiment cluster.
func withReplicas(cluster string, replicas int) func(*ConnectOptions) {
	return func(o *ConnectOptions) { o.Cluster, o.Replicas = cluster, replicas }
}

// bucketStream is the stream info of key-value bucket name, read through c.
func bucketStream(t *testing.T, c *Conn, name string) *jetstream.StreamInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.js.Stream(ctx, "KV_"+name)
	if err != nil {
		t.Fatalf("stream of bucket %s: %v", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream of bucket %s: %v", name, err)
	}
	return info
}

// checkReplicated waits until cluster's directive and override buckets are
// configured with 3 replicas and each has a leader and 2 peers. It returns
// the names of the two leaders.
func checkReplicated(t *testing.T, c *Conn, cluster string) []string {
	t.Helper()
	var leaders []string
	for _, bucket := range []func(string) (string, error){DirectiveBucket, OverrideBucket} {
		name, err := bucket(cluster)
		if err != nil {
			t.Fatal(err)
		}
		var info *jetstream.StreamInfo
		eventually(t, 10*time.Second, name+" on 3 servers", func() bool {
			info = bucketStream(t, c, name)
			return info.Cluster != nil && info.Cluster.Leader != "" && len(info.Cluster.Replicas) == 2
		})
		if info.Config.Replicas != 3 {
			t.Errorf("%s: %d replicas configured, want 3", name, info.Config.Replicas)
		}
		leaders = append(leaders, info.Cluster.Leader)
	}
	return leaders
}

// lastDirectiveIs waits until c reads want as domain's last directive.
func lastDirectiveIs(t *testing.T, c *Conn, want wire.Directive, through string) {
	t.Helper()
	var got wire.Directive
	var ok bool
	var err error
	eventually(t, 10*time.Second, fmt.Sprintf("directive seq %d read through %s", want.Seq, through), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		got, ok, err = c.LastDirective(ctx, want.Domain)
		return err == nil && ok && got.Seq == want.Seq
	})
}

// ensureBuckets creates or updates c's buckets, retrying while a cluster
// just formed has yet to see every peer online ("no suitable peers for
// placement").
func ensureBuckets(t *testing.T, c *Conn) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := c.EnsureBuckets(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("buckets not created in 15 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// publishDirective publishes d through c, retrying while c reconnects or
// the stream elects a leader.
func publishDirective(t *testing.T, c *Conn, d wire.Directive) {
	t.Helper()
	var err error
	eventually(t, 15*time.Second, fmt.Sprintf("directive seq %d stored", d.Seq), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err = c.PublishDirective(ctx, d)
		return err == nil
	})
}

// TestBucketsReplicatedOnANATSCluster: on a real cluster of three servers, a
// Commander with Replicas 3 creates both buckets on all three, and raises
// buckets made with one replica to three; a directive written through one
// server is read through another, and still read and written after a server
// is lost, the directive stream's leader.
func TestBucketsReplicatedOnANATSCluster(t *testing.T) {
	start := time.Now()
	servers := startCluster(t, 3)
	t.Logf("cluster of 3 with a meta leader after %s", time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Buckets of one replica, as a Commander before nats { replicas = 3 }
	// made them, are raised to three by a stream update.
	const stage = "stage"
	old := connect(t, servers[0].ClientURL(), "commander-old", withReplicas(stage, 0))
	ensureBuckets(t, old)
	name, _ := DirectiveBucket(stage)
	if got := bucketStream(t, old, name).Config.Replicas; got != 1 {
		t.Fatalf("%s: %d replicas by default, want 1", name, got)
	}
	before := directive("payment", 1, 1)
	before.Cluster = stage
	if err := old.PublishDirective(ctx, before); err != nil {
		t.Fatal(err)
	}
	old.Close()
	raised := connect(t, servers[1].ClientURL(), "commander-raised", withReplicas(stage, 3))
	ensureBuckets(t, raised)
	checkReplicated(t, raised, stage)
	lastDirectiveIs(t, connect(t, servers[2].ClientURL(), "soldier-stage", withReplicas(stage, 0)), before, servers[2].Name())

	// Buckets created with three replicas.
	commander := connect(t, servers[0].ClientURL(), "commander", withReplicas(testCluster, 3))
	ensureBuckets(t, commander)
	leaders := checkReplicated(t, commander, testCluster)
	commander.Close()

	// The server to lose leads the directive bucket's stream: the other two
	// keep quorum, and the leader hands over as it shuts down.
	victim := slices.IndexFunc(servers, func(s *server.Server) bool { return s.Name() == leaders[0] })
	var survivors []*server.Server
	for i, s := range servers {
		if i != victim {
			survivors = append(survivors, s)
		}
	}
	writer := connect(t, survivors[0].ClientURL(), "commander-again", withReplicas(testCluster, 3))
	if err := writer.EnsureBuckets(ctx); err != nil {
		t.Fatalf("ensure again through another server: %v", err)
	}
	reader := connect(t, survivors[1].ClientURL(), "soldier")
	d := directive("payment", 1, 1)
	publishDirective(t, writer, d)
	lastDirectiveIs(t, reader, d, survivors[1].Name())

	servers[victim].Shutdown()
	servers[victim].WaitForShutdown()
	lost := time.Now()
	d.Seq = 2
	publishDirective(t, writer, d)
	lastDirectiveIs(t, reader, d, survivors[1].Name())
	t.Logf("lost %s (leaders %v): directive written and read %s later", servers[victim].Name(), leaders, time.Since(lost).Round(time.Millisecond))
	t.Logf("total %s", time.Since(start).Round(time.Millisecond))
}
