package bus

import (
	"strings"
	"testing"
)

func TestSubjects(t *testing.T) {
	tests := []struct {
		rule string
		got  func() (string, error)
		want string // "" means an error
	}{
		{"directive per domain", func() (string, error) { return DirectiveSubject("prod", "payment") }, "regiment.prod.directive.payment"},
		{"report per domain", func() (string, error) { return ReportSubject("prod", "fraud") }, "regiment.prod.report.fraud"},
		{"allocation per cluster", func() (string, error) { return AllocationSubject("eu-west_1") }, "regiment.eu-west_1.allocation"},
		{"override per domain", func() (string, error) { return OverrideSubject("prod", "merchant-api") }, "regiment.prod.override.merchant-api"},
		{"bucket per cluster", func() (string, error) { return DirectiveBucket("prod") }, "regiment_prod_directives"},
		{"empty cluster", func() (string, error) { return DirectiveSubject("", "payment") }, ""},
		{"empty domain", func() (string, error) { return DirectiveSubject("prod", "") }, ""},
		{"dot in domain", func() (string, error) { return DirectiveSubject("prod", "pay.ment") }, ""},
		{"dot in cluster", func() (string, error) { return AllocationSubject("prod.eu") }, ""},
		{"space in domain", func() (string, error) { return ReportSubject("prod", "pay ment") }, ""},
		{"star wildcard", func() (string, error) { return DirectiveSubject("prod", "*") }, ""},
		{"tail wildcard", func() (string, error) { return OverrideSubject("prod", ">") }, ""},
		{"wildcard cluster", func() (string, error) { return AllocationSubject("*") }, ""},
		{"overlong token", func() (string, error) { return DirectiveSubject("prod", strings.Repeat("a", 65)) }, ""},
		{"bucket with a bad cluster", func() (string, error) { return DirectiveBucket("a b") }, ""},
		{"override bucket per cluster", func() (string, error) { return OverrideBucket("prod") }, "regiment_prod_overrides"},
		{"override bucket with a bad cluster", func() (string, error) { return OverrideBucket("a.b") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, err := tt.got()
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %q, want an error", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if s, err := everyDomain("prod", kindReport); err != nil || s != "regiment.prod.report.*" {
		t.Errorf("everyDomain = %q, %v", s, err)
	}
}
