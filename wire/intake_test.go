package wire

import (
	"testing"
	"time"
)

// termAt is the term a Commander starting at t takes.
func termAt(t time.Time) uint64 { return uint64(t.UnixNano()) }

func TestIntakeAccept(t *testing.T) {
	// bounded is a payment Soldier's intake for a Commander ticking every
	// 10s with 3m directives over a 12000-core pool.
	bounded := Intake{Domain: "payment", Bounds: IntakeBounds{TermClock: true, Tick: 10 * time.Second, MaxTTL: 6 * time.Minute, CapacityCores: 12000}}
	// dir builds a valid directive for payment with a 3m TTL.
	dir := func(term, seq uint64, issued time.Time) Directive {
		d := exampleDirective()
		d.Term, d.Seq, d.IssuedAt = term, seq, issued
		return d
	}
	type step struct {
		d      Directive
		now    time.Time
		ok     bool
		reason string
	}
	tests := []struct {
		rule   string
		intake Intake
		steps  []step
	}{
		{"first valid directive is accepted", Intake{}, []step{
			{dir(1, 1, t0), t0, true, ""},
		}},
		{"higher seq in the same term is accepted", Intake{}, []step{
			{dir(1, 1, t0), t0, true, ""},
			{dir(1, 2, t0.Add(time.Minute)), t0.Add(time.Minute), true, ""},
		}},
		{"same seq is a replay", Intake{}, []step{
			{dir(1, 5, t0), t0, true, ""},
			{dir(1, 5, t0), t0.Add(time.Second), false, RejectReplayed},
		}},
		{"lower seq is out of order", Intake{}, []step{
			{dir(1, 5, t0), t0, true, ""},
			{dir(1, 4, t0), t0, false, RejectReplayed},
		}},
		{"new term restarts seq", Intake{}, []step{
			{dir(1, 900, t0), t0, true, ""},
			{dir(2, 1, t0.Add(time.Minute)), t0.Add(time.Minute), true, ""},
		}},
		{"old term is rejected even with a higher seq", Intake{}, []step{
			{dir(2, 1, t0), t0, true, ""},
			{dir(1, 901, t0), t0, false, RejectReplayed},
		}},
		{"a rejection keeps the last accepted", Intake{}, []step{
			{dir(1, 5, t0), t0, true, ""},
			{dir(1, 3, t0), t0, false, RejectReplayed},
			{dir(1, 4, t0), t0, false, RejectReplayed},
			{dir(1, 6, t0), t0, true, ""},
		}},
		{"expired directive is stale", Intake{}, []step{
			{dir(1, 1, t0), t0.Add(3*time.Minute + time.Nanosecond), false, RejectStale},
		}},
		{"directive at exactly issued_at+ttl is current", Intake{}, []step{
			{dir(1, 1, t0), t0.Add(3 * time.Minute), true, ""},
		}},
		{"a stale directive does not advance seq", Intake{}, []step{
			{dir(1, 2, t0), t0.Add(time.Hour), false, RejectStale},
			{dir(1, 1, t0.Add(time.Hour)), t0.Add(time.Hour), true, ""},
		}},
		{"issued more than a minute ahead is from the future", Intake{}, []step{
			{dir(1, 1, t0.Add(time.Minute+time.Nanosecond)), t0, false, RejectFuture},
		}},
		{"issued a minute ahead is tolerated skew", Intake{}, []step{
			{dir(1, 1, t0.Add(time.Minute)), t0, true, ""},
		}},
		{"custom skew", Intake{MaxSkew: time.Second}, []step{
			{dir(1, 1, t0.Add(2*time.Second)), t0, false, RejectFuture},
			{dir(1, 1, t0.Add(time.Second)), t0, true, ""},
		}},
		{"other domain is rejected", Intake{Domain: "fraud"}, []step{
			{dir(1, 1, t0), t0, false, RejectWrongDomain},
		}},
		{"own domain is accepted", Intake{Domain: "payment"}, []step{
			{dir(1, 1, t0), t0, true, ""},
		}},
		{"invalid directive is rejected", Intake{}, []step{
			{func() Directive { d := dir(1, 1, t0); d.Share = 2; return d }(), t0, false, RejectInvalid},
		}},
		{"an expired directive no longer holds back lower (term, seq): recovery without restart", Intake{}, []step{
			{dir(1<<40, 1, t0), t0, true, ""},
			{dir(1, 2, t0.Add(time.Minute)), t0.Add(time.Minute), false, RejectReplayed},
			{dir(1, 3, t0.Add(3*time.Minute+time.Second)), t0.Add(3*time.Minute + time.Second), true, ""},
		}},
		{"a term past the clock-derived terms is refused", bounded, []step{
			{dir(termAt(t0.Add(time.Minute+time.Nanosecond)), 1, t0), t0, false, RejectTermAhead},
			{dir(1<<63, 1, t0), t0, false, RejectTermAhead},
			{dir(termAt(t0.Add(time.Minute)), 1, t0), t0, true, ""},
		}},
		{"a seq jump beyond the ticks elapsed is refused", bounded, []step{
			{dir(termAt(t0), 100, t0), t0, true, ""},
			{dir(termAt(t0), 100+SeqSlack+2, t0.Add(10*time.Second)), t0.Add(10 * time.Second), false, RejectSeqJump},
			{dir(termAt(t0), 1100, t0.Add(20*time.Second)), t0.Add(20 * time.Second), false, RejectSeqJump},
			{dir(termAt(t0), 100+SeqSlack+1, t0.Add(10*time.Second)), t0.Add(10 * time.Second), true, ""},
		}},
		{"a long gap allows a long seq jump", bounded, []step{
			{dir(termAt(t0), 100, t0), t0, true, ""},
			{dir(termAt(t0), 460, t0.Add(time.Hour)), t0.Add(time.Hour), true, ""},
		}},
		{"a new term may start seq anywhere", bounded, []step{
			{dir(termAt(t0), 100, t0), t0, true, ""},
			{dir(termAt(t0)+1, 5000, t0.Add(time.Second)), t0.Add(time.Second), true, ""},
		}},
		{"a TTL past the bound is refused", bounded, []step{
			{func() Directive { d := dir(1, 1, t0); d.TTL = Duration(24 * time.Hour); return d }(), t0, false, RejectTTL},
		}},
		{"cores past the share of the pool's cap are refused", bounded, []step{
			{func() Directive { d := dir(1, 1, t0); d.Cores += 121; return d }(), t0, false, RejectBudget},
			{func() Directive { d := dir(1, 1, t0); d.Cores += 119; return d }(), t0, true, ""},
		}},
		{"cores below the share pass: the nodes hold a smaller pool than the cap", bounded, []step{
			{func() Directive { d := dir(1, 1, t0); d.Cores = 0.5; return d }(), t0, true, ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			in := tt.intake
			var want Directive
			var have bool
			for i, s := range tt.steps {
				ok, reason := in.Accept(s.d, s.now)
				if ok != s.ok || reason != s.reason {
					t.Fatalf("step %d (term %d seq %d): Accept = %v %q, want %v %q", i, s.d.Term, s.d.Seq, ok, reason, s.ok, s.reason)
				}
				if ok {
					want, have = s.d, true
				}
				got, gotHave := in.Last()
				if gotHave != have || got != want {
					t.Fatalf("step %d: Last = %v %+v, want %v %+v", i, gotHave, got, have, want)
				}
			}
		})
	}
}

func TestDirectiveExpired(t *testing.T) {
	d := exampleDirective()
	if got := d.Expires(); !got.Equal(t0.Add(3 * time.Minute)) {
		t.Errorf("Expires = %v, want issued_at + 3m", got)
	}
	if d.Expired(d.Expires()) {
		t.Error("expired at Expires, want valid through it")
	}
	if !d.Expired(d.Expires().Add(time.Nanosecond)) {
		t.Error("not expired after Expires")
	}
}
