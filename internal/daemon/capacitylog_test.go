package daemon

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/adapter/kube/pool"
)

// sizes plays a pool's sizes, one a tick, then holds the last.
type sizes struct {
	mu   sync.Mutex
	seen []pool.Size
}

func (s *sizes) Size() (pool.Size, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.seen[0]
	if len(s.seen) > 1 {
		s.seen = s.seen[1:]
	}
	return c, true
}

// A node that turns ready moves its cores from pending to ready and leaves
// the capacity as it was: the pool's line is logged for it all the same,
// and not again while nothing changes.
func TestPoolCapacityLineLogsANodeTurningReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &sizes{seen: []pool.Size{
			{Cores: 8, ReadyCores: 8, Nodes: 1},
			{Cores: 13, ReadyCores: 8, PendingCores: 8, ReservedCores: 3, Nodes: 1, PendingNodes: 1},
			{Cores: 13, ReadyCores: 16, ReservedCores: 3, Nodes: 2},
		}}
		var buf bytes.Buffer
		var mu sync.Mutex
		log := hclog.New(&hclog.LoggerOptions{Output: &lockedWriter{w: &buf, mu: &mu}, Level: hclog.Info})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { logCapacity(ctx, src, time.Second, log); close(done) }()
		time.Sleep(10 * time.Second) // ten ticks: three sizes, then the last held
		cancel()
		<-done
		mu.Lock()
		out := buf.String()
		mu.Unlock()
		for _, want := range []string{"cores=8 nodes=1 pending_nodes=0", "cores=13 nodes=1 pending_nodes=1", "cores=13 nodes=2 pending_nodes=0"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q logged:\n%s", want, out)
			}
		}
		if n := strings.Count(out, "pool capacity"); n != 3 {
			t.Errorf("%d lines logged, want 3 (one a change):\n%s", n, out)
		}
	})
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
