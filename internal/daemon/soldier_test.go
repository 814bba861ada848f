package daemon

import (
	"os"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/config"
)

func TestShapeChangeNeedsARestart(t *testing.T) {
	src, err := os.ReadFile("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		old  string // replaced once by new in examples/small.hcl
		new  string
		want string
	}{
		{"a new target utilisation is no shape change", `scale_down_cooldown = "5m"`, "scale_down_cooldown = \"5m\"\n  target_utilisation = 0.5", ""},
		{"a new floor is no shape change", "floor    = 0.15", "floor    = 0.25", ""},
		{"a bigger pool changes the cluster", "capacity_cores      = 640", "capacity_cores      = 800", "the cluster block changed"},
		{"a renamed domain changes the domains", `domain "platform"`, `domain "tooling"`, "the set of domains changed"},
		{"more apps change the apps", "count           = 6", "count           = 7", "the set of apps changed"},
	}
	cur, err := config.Parse(src, "../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Count(string(src), tt.old) != 1 {
				t.Fatalf("want exactly one %q in small.hcl", tt.old)
			}
			next, err := config.Parse([]byte(strings.Replace(string(src), tt.old, tt.new, 1)), "../../examples/small.hcl")
			if err != nil {
				t.Fatal(err)
			}
			if got := shapeChange(cur, next); got != tt.want {
				t.Errorf("shapeChange = %q, want %q", got, tt.want)
			}
		})
	}
}
