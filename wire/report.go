package wire

import "time"

// Soldier modes, as carried by DomainReport.Mode.
const (
	ModeActive    = "active"    // the Soldier's policy actuates
	ModeRecommend = "recommend" // the policy decides and records; nothing is written
	ModeShadow    = "shadow"    // a deprecated alias of recommend
	ModeOff       = "off"       // nothing is decided or actuated
)

// DomainReport is a Soldier's summary of its domain for the Commander, sent
// every Soldier tick.
type DomainReport struct {
	Version int       `json:"version"`
	Minor   int       `json:"minor,omitempty"` // the contract's minor version; see Minor
	Cluster string    `json:"cluster"`
	Domain  string    `json:"domain"`
	Seq     uint64    `json:"seq"`     // increasing per Soldier process
	SentAt  time.Time `json:"sent_at"` // Soldier's clock

	RPS         float64 `json:"rps"`          // requests per second now, >= 0
	RPSP95      float64 `json:"rps_p95"`      // 95th percentile of RPS over the last 15 min, >= 0
	P99Seconds  float64 `json:"p99_seconds"`  // domain p99 response time, seconds, >= 0
	ErrorRate   float64 `json:"error_rate"`   // failed / all requests, [0, 1]
	CPUUtilP75  float64 `json:"cpu_util_p75"` // p75 over pods of CPU used / requested, >= 0 (may exceed 1)
	MemUtilP75  float64 `json:"mem_util_p75"` // p75 over pods of memory used / requested, >= 0
	RestartRate float64 `json:"restart_rate"` // container restarts per minute over the domain, >= 0

	LivePods     int `json:"live_pods"`     // ready pods, >= 0
	PendingPods  int `json:"pending_pods"`  // unscheduled pods, >= 0
	StartingPods int `json:"starting_pods"` // scheduled, not yet ready, >= 0

	CoresUsed   float64 `json:"cores_used"`   // cores requested by the domain's pods, >= 0
	BudgetCores float64 `json:"budget_cores"` // cores of the directive in force, >= 0
	// DemandCores is the cores the domain's apps would request at the target
	// utilisation with no budget, >= 0: the demand the Commander allocates for.
	DemandCores float64 `json:"demand_cores"`
	// BudgetUtilisation is CoresUsed / BudgetCores (0 when there is no
	// budget), >= 0; above 1 within the overage cap.
	BudgetUtilisation float64 `json:"budget_utilisation"`

	DirectiveTerm uint64 `json:"directive_term"` // Term of the last applied directive, 0: none
	DirectiveSeq  uint64 `json:"directive_seq"`  // Seq of the last applied directive, 0: none
	Mode          string `json:"mode"`           // ModeActive, ModeRecommend, ModeShadow or ModeOff
	Fallback      bool   `json:"fallback"`       // the baseline policy acts (stale directive or rollback)
}

// Validate checks r against the contract. known, when not nil, reports
// whether a domain name is configured.
func (r DomainReport) Validate(known func(domain string) bool) error {
	c := checker{msg: "report"}
	c.version(r.Version, r.Minor)
	c.name("cluster", r.Cluster)
	c.domain("domain", r.Domain, known)
	c.time("sent_at", r.SentAt)
	c.nonNeg("rps", r.RPS)
	c.nonNeg("rps_p95", r.RPSP95)
	c.nonNeg("p99_seconds", r.P99Seconds)
	c.unit("error_rate", r.ErrorRate)
	c.nonNeg("cpu_util_p75", r.CPUUtilP75)
	c.nonNeg("mem_util_p75", r.MemUtilP75)
	c.nonNeg("restart_rate", r.RestartRate)
	c.count("live_pods", r.LivePods)
	c.count("pending_pods", r.PendingPods)
	c.count("starting_pods", r.StartingPods)
	c.nonNeg("cores_used", r.CoresUsed)
	c.nonNeg("budget_cores", r.BudgetCores)
	c.nonNeg("demand_cores", r.DemandCores)
	c.nonNeg("budget_utilisation", r.BudgetUtilisation)
	switch r.Mode {
	case ModeActive, ModeRecommend, ModeShadow, ModeOff:
	default:
		c.fail("mode", "%q is not one of active, recommend, shadow, off", truncate(r.Mode))
	}
	return c.result()
}

// Encode validates r (without a domain lookup) and encodes it.
func (r DomainReport) Encode() ([]byte, error) { return encodeValid("report", r, DomainReport.check) }

// DecodeDomainReport decodes and validates one report (without a domain
// lookup). Errors wrap ErrTooLarge, ErrMalformed or ErrInvalid.
func DecodeDomainReport(b []byte) (DomainReport, error) {
	return decodeValid("report", b, DomainReport.check)
}
