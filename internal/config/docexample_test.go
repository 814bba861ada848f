package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestTheDocumentedCompleteExampleIsValid: the "A complete example" config
// of docs/configuration.md parses, and its calendar is the one it shows.
func TestTheDocumentedCompleteExampleIsValid(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "## A complete example")
	if i < 0 {
		t.Fatal(`docs/configuration.md has no "## A complete example"`)
	}
	_, block, ok := strings.Cut(s[i:], "```hcl\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("the complete example has no hcl block")
	}
	cfg, err := Parse([]byte(block), "configuration.md")
	if err != nil {
		t.Fatalf("the complete example is not a valid config: %v", err)
	}
	cal := cfg.Calendar
	if cal.Lead != 30*time.Minute || cal.Ramp != 10*time.Minute || len(cal.Events) != 1 ||
		cal.Events[0].Domain != "payment" || cal.Events[0].Load != 2 || cal.Events[0].Lead != 45*time.Minute {
		t.Fatalf("the complete example's calendar is %+v", cal)
	}
}
