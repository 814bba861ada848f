package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// auditPolicy logs every request at Metadata level (who, verb, object; no
// bodies), except the controllers' and kwok's lease renewals and the
// apiserver's own health checks, which would make most of the log.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version", "/openapi*"]
- level: Metadata
`

// auditFlags are the apiserver flags of Options.Audit: a policy file and a
// JSON log in Dir, written synchronously (the log backend blocks), so a
// request is in the log when its answer has been sent.
func (e *Env) auditFlags() ([]string, error) {
	if !e.audit {
		return nil, nil
	}
	policy := filepath.Join(e.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	e.AuditLog = filepath.Join(e.Dir, "audit.log")
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + e.AuditLog,
		"--audit-log-format=json", "--audit-log-mode=blocking", "--audit-log-maxsize=0"}, nil
}

// AuditEvent is one request as the apiserver's audit log has it.
type AuditEvent struct {
	Verb string `json:"verb"` // get, list, watch, create, update, patch, delete, ...
	User struct {
		Username string `json:"username"` // e.g. system:serviceaccount:regiment:soldier-payment
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`    // e.g. deployments
		Subresource string `json:"subresource"` // e.g. scale
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// Writes says whether the request could change an object.
func (a AuditEvent) Writes() bool {
	switch a.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// Audit reads every event logged so far. It fails unless the control plane
// was started with Options.Audit.
func (e *Env) Audit() ([]AuditEvent, error) {
	if e.AuditLog == "" {
		return nil, fmt.Errorf("testenv: no audit log: start with Options.Audit")
	}
	f, err := os.Open(e.AuditLog)
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	defer f.Close()
	var evs []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var ev AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("testenv: audit log: %w", err)
		}
		evs = append(evs, ev)
	}
	return evs, sc.Err()
}
