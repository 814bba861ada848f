package leader

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Config is a leader election on a coordination.k8s.io Lease.
type Config struct {
	Client    kubernetes.Interface
	Namespace string
	Name      string // the Lease; default "regiment-commander"
	// LeaseDuration is how long followers wait after the last renewal
	// before taking over; RenewDeadline is how long the leader retries
	// renewing before it stops leading (< LeaseDuration); RetryPeriod is the
	// wait between attempts. Defaults 15s, 10s and 2s.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// HandOver, when the lease is released at ctx's end, clears its holder
	// but keeps its duration and renews it: a successor takes it at once,
	// while a Reverter still counts it valid for its duration (a Soldier's
	// rolling restart reverts nothing). Off, the lease is released to lapse
	// in a second (the Commander's).
	HandOver bool
}

// CommanderLease is the default election lease, the Commander's.
const CommanderLease = "regiment-commander"

// Elect campaigns for the lease as identity until ctx ends. Each time
// it wins it calls onStartedLeading with a context that ends when leadership
// is lost or ctx ends; after that call has returned it calls onStopped (if
// not nil), and campaigns again unless ctx ended.
//
// Two candidates never lead at once, provided onStartedLeading returns soon
// after its context ends: the leader stops leading RenewDeadline after its
// last successful renewal, before LeaseDuration lets anyone else take over;
// and on ctx's end the lease is released only after onStartedLeading has
// returned, so a successor starts at once but never while this one still
// acts.
func Elect(ctx context.Context, cfg Config, identity string, onStartedLeading func(ctx context.Context), onStopped func()) error {
	if cfg.Name == "" {
		cfg.Name = CommanderLease
	}
	setDefault(&cfg.LeaseDuration, 15*time.Second)
	setDefault(&cfg.RenewDeadline, 10*time.Second)
	setDefault(&cfg.RetryPeriod, 2*time.Second)
	if identity == "" {
		return errors.New("leader: election: empty identity")
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name},
		Client:     cfg.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	for ctx.Err() == nil {
		led := make(chan struct{})
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod,
			Name: cfg.Namespace + "/" + cfg.Name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) {
					defer close(led)
					onStartedLeading(lctx)
				},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			return fmt.Errorf("leader: election: %w", err)
		}
		le.Run(ctx) // returns once leadership is lost or ctx ended
		if !le.IsLeader() {
			continue // never won: ctx ended while campaigning
		}
		<-led // onStartedLeading was started; wait until it returned
		if onStopped != nil {
			onStopped()
		}
		if ctx.Err() != nil {
			release(lock, identity, cfg.HandOver)
		}
	}
	return nil
}

// release gives the lease up, if identity still holds it, so a follower takes
// over within its RetryPeriod instead of waiting for the lease to expire;
// handOver keeps its duration (Config.HandOver), else it lapses in
// a second.
func release(lock *resourcelock.LeaseLock, identity string, handOver bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec, _, err := lock.Get(ctx)
	if err != nil || rec.HolderIdentity != identity {
		return
	}
	now := metav1.NewTime(time.Now())
	secs := 1
	if handOver {
		secs = rec.LeaseDurationSeconds
	}
	lock.Update(ctx, resourcelock.LeaderElectionRecord{
		LeaderTransitions: rec.LeaderTransitions, LeaseDurationSeconds: secs, RenewTime: now, AcquireTime: now,
	})
}

func setDefault(p *time.Duration, v time.Duration) {
	if *p <= 0 {
		*p = v
	}
}
