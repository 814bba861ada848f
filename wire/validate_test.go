package wire

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// checkRule asserts err is a *FieldError on field (or nil when field is "").
func checkRule(t *testing.T, err error, field, msg string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		return
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *FieldError on %q", err, field)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("err = %v does not wrap ErrInvalid", err)
	}
	if fe.Field != field {
		t.Errorf("field = %q (%v), want %q", fe.Field, err, field)
	}
	if msg != "" && err.Error() != msg {
		t.Errorf("message = %q, want %q", err.Error(), msg)
	}
}

func onlyPayment(d string) bool { return d == "payment" || d == "fraud" }

func TestDirectiveValidate(t *testing.T) {
	tests := []struct {
		rule   string
		mutate func(*Directive)
		known  func(string) bool
		field  string
		msg    string
	}{
		{"example is valid", func(*Directive) {}, onlyPayment, "", ""},
		{"wrong version", func(d *Directive) { d.Version = 2 }, nil, "version", "directive: version 2 not supported (this build reads 1.0-1.1)"},
		{"empty cluster", func(d *Directive) { d.Cluster = "" }, nil, "cluster", "directive: cluster is empty"},
		{"cluster with a dot", func(d *Directive) { d.Cluster = "prod.eu" }, nil, "cluster", ""},
		{"empty domain", func(d *Directive) { d.Domain = "" }, nil, "domain", "directive: domain is empty"},
		{"domain with a wildcard", func(d *Directive) { d.Domain = "pay*" }, nil, "domain", ""},
		{"unknown domain", func(d *Directive) { d.Domain = "ledger" }, onlyPayment, "domain", `directive: domain "ledger" is not a known domain`},
		{"nil lookup skips the known check", func(d *Directive) { d.Domain = "ledger" }, nil, "", ""},
		{"zero issued_at", func(d *Directive) { d.IssuedAt = time.Time{} }, nil, "issued_at", "directive: issued_at is not set"},
		{"issued_at past year 9999", func(d *Directive) { d.IssuedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, nil, "issued_at", ""},
		{"zero ttl", func(d *Directive) { d.TTL = 0 }, nil, "ttl", "directive: ttl 0s out of range (0,24h0m0s]"},
		{"negative ttl", func(d *Directive) { d.TTL = Duration(-time.Second) }, nil, "ttl", ""},
		{"ttl over a day", func(d *Directive) { d.TTL = Duration(25 * time.Hour) }, nil, "ttl", ""},
		{"ttl of exactly a day", func(d *Directive) { d.TTL = Duration(MaxTTL) }, nil, "", ""},
		{"share above 1", func(d *Directive) { d.Share = 1.3 }, nil, "share", "directive: share 1.3 out of range [0,1]"},
		{"negative share", func(d *Directive) { d.Share = -0.1 }, nil, "share", ""},
		{"share NaN", func(d *Directive) { d.Share = math.NaN() }, nil, "share", "directive: share NaN is not a finite number"},
		{"share of 0 and 1 are allowed", func(d *Directive) { d.Share, d.Urgency = 0, 1 }, nil, "", ""},
		{"negative cores", func(d *Directive) { d.Cores = -1 }, nil, "cores", "directive: cores -1 is negative"},
		{"infinite cores", func(d *Directive) { d.Cores = math.Inf(1) }, nil, "cores", "directive: cores +Inf is not a finite number"},
		{"urgency above 1", func(d *Directive) { d.Urgency = 1.01 }, nil, "urgency", ""},
		{"urgency -Inf", func(d *Directive) { d.Urgency = math.Inf(-1) }, nil, "urgency", ""},
		{"headroom above 1", func(d *Directive) { d.Headroom = 2 }, nil, "headroom", ""},
		{"negative headroom", func(d *Directive) { d.Headroom = -0.5 }, nil, "headroom", ""},
		{"long policy", func(d *Directive) { d.Policy = strings.Repeat("p", MaxName+1) }, nil, "policy", ""},
		{"reason over 512 bytes", func(d *Directive) { d.Reason = strings.Repeat("r", MaxReason+1) }, nil, "reason", "directive: reason is 513 bytes, limit 512"},
		{"reason not UTF-8", func(d *Directive) { d.Reason = "\xff" }, nil, "reason", ""},
		{"empty policy and reason are allowed", func(d *Directive) { d.Policy, d.Reason = "", "" }, nil, "", ""},
		{"first broken rule is reported", func(d *Directive) { d.Share, d.Cores = 2, -1 }, nil, "share", ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			d := exampleDirective()
			tt.mutate(&d)
			checkRule(t, d.Validate(tt.known), tt.field, tt.msg)
		})
	}
}

func TestAllocationValidate(t *testing.T) {
	many := func(n int) map[string]float64 {
		m := make(map[string]float64, n)
		for i := range n {
			m[fmt.Sprintf("d%d", i)] = 1 / float64(n)
		}
		return m
	}
	tests := []struct {
		rule   string
		mutate func(*Allocation)
		known  func(string) bool
		field  string
		msg    string
	}{
		{"example is valid", func(*Allocation) {}, func(string) bool { return true }, "", ""},
		{"wrong version", func(a *Allocation) { a.Version = 0 }, nil, "version", ""},
		{"empty cluster", func(a *Allocation) { a.Cluster = "" }, nil, "cluster", ""},
		{"zero issued_at", func(a *Allocation) { a.IssuedAt = time.Time{} }, nil, "issued_at", ""},
		{"sum below 1", func(a *Allocation) { a.Reserve = 0.08 }, nil, "shares", "allocation: shares plus reserve sum to 0.9925, want 1"},
		{"sum above 1", func(a *Allocation) { a.Shares["fraud"] = 0.26 }, nil, "shares", ""},
		{"sum within 1e-6 of 1", func(a *Allocation) { a.Reserve += 0.9e-6 }, nil, "", ""},
		{"sum just beyond 1e-6", func(a *Allocation) { a.Reserve += 1.1e-6 }, nil, "shares", ""},
		{"share above 1", func(a *Allocation) { a.Shares = map[string]float64{"payment": 1.5}; a.Reserve = 0 }, nil, "shares[payment]", "allocation: shares[payment] 1.5 out of range [0,1]"},
		{"negative share", func(a *Allocation) { a.Shares["fraud"] = -0.25; a.Reserve = 0.5875 }, nil, "shares[fraud]", ""},
		{"NaN share", func(a *Allocation) { a.Shares["fraud"] = math.NaN() }, nil, "shares[fraud]", ""},
		{"negative reserve", func(a *Allocation) { a.Reserve = -0.0875 }, nil, "reserve", ""},
		{"reserve above 1", func(a *Allocation) { a.Shares = nil; a.Reserve = 1.5 }, nil, "reserve", ""},
		{"all reserve is valid", func(a *Allocation) { a.Shares = nil; a.Reserve = 1 }, nil, "", ""},
		{"empty domain name", func(a *Allocation) { a.Shares[""] = 0 }, nil, "shares[]", ""},
		{"domain name with a space", func(a *Allocation) { a.Shares["pay ment"] = 0 }, nil, "shares[pay ment]", ""},
		{"unknown domain", func(a *Allocation) {}, onlyPayment, "shares[merchant]", `allocation: shares[merchant] "merchant" is not a known domain`},
		{"too many domains", func(a *Allocation) { a.Shares = many(MaxDomains + 1); a.Reserve = 0 }, nil, "shares", "allocation: shares has 257 domains, limit 256"},
		{"MaxDomains domains are valid", func(a *Allocation) { a.Shares = many(MaxDomains); a.Reserve = 0 }, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			a := exampleAllocation()
			tt.mutate(&a)
			checkRule(t, a.Validate(tt.known), tt.field, tt.msg)
		})
	}
}

func TestDomainReportValidate(t *testing.T) {
	tests := []struct {
		rule   string
		mutate func(*DomainReport)
		known  func(string) bool
		field  string
		msg    string
	}{
		{"example is valid", func(*DomainReport) {}, onlyPayment, "", ""},
		{"wrong version", func(r *DomainReport) { r.Version = -1 }, nil, "version", ""},
		{"empty cluster", func(r *DomainReport) { r.Cluster = "" }, nil, "cluster", ""},
		{"empty domain", func(r *DomainReport) { r.Domain = "" }, nil, "domain", ""},
		{"unknown domain", func(r *DomainReport) { r.Domain = "ledger" }, onlyPayment, "domain", ""},
		{"zero sent_at", func(r *DomainReport) { r.SentAt = time.Time{} }, nil, "sent_at", ""},
		{"negative rps", func(r *DomainReport) { r.RPS = -1 }, nil, "rps", ""},
		{"NaN rps_p95", func(r *DomainReport) { r.RPSP95 = math.NaN() }, nil, "rps_p95", ""},
		{"negative p99", func(r *DomainReport) { r.P99Seconds = -0.1 }, nil, "p99_seconds", ""},
		{"infinite p99", func(r *DomainReport) { r.P99Seconds = math.Inf(1) }, nil, "p99_seconds", ""},
		{"error rate above 1", func(r *DomainReport) { r.ErrorRate = 1.2 }, nil, "error_rate", "report: error_rate 1.2 out of range [0,1]"},
		{"negative error rate", func(r *DomainReport) { r.ErrorRate = -0.01 }, nil, "error_rate", ""},
		{"cpu utilisation above 1 is allowed", func(r *DomainReport) { r.CPUUtilP75 = 1.4 }, nil, "", ""},
		{"negative cpu utilisation", func(r *DomainReport) { r.CPUUtilP75 = -0.1 }, nil, "cpu_util_p75", ""},
		{"negative memory utilisation", func(r *DomainReport) { r.MemUtilP75 = -0.1 }, nil, "mem_util_p75", ""},
		{"negative restart rate", func(r *DomainReport) { r.RestartRate = -1 }, nil, "restart_rate", ""},
		{"negative live pods", func(r *DomainReport) { r.LivePods = -1 }, nil, "live_pods", "report: live_pods -1 is negative"},
		{"negative pending pods", func(r *DomainReport) { r.PendingPods = -1 }, nil, "pending_pods", ""},
		{"negative starting pods", func(r *DomainReport) { r.StartingPods = -1 }, nil, "starting_pods", ""},
		{"negative cores used", func(r *DomainReport) { r.CoresUsed = -1 }, nil, "cores_used", ""},
		{"negative budget", func(r *DomainReport) { r.BudgetCores = -1 }, nil, "budget_cores", ""},
		{"negative demand", func(r *DomainReport) { r.DemandCores = -1 }, nil, "demand_cores", ""},
		{"NaN demand", func(r *DomainReport) { r.DemandCores = math.NaN() }, nil, "demand_cores", ""},
		{"infinite budget utilisation", func(r *DomainReport) { r.BudgetUtilisation = math.Inf(1) }, nil, "budget_utilisation", ""},
		{"budget utilisation above 1 is allowed", func(r *DomainReport) { r.BudgetUtilisation = 1.08 }, nil, "", ""},
		{"unknown mode", func(r *DomainReport) { r.Mode = "auto" }, nil, "mode", `report: mode "auto" is not one of active, recommend, shadow, off`},
		{"empty mode", func(r *DomainReport) { r.Mode = "" }, nil, "mode", ""},
		{"shadow mode in fallback", func(r *DomainReport) { r.Mode, r.Fallback = ModeShadow, true }, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			r := exampleReport()
			tt.mutate(&r)
			checkRule(t, r.Validate(tt.known), tt.field, tt.msg)
		})
	}
}

func TestOverrideValidate(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	tests := []struct {
		rule   string
		base   func() Override
		mutate func(*Override)
		known  func(string) bool
		field  string
		msg    string
	}{
		{"share example is valid", exampleShareOverride, func(*Override) {}, onlyPayment, "", ""},
		{"replicas example is valid", exampleReplicasOverride, func(*Override) {}, onlyPayment, "", ""},
		{"wrong version", exampleShareOverride, func(o *Override) { o.Version = 9 }, nil, "version", ""},
		{"empty cluster", exampleShareOverride, func(o *Override) { o.Cluster = "" }, nil, "cluster", ""},
		{"empty domain", exampleShareOverride, func(o *Override) { o.Domain = "" }, nil, "domain", ""},
		{"unknown domain", exampleShareOverride, func(o *Override) { o.Domain = "ledger" }, onlyPayment, "domain", ""},
		{"neither share nor replicas", exampleShareOverride, func(o *Override) { o.Share = nil }, nil, "share", "override: share and replicas both unset; set exactly one"},
		{"both share and replicas", exampleReplicasOverride, func(o *Override) { o.Share = f(0.1) }, nil, "share", "override: share and replicas both set; set exactly one"},
		{"share above 1", exampleShareOverride, func(o *Override) { o.Share = f(1.3) }, nil, "share", "override: share 1.3 out of range [0,1]"},
		{"share NaN", exampleShareOverride, func(o *Override) { o.Share = f(math.NaN()) }, nil, "share", ""},
		{"share with an app", exampleShareOverride, func(o *Override) { o.App = "payment/checkout" }, nil, "app", "override: app must be empty for a share override"},
		{"negative replicas", exampleReplicasOverride, func(o *Override) { o.Replicas = n(-1) }, nil, "replicas", "override: replicas -1 is negative"},
		{"zero replicas are allowed", exampleReplicasOverride, func(o *Override) { o.Replicas = n(0) }, nil, "", ""},
		{"replicas without an app", exampleReplicasOverride, func(o *Override) { o.App = "" }, nil, "app", "override: app is required for a replicas override"},
		{"app of another domain", exampleReplicasOverride, func(o *Override) { o.App = "payment/checkout" }, nil, "app", `override: app "payment/checkout" is not "fraud/<app>"`},
		{"app without a domain", exampleReplicasOverride, func(o *Override) { o.App = "scoring-3" }, nil, "app", ""},
		{"app with a bad name", exampleReplicasOverride, func(o *Override) { o.App = "fraud/scoring 3" }, nil, "app", ""},
		{"zero until", exampleShareOverride, func(o *Override) { o.Until = time.Time{} }, nil, "until", ""},
		{"zero issued_at", exampleShareOverride, func(o *Override) { o.IssuedAt = time.Time{} }, nil, "issued_at", ""},
		{"until before issued_at", exampleShareOverride, func(o *Override) { o.Until = o.IssuedAt.Add(-time.Second) }, nil, "until", "override: until is -1s after issued_at, want (0,24h0m0s]"},
		{"until at issued_at", exampleShareOverride, func(o *Override) { o.Until = o.IssuedAt }, nil, "until", ""},
		{"pin of exactly the maximum is allowed", exampleShareOverride, func(o *Override) { o.Until = o.IssuedAt.Add(MaxOverride) }, nil, "", ""},
		{"pin longer than the maximum", exampleReplicasOverride, func(o *Override) { o.Until = o.IssuedAt.Add(MaxOverride + time.Second) }, nil, "until", "override: until is 24h0m1s after issued_at, want (0,24h0m0s]"},
		{"cancel example is valid", exampleCancelOverride, func(*Override) {}, onlyPayment, "", ""},
		{"cancel of a share pin is valid", exampleCancelOverride, func(o *Override) { o.App = "" }, onlyPayment, "", ""},
		{"cancel with replicas", exampleCancelOverride, func(o *Override) { o.Replicas = n(3) }, nil, "cancel", ""},
		{"cancel with a share", exampleCancelOverride, func(o *Override) { o.App, o.Share = "", f(0.2) }, nil, "cancel", ""},
		{"cancel with until", exampleCancelOverride, func(o *Override) { o.Until = o.IssuedAt.Add(time.Minute) }, nil, "until", "override: until must be unset for a cancel"},
		{"cancel without by", exampleCancelOverride, func(o *Override) { o.By = "" }, nil, "by", ""},
		{"empty by", exampleShareOverride, func(o *Override) { o.By = "" }, nil, "by", "override: by is empty"},
		{"long by", exampleShareOverride, func(o *Override) { o.By = strings.Repeat("b", MaxName+1) }, nil, "by", ""},
		{"long reason", exampleShareOverride, func(o *Override) { o.Reason = strings.Repeat("r", MaxReason+1) }, nil, "reason", ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			o := tt.base()
			tt.mutate(&o)
			checkRule(t, o.Validate(tt.known), tt.field, tt.msg)
		})
	}
}

func TestOverrideActive(t *testing.T) {
	o := exampleShareOverride()
	if !o.Active(o.Until) {
		t.Error("override not active at Until")
	}
	if o.Active(o.Until.Add(time.Nanosecond)) {
		t.Error("override active after Until")
	}
	if c := exampleCancelOverride(); c.Active(c.IssuedAt) {
		t.Error("a cancel is active")
	}
}

func TestOverrideRouting(t *testing.T) {
	if o := exampleShareOverride(); !o.ForCommander() || o.Target() != "payment" {
		t.Errorf("share pin: ForCommander %v, Target %q; want true, payment", o.ForCommander(), o.Target())
	}
	if o := exampleReplicasOverride(); o.ForCommander() || o.Target() != "fraud/scoring-3" {
		t.Errorf("replica pin: ForCommander %v, Target %q; want false, fraud/scoring-3", o.ForCommander(), o.Target())
	}
	if o := exampleCancelOverride(); o.ForCommander() {
		t.Error("cancel of a replica pin goes to the Commander")
	}
}

func TestOverrideAckValidate(t *testing.T) {
	tests := []struct {
		rule   string
		mutate func(*OverrideAck)
		field  string
	}{
		{"example is valid", func(*OverrideAck) {}, ""},
		{"a refusal of a share override is valid", func(a *OverrideAck) { a.App, a.From, a.Accepted = "", "commander", false }, ""},
		{"wrong version", func(a *OverrideAck) { a.Version = 2 }, "version"},
		{"bad cluster", func(a *OverrideAck) { a.Cluster = "a.b" }, "cluster"},
		{"empty domain", func(a *OverrideAck) { a.Domain = "" }, "domain"},
		{"app of another domain", func(a *OverrideAck) { a.App = "payment/x" }, "app"},
		{"unknown answerer", func(a *OverrideAck) { a.From = "operator" }, "from"},
		{"zero at", func(a *OverrideAck) { a.At = time.Time{} }, "at"},
		{"long reason", func(a *OverrideAck) { a.Reason = strings.Repeat("r", MaxReason+1) }, "reason"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			a := exampleOverrideAck()
			tt.mutate(&a)
			checkRule(t, a.Validate(), tt.field, "")
		})
	}
}
