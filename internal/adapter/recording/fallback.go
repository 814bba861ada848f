package recording

import (
	"fmt"

	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// LedgerAutoFallback is the ledger kind of the automatic fallback's switches:
// to the baseline (reason "slo" or "cost") and the hand-back to the policy.
const LedgerAutoFallback = "auto-fallback"

// Action keys of a Soldier step that carries both decisions (recommend mode, and
// while the automatic fallback holds the domain): each app's replicas as the
// policy and as the baseline decided them, "policy/<app>" and
// "baseline/<app>".
const (
	ActionPolicy   = "policy"
	ActionBaseline = "baseline"
)

// autoFallback adds r's automatic fallback state and both decisions to step,
// and writes a switch, if r has one, to the ledger.
func (s *Soldier) autoFallback(r *soldier.Record, step *store.Step) {
	step.Outcome["auto_fallback"] = b2f(r.AutoFallback)
	if len(r.PolicyTargets) == len(r.Apps) && len(r.BaselineTargets) == len(r.Apps) {
		for i, a := range r.Apps {
			step.Action[AppKey(ActionPolicy, a.App)] = float64(r.PolicyTargets[i])
			step.Action[AppKey(ActionBaseline, a.App)] = float64(r.BaselineTargets[i])
		}
	}
	if s.Ledger == nil || r.Switch.Reason == "" {
		return
	}
	detail := fmt.Sprintf("switch to the baseline (%s): %s", r.Switch.Reason, r.Switch.Detail)
	if r.Switch.Reason == soldier.FallbackHandBack {
		detail = "hand back to the policy: " + r.Switch.Detail
	}
	e := store.LedgerEntry{At: r.At, Domain: r.Domain, Kind: LedgerAutoFallback, Detail: detail,
		Values: map[string]float64{"active": b2f(r.AutoFallback)}}
	if err := s.Ledger(e); err != nil && s.Err != nil {
		s.Err(fmt.Errorf("record %s automatic fallback %s: %w", r.Domain, r.Switch.Reason, err))
	}
}
