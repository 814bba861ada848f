package recording

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// TestSoldierRecordsPerAppTelemetry pins the per-app outcome keys that
// calibration reads: every app's rps, cpu_util, ready and target; starting
// and pending only when not 0; blind only when set.
func TestSoldierRecordsPerAppTelemetry(t *testing.T) {
	out := &steps{}
	rec := &Soldier{Episode: "e", Out: out}
	rec.Record(soldier.Record{Seq: 1, Domain: "d", Apps: []soldier.NamedObservation{
		{App: "d/a", AppObservation: soldier.AppObservation{RPS: 120.5, CPUUtil: 0.61, Ready: 3, Starting: 2, Pending: 1, Replicas: 6}},
		{App: "d/b", AppObservation: soldier.AppObservation{RPS: 7, CPUUtil: 0.2, Ready: 1, Replicas: 1, Blind: true}},
	}})
	if len(out.got) != 1 {
		t.Fatalf("%d steps", len(out.got))
	}
	o := out.got[0].Outcome
	want := map[string]float64{
		"rps/d/a": 120.5, "cpu_util/d/a": 0.61, "ready/d/a": 3, "starting/d/a": 2, "pending/d/a": 1, "target/d/a": 6,
		"rps/d/b": 7, "cpu_util/d/b": 0.2, "ready/d/b": 1, "target/d/b": 1, "blind/d/b": 1,
	}
	for k, v := range want {
		if got, ok := o[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	for _, k := range []string{"starting/d/b", "pending/d/b", "blind/d/a"} {
		if _, ok := o[k]; ok {
			t.Errorf("%s recorded; it is left out when 0", k)
		}
	}
	for k := range o {
		if m, app, ok := SplitAppKey(k); ok && AppKey(m, app) != k {
			t.Errorf("SplitAppKey(%q) = %q, %q", k, m, app)
		}
	}
	if _, _, ok := SplitAppKey("p99_seconds"); ok {
		t.Errorf("a domain-level key split as a per-app key")
	}
}

// BenchmarkSoldierRecord is the recording cost of one Soldier tick, by
// domain size: building the step's maps (per-app telemetry included).
func BenchmarkSoldierRecord(b *testing.B) {
	for _, n := range []int{10, 100, 500} {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			apps := make([]soldier.NamedObservation, n)
			for i := range apps {
				apps[i] = soldier.NamedObservation{App: fmt.Sprintf("d/app-%d", i),
					AppObservation: soldier.AppObservation{RPS: float64(i), CPUUtil: 0.5, Ready: 3, Replicas: 3}}
			}
			rec := &Soldier{Episode: "e", Out: discard{}}
			r := soldier.Record{Domain: "d", Apps: apps}
			b.ReportAllocs()
			for b.Loop() {
				r.Seq++
				rec.Record(r)
			}
		})
	}
}

type discard struct{}

func (discard) Append(store.Step) error { return nil }

// TestCommanderRecordsItsCapacityPlan: a tick with a capacity plan records
// it as the action capacity_target_cores; a tick without one records none.
func TestCommanderRecordsItsCapacityPlan(t *testing.T) {
	for _, target := range []float64{0, 1234.5} {
		out := &steps{}
		rec := &Commander{Episode: "e", Domains: []string{"d"}, Out: out}
		r := commander.Record{Seq: 1, CapacityTarget: target, Final: commander.NewAction(1)}
		r.Final.Shares[0], r.Final.Reserve = 0.9, 0.1
		rec.Record(r)
		got, ok := out.got[0].Action["capacity_target_cores"]
		if ok != (target > 0) || got != target {
			t.Errorf("plan %v: recorded %v (present %v)", target, got, ok)
		}
	}
}

// TestSoldierRecordsAppsNotWritten pins the record of a failing app: a
// write_failed guard and outcome at every step it fails, a ledger entry
// when it starts failing and when it is written again, none in between.
func TestSoldierRecordsAppsNotWritten(t *testing.T) {
	out := &steps{}
	var ledger []store.LedgerEntry
	rec := &Soldier{Episode: "e", Out: out, Ledger: func(e store.LedgerEntry) error { ledger = append(ledger, e); return nil }}
	apps := []soldier.NamedObservation{{App: "d/a", AppObservation: soldier.AppObservation{Replicas: 4}}, {App: "d/b", AppObservation: soldier.AppObservation{Replicas: 2}}}
	denied := soldier.NamedFailing{App: "d/a", Failing: soldier.Failing{App: 0, Reason: soldier.FailDenied,
		Detail: "denied by ValidatingAdmissionPolicy 'freeze'", Target: 9, Failures: 1}}
	for seq, failing := range [][]soldier.NamedFailing{{denied}, {denied}, nil} {
		rec.Record(soldier.Record{Seq: uint64(seq), Domain: "d", Apps: apps, Failing: failing, BreachingAtMax: []string{"d/b"}[:seq%2],
			LimitedByMax: []soldier.NamedLimited{{App: "d/b", Max: 2, Wanted: 5}}[:seq%2]})
	}
	for seq, want := range []float64{0, 5, 0} { // the apps their ceiling limits: the replicas wanted
		if got := out.got[seq].Outcome["limited_by_max/d/b"]; got != want {
			t.Errorf("step %d: limited_by_max/d/b %v, want %v", seq, got, want)
		}
	}
	for seq, want := range []bool{false, true, false} { // the apps at their ceiling, apart from the failing ones
		_, got := out.got[seq].Outcome["breaching_at_max/d/b"]
		_, other := out.got[seq].Outcome["breaching_at_max/d/a"]
		if got != want || other {
			t.Errorf("step %d: breaching_at_max/d/b %v, d/a %v; want %v, false", seq, got, other, want)
		}
	}
	for seq, want := range []bool{true, true, false} {
		st := out.got[seq]
		_, failing := st.Outcome["write_failing/d/a"]
		guard := slices.IndexFunc(st.Guards, func(g store.Guard) bool { return g.Name == GuardWriteFailed }) >= 0
		if failing != want || guard != want {
			t.Errorf("step %d: outcome %v, guard %v; want %v", seq, failing, guard, want)
		}
		if want {
			g := st.Guards[slices.IndexFunc(st.Guards, func(g store.Guard) bool { return g.Name == GuardWriteFailed })]
			if g.Target != "replicas/d/a" || g.Before != 9 || g.After != 4 || !strings.Contains(g.Reason, "denied: denied by ValidatingAdmissionPolicy") {
				t.Errorf("step %d: guard %+v", seq, g)
			}
		}
	}
	var kinds []string
	for _, e := range ledger {
		kinds = append(kinds, e.Kind)
	}
	if want := []string{"fallback", LedgerWriteFailed, LedgerWriteRecovered}; !slices.Equal(kinds, want) {
		t.Errorf("ledger kinds %v, want %v", kinds, want)
	}
	if len(ledger) == 3 && !strings.Contains(ledger[1].Detail, "d/a not written (denied)") {
		t.Errorf("ledger entry %q does not say which app and why", ledger[1].Detail)
	}
}

// TestSoldierRecordsLearnedTimes pins the record of what a Soldier learned
// of an app: service_time and startup_time in seconds, absent before a
// value and for apps that do not learn.
func TestSoldierRecordsLearnedTimes(t *testing.T) {
	out := &steps{}
	rec := &Soldier{Episode: "e", Out: out}
	apps := []soldier.NamedObservation{{App: "d/a"}, {App: "d/b"}}
	for seq := range 3 {
		rec.Record(soldier.Record{Seq: uint64(seq), Domain: "d", Apps: apps,
			Learned: []soldier.LearnedApp{{App: "d/b", ServiceTime: 0.01 * float64(seq), Startup: 12, Samples: 6 * seq}}})
	}
	for seq, want := range []float64{0, 0.01, 0.02} {
		got, ok := out.got[seq].Outcome["service_time/d/b"]
		if got != want || ok != (want > 0) || out.got[seq].Outcome["startup_time/d/b"] != 12 {
			t.Errorf("step %d: service_time/d/b %v (%v), startup_time/d/b %v; want %v and 12", seq, got, ok, out.got[seq].Outcome["startup_time/d/b"], want)
		}
		if _, ok := out.got[seq].Outcome["service_time/d/a"]; ok {
			t.Errorf("step %d: d/a, not learning, has a service time", seq)
		}
	}
}
