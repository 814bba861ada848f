package daemon

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// overrideTaker is a Commander or a Soldier: it takes or refuses an override.
type overrideTaker interface {
	OnOverride(o wire.Override, now time.Time) (ok bool, reason string)
}

// storeTimeout bounds keeping an accepted pin in the override bucket.
const storeTimeout = 5 * time.Second

// AttachSoldierOverrides serves domain's overrides to s: replica pins and
// their cancels are offered to s and answered (wire.OverrideAck from
// "soldier"); share overrides are left to the Commander. An accepted pin is
// kept in the bus's override bucket and a cancel deletes it, so that a
// restarted Soldier first restores the unexpired pins stored for its domain
// (which this does after subscribing).
func AttachSoldierOverrides(ctx context.Context, conn *bus.Conn, s *soldier.Soldier, domain string, clock func() time.Time, log hclog.Logger) (*bus.Subscription, error) {
	return attachOverrides(ctx, conn, s, "soldier", domain, clock, log)
}

// AttachCommanderOverrides serves every domain's share overrides to c, as
// AttachSoldierOverrides does replica overrides to a Soldier.
func AttachCommanderOverrides(ctx context.Context, conn *bus.Conn, c *commander.Commander, clock func() time.Time, log hclog.Logger) (*bus.Subscription, error) {
	return attachOverrides(ctx, conn, c, "commander", "", clock, log)
}

func attachOverrides(ctx context.Context, conn *bus.Conn, t overrideTaker, role, domain string, clock func() time.Time, log hclog.Logger) (*bus.Subscription, error) {
	mine := func(o wire.Override) bool { return o.ForCommander() == (role == "commander") }
	sub, err := conn.ServeOverrides(domain, func(o wire.Override, err error) (wire.OverrideAck, bool) {
		if err != nil {
			log.Warn("override rejected", "error", err)
			return wire.OverrideAck{}, false
		}
		if !mine(o) {
			return wire.OverrideAck{}, false
		}
		now := clock()
		ok, reason := t.OnOverride(o, now)
		if ok {
			log.Info("override taken", "target", o.Target(), "by", o.By, "reason", reason)
			sctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			if err := conn.StoreOverride(sctx, o); err != nil {
				log.Warn("override not kept in the bus: a restart would forget it", "target", o.Target(), "error", err)
			}
			cancel()
		} else {
			log.Warn("override refused", "target", o.Target(), "by", o.By, "reason", reason)
		}
		return wire.OverrideAck{Version: wire.Version, Cluster: o.Cluster, Domain: o.Domain, App: o.App, From: role,
			Accepted: ok, At: now, Reason: reason}, true
	})
	if err != nil {
		return nil, err
	}
	stored, err := conn.Overrides(ctx, domain)
	if err != nil {
		log.Warn("cannot read every stored override", "error", err)
	}
	now := clock()
	for _, o := range stored {
		if !mine(o) || !o.Active(now) {
			continue
		}
		if ok, reason := t.OnOverride(o, now); ok {
			log.Info("override restored", "target", o.Target(), "by", o.By, "until", o.Until)
		} else {
			log.Warn("stored override not restored", "target", o.Target(), "reason", reason)
		}
	}
	return sub, nil
}
