// Package wiretest holds release 1.0 of the wire contract, frozen: its
// directive and report as that release encoded them (no minor field) and
// its decoder's rules, for the tests that prove a rolling upgrade works both
// ways (wire's goldens, the daemons over real NATS). Only tests import it.
// Do not edit these to follow the contract: they are what a daemon of 1.0
// sends and reads. It imports only the standard library, so wire's own
// tests can use it.
package wiretest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Duration10 is 1.0's duration: a Go duration string ("1m0s").
type Duration10 time.Duration

// MarshalJSON encodes d as 1.0 did.
func (d Duration10) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON decodes a duration string.
func (d *Duration10) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration10(v)
	return err
}

// Directive10 is 1.0's directive.
type Directive10 struct {
	Version  int        `json:"version"`
	Cluster  string     `json:"cluster"`
	Domain   string     `json:"domain"`
	Term     uint64     `json:"term"`
	Seq      uint64     `json:"seq"`
	IssuedAt time.Time  `json:"issued_at"`
	TTL      Duration10 `json:"ttl"`
	Share    float64    `json:"share"`
	Cores    float64    `json:"cores"`
	Urgency  float64    `json:"urgency"`
	Headroom float64    `json:"headroom"`
	Policy   string     `json:"policy"`
	Reason   string     `json:"reason"`
	Signer   string     `json:"signer,omitempty"`
	Sig      string     `json:"sig,omitempty"`
}

// Report10 is 1.0's domain report.
type Report10 struct {
	Version           int       `json:"version"`
	Cluster           string    `json:"cluster"`
	Domain            string    `json:"domain"`
	Seq               uint64    `json:"seq"`
	SentAt            time.Time `json:"sent_at"`
	RPS               float64   `json:"rps"`
	RPSP95            float64   `json:"rps_p95"`
	P99Seconds        float64   `json:"p99_seconds"`
	ErrorRate         float64   `json:"error_rate"`
	CPUUtilP75        float64   `json:"cpu_util_p75"`
	MemUtilP75        float64   `json:"mem_util_p75"`
	RestartRate       float64   `json:"restart_rate"`
	LivePods          int       `json:"live_pods"`
	PendingPods       int       `json:"pending_pods"`
	StartingPods      int       `json:"starting_pods"`
	CoresUsed         float64   `json:"cores_used"`
	BudgetCores       float64   `json:"budget_cores"`
	DemandCores       float64   `json:"demand_cores"`
	BudgetUtilisation float64   `json:"budget_utilisation"`
	DirectiveTerm     uint64    `json:"directive_term"`
	DirectiveSeq      uint64    `json:"directive_seq"`
	Mode              string    `json:"mode"`
	Fallback          bool      `json:"fallback"`
}

// Decode10 is 1.0's decoder: version exactly 1, then strict decoding of one
// object (unknown fields refused, nothing after it).
func Decode10(b []byte, v any) error {
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	if head.Version != 1 {
		return fmt.Errorf("version %d not supported (want 1)", head.Version)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the object")
	}
	return nil
}

// Sign10 signs d as a 1.0 Commander did: sign (an ed25519 signer, an nkeys
// key pair's Sign) over its JSON without signer and sig, then signer is the
// public key and sig the signature in standard base64.
func Sign10(d Directive10, publicKey string, sign func([]byte) ([]byte, error)) (Directive10, error) {
	d.Signer, d.Sig = "", ""
	b, err := json.Marshal(d)
	if err != nil {
		return d, err
	}
	sig, err := sign(b)
	if err != nil {
		return d, err
	}
	d.Signer, d.Sig = publicKey, base64.StdEncoding.EncodeToString(sig)
	return d, nil
}
