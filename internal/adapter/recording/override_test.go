package recording

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// TestOverrideEventsReachTheLedger writes every kind of override event
// through both recorders into a real store, reopens it and reads them back.
func TestOverrideEventsReachTheLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n, share := 20, 0.3
	pin := wire.Override{Version: wire.Version, Cluster: "c", Domain: "payment", App: "payment/checkout-0", Replicas: &n,
		IssuedAt: t0, Until: t0.Add(15 * time.Minute), By: "alice", Reason: "incident 123"}
	sharePin := wire.Override{Version: wire.Version, Cluster: "c", Domain: "payment", Share: &share,
		IssuedAt: t0, Until: t0.Add(30 * time.Minute), By: "bob"}
	var errs []error
	sr := &Soldier{Ledger: st.AppendLedger, Err: func(err error) { errs = append(errs, err) }}
	cr := &Commander{Ledger: st.AppendLedger, Err: func(err error) { errs = append(errs, err) }}
	sr.RecordOverride(soldier.OverrideEvent{At: t0, Kind: wire.OverrideAccepted, Override: pin, Replicas: 20, Reason: "pinned"})
	sr.RecordOverride(soldier.OverrideEvent{At: t0.Add(10 * time.Second), Kind: wire.OverrideApplied, Override: pin, Replicas: 20, Reason: "held"})
	sr.RecordOverride(soldier.OverrideEvent{At: t0.Add(16 * time.Minute), Kind: wire.OverrideExpired, Override: pin, Replicas: 20, Reason: "lapsed"})
	sr.RecordOverride(soldier.OverrideEvent{At: t0.Add(17 * time.Minute), Kind: wire.OverrideRejected, Replicas: -1, Reason: "override: malformed"})
	cr.RecordOverride(commander.OverrideEvent{At: t0.Add(time.Minute), Kind: wire.OverrideAccepted, Override: sharePin, Share: 0.3, Reason: "pinned"})
	cancel := wire.Override{Version: wire.Version, Cluster: "c", Domain: "payment", Cancel: true, IssuedAt: t0.Add(2 * time.Minute), By: "bob"}
	cr.RecordOverride(commander.OverrideEvent{At: t0.Add(2 * time.Minute), Kind: wire.OverrideCancelled, Override: cancel, Share: -1, Reason: "lifted"})
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
	if err := st.Ledger(time.Time{}, time.Time{}, "", func(e store.LedgerEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		detail string
		key    string
		value  float64
	}{
		{"accepted payment/checkout-0 by alice: pinned", "replicas", 20},
		{"applied payment/checkout-0 by alice: held", "until_unix", float64(t0.Add(15 * time.Minute).Unix())},
		{"accepted payment by bob: pinned", "share", 0.3},
		{"cancelled payment by bob: lifted", "", 0},
		{"expired payment/checkout-0 by alice: lapsed", "replicas", 20},
		{"rejected (undecodable) by ?: override: malformed", "", 0},
	}
	if len(got) != len(want) {
		t.Fatalf("ledger has %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		e := got[i]
		if e.Kind != LedgerOverride || e.Detail != w.detail || (w.key != "" && e.Values[w.key] != w.value) {
			t.Errorf("entry %d: %s %q %v; want override %q %s=%g", i, e.Kind, e.Detail, e.Values, w.detail, w.key, w.value)
		}
		if strings.HasPrefix(w.detail, "cancelled") && len(e.Values) != 0 {
			t.Errorf("a cancel carries values %v", e.Values)
		}
	}
}

// TestOperatorTextIsCleanedBeforeItIsStored sends an override whose by and
// reason carry a newline and terminal escapes, as a client other than
// "regiment override" can: the ledger keeps them as spaces, on one line.
func TestOperatorTextIsCleanedBeforeItIsStored(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "ledger.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 3
	pin := wire.Override{Version: wire.Version, Cluster: "c", Domain: "payment", App: "payment/checkout-0", Replicas: &n,
		IssuedAt: t0, Until: t0.Add(time.Minute), By: "mallory\n2026-01-01 accepted by root", Reason: "x\x1b[2J\x1b]0;owned\x07"}
	sr := &Soldier{Ledger: st.AppendLedger}
	sr.RecordOverride(soldier.OverrideEvent{At: t0, Kind: wire.OverrideAccepted, Override: pin, Replicas: 3,
		Reason: "pinned " + strings.Repeat("a", 2*wire.MaxReason) + "\r\n"})
	var got []store.LedgerEntry
	if err := st.Ledger(time.Time{}, time.Time{}, "", func(e store.LedgerEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d entries, want 1", len(got))
	}
	d := got[0].Detail
	for _, bad := range []string{"\n", "\r", "\x1b", "\x07"} {
		if strings.Contains(d, bad) {
			t.Fatalf("stored detail carries %q: %q", bad, d)
		}
	}
	if !strings.HasPrefix(d, "accepted payment/checkout-0 by mallory 2026-01-01 accepted by root: pinned aaa") {
		t.Fatalf("detail %q", d)
	}
	if len(d) > 2*wire.MaxName+wire.MaxReason+64 {
		t.Fatalf("detail of %d bytes: the reason was not bounded", len(d))
	}
}
