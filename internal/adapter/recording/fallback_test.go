package recording

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// steps is a hand-written Appender that keeps what it is given.
type steps struct{ got []store.Step }

func (s *steps) Append(st store.Step) error {
	s.got = append(s.got, st)
	return nil
}

// TestAutoFallbackReachesTheLedger records a switch to the baseline, a tick
// held on it and the hand-back into a real store, reopens it and reads the
// two switches back; the steps carry both decisions while the baseline holds.
func TestAutoFallbackReachesTheLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	apps := []soldier.NamedObservation{{App: "payment/checkout-0"}, {App: "payment/checkout-1"}}
	out := &steps{}
	var errs []error
	sr := &Soldier{Episode: "e", Out: out, Ledger: st.AppendLedger, Err: func(err error) { errs = append(errs, err) }}
	held := soldier.Record{At: t0, Domain: "payment", Fallback: true, AutoFallback: true, Apps: apps,
		Switch:        soldier.FallbackEvent{Reason: soldier.FallbackSLO, Detail: "policy-caused breaches 9 of 17 ticks >= 9"},
		PolicyTargets: []int32{2, 2}, BaselineTargets: []int32{12, 9}}
	sr.Record(held)
	held.At, held.Switch = t0.Add(10*time.Second), soldier.FallbackEvent{}
	sr.Record(held)
	sr.Record(soldier.Record{At: t0.Add(time.Hour), Domain: "payment", Apps: apps,
		Switch:        soldier.FallbackEvent{Reason: soldier.FallbackHandBack, Detail: "after 360 ticks on the baseline"},
		PolicyTargets: []int32{11, 9}, BaselineTargets: []int32{12, 9}})
	sr.Record(soldier.Record{At: t0.Add(time.Hour + 10*time.Second), Domain: "payment", Apps: apps})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got []store.LedgerEntry
	if err := st.Ledger(time.Time{}, time.Time{}, "payment", func(e store.LedgerEntry) error {
		if e.Kind == LedgerAutoFallback {
			got = append(got, e)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 ||
		!strings.HasPrefix(got[0].Detail, "switch to the baseline (slo): policy-caused breaches") || got[0].Values["active"] != 1 ||
		!strings.HasPrefix(got[1].Detail, "hand back to the policy: after 360") || got[1].Values["active"] != 0 || !got[1].At.Equal(t0.Add(time.Hour)) {
		t.Fatalf("auto-fallback ledger entries: %+v", got)
	}
	if len(out.got) != 4 {
		t.Fatalf("%d steps, want 4", len(out.got))
	}
	s := out.got[1]
	if s.Outcome["auto_fallback"] != 1 || s.Action["policy/payment/checkout-0"] != 2 || s.Action["baseline/payment/checkout-0"] != 12 {
		t.Errorf("held step: outcome %v action %v", s.Outcome["auto_fallback"], s.Action)
	}
	if s := out.got[3]; s.Outcome["auto_fallback"] != 0 || len(s.Action) != 2 {
		t.Errorf("step after the hand-back: outcome %v action %v; want no decisions of both", s.Outcome["auto_fallback"], s.Action)
	}
}
