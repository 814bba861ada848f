package kube

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regimentd/regiment/internal/adapter/kube/leader"
)

// Leadership is one term of a Soldier holding its domain's lease.
type Leadership struct {
	// Term counts this adapter's leaderships, from 1.
	Term int
	// Others says another Soldier held the lease since this adapter's last
	// term (Term > 1): the cluster holds its targets, not this one's.
	Others bool
}

// SoldierElection is the leader election on a Soldier lease lasting
// duration: the leader renews every eighth of it and stops leading after
// half of it without a renewal, well before a standby may take over; on
// release the lease is handed over (leader.Config.HandOver). Standbys
// retry every eighth.
func SoldierElection(l *Lease) leader.Config {
	d := max(l.duration, time.Second)
	return leader.Config{Client: l.client, Namespace: l.namespace, Name: l.name,
		LeaseDuration: d, RenewDeadline: d / 2, RetryPeriod: max(d/8, 100*time.Millisecond), HandOver: true}
}

// Lead campaigns for the Soldier lease (Lease: its name, holder identity
// and duration) until ctx ends, so that of the Soldiers of one domain only
// one acts: each time this one wins it calls lead with a context that ends
// when it loses the lease (nil lead: it only holds the lease). The lease's
// renewals are also the heartbeat a Reverter reads: it lapses only when no
// Soldier of the domain holds it.
//
// When this adapter leads again and no other Soldier led in between, the
// Actuator first reasserts its targets (a Reverter may have reverted them
// while the lease lapsed), unless Hold is on. lead must return soon after
// its context ends. Failures are logged to log.
func (a *Adapter) Lead(ctx context.Context, log hclog.Logger, lead func(context.Context, Leadership)) error {
	l := a.Lease
	log = log.With("lease", l.Ref(), "identity", l.identity)
	term, transitions := 0, int32(-1)
	log.Info("campaigning for the soldier lease")
	return leader.Elect(ctx, SoldierElection(l), l.identity, func(lctx context.Context) {
		term++
		now := a.transitions(lctx)
		lt := Leadership{Term: term, Others: term > 1 && (now < 0 || transitions < 0 || now != transitions)}
		transitions = now
		log.Info("leading: this soldier acts", "term", term, "others_led", lt.Others)
		if term > 1 { // a Reverter or another Soldier may have restored the originals meanwhile
			a.Actuator.ForgetMarks()
		}
		switch {
		case term == 1 || lt.Others:
		case a.hold.Load():
			log.Warn("soldier lease regained: writing nothing in this mode")
		default:
			log.Warn("soldier lease regained: reasserting targets")
			if err := a.Actuator.Reassert(lctx); err != nil {
				log.Error("reassert targets failed", "error", err)
			}
		}
		if lead == nil {
			<-lctx.Done()
			return
		}
		lead(lctx, lt)
	}, func() { log.Info("stopped leading: another soldier may act") })
}

// transitions is the lease's count of holder changes, -1 if unknown.
func (a *Adapter) transitions(ctx context.Context) int32 {
	l := a.Lease
	le, err := l.client.CoordinationV1().Leases(l.namespace).Get(ctx, l.name, metav1.GetOptions{})
	if err != nil || le.Spec.LeaseTransitions == nil {
		return -1
	}
	return *le.Spec.LeaseTransitions
}

// Run runs the informers and the Events and holds the Soldier lease (Lead, doing nothing
// while it leads) until ctx ends.
func (a *Adapter) Run(ctx context.Context, log hclog.Logger) error {
	var wg sync.WaitGroup
	wg.Go(func() { a.Observer.Run(ctx) })
	wg.Go(func() { a.Events.Run(ctx) })
	wg.Go(func() { a.logKEDA(ctx, log) })
	err := a.Lead(ctx, log, nil)
	wg.Wait()
	return err
}

// logKEDA says, once the Observer's informers started, when KEDA's
// ScaledObjects are not watched (no CRD, or no permission to list them).
func (a *Adapter) logKEDA(ctx context.Context, log hclog.Logger) {
	select {
	case <-a.Observer.ready: // keda.err is set before
	case <-ctx.Done():
		return
	}
	if err := a.Observer.keda.err; err != nil {
		log.Info("keda scaledobjects not watched", "reason", err)
	}
}
