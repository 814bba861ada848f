package bus

import (
	"fmt"
	"strings"

	"github.com/regimentd/regiment/wire"
)

const subjectRoot = "regiment"

// Subject kinds, the third token of every subject.
const (
	kindDirective  = "directive"
	kindReport     = "report"
	kindAllocation = "allocation"
	kindOverride   = "override"
)

// ValidToken checks that s can be one subject token: 1-64 bytes of
// [A-Za-z0-9_-], so no spaces, dots or wildcards.
func ValidToken(s string) error {
	if !wire.ValidName(s) {
		return fmt.Errorf("bus: invalid subject token %q: want 1-%d bytes of A-Z a-z 0-9 _ -", s, wire.MaxName)
	}
	return nil
}

// DirectiveSubject is where the Commander publishes directives for domain.
func DirectiveSubject(cluster, domain string) (string, error) {
	return subject(cluster, kindDirective, domain)
}

// ReportSubject is where domain's Soldier publishes its reports.
func ReportSubject(cluster, domain string) (string, error) {
	return subject(cluster, kindReport, domain)
}

// AllocationSubject is where the Commander publishes its whole split.
func AllocationSubject(cluster string) (string, error) {
	if err := ValidToken(cluster); err != nil {
		return "", err
	}
	return subjectRoot + "." + cluster + "." + kindAllocation, nil
}

// OverrideSubject is where operators publish overrides for domain.
func OverrideSubject(cluster, domain string) (string, error) {
	return subject(cluster, kindOverride, domain)
}

// DirectiveBucket is the JetStream key-value bucket holding the last directive
// of each domain of cluster, keyed by domain.
func DirectiveBucket(cluster string) (string, error) {
	if err := ValidToken(cluster); err != nil {
		return "", err
	}
	return subjectRoot + "_" + cluster + "_directives", nil
}

// OverrideBucket is the JetStream key-value bucket holding the operator pins
// in force in cluster, keyed "<domain>" (share) or "<domain>.<app>" (replicas).
func OverrideBucket(cluster string) (string, error) {
	if err := ValidToken(cluster); err != nil {
		return "", err
	}
	return subjectRoot + "_" + cluster + "_overrides", nil
}

// subject builds "regiment.<cluster>.<kind>.<domain>".
func subject(cluster, kind, domain string) (string, error) {
	if err := ValidToken(cluster); err != nil {
		return "", err
	}
	if err := ValidToken(domain); err != nil {
		return "", err
	}
	return subjectRoot + "." + cluster + "." + kind + "." + domain, nil
}

// everyDomain is the wildcard subject "regiment.<cluster>.<kind>.*".
func everyDomain(cluster, kind string) (string, error) {
	if err := ValidToken(cluster); err != nil {
		return "", err
	}
	return subjectRoot + "." + cluster + "." + kind + ".*", nil
}

// lastToken is the part of subject after its last dot.
func lastToken(subject string) string {
	return subject[strings.LastIndexByte(subject, '.')+1:]
}
