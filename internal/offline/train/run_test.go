package train

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// TestJointStartPrefersTheGivenCheckpoints: the joint stage starts from the
// checkpoints given, else from the config's policies when they name
// checkpoints, and from nothing when they name the built-in policies.
func TestJointStartPrefersTheGivenCheckpoints(t *testing.T) {
	tests := []struct {
		name                   string
		cfgSoldier, cfgCommand string
		given                  [2]string
		want                   [2]string
	}{
		{"given checkpoints win", "s.ckpt", "c.ckpt", [2]string{"gs", "gc"}, [2]string{"gs", "gc"}},
		{"the config's checkpoints fill in", "s.ckpt", "c.ckpt", [2]string{"", "gc"}, [2]string{"s.ckpt", "gc"}},
		{"built-in policies are no checkpoint", soldier.ProportionalPolicy, commander.ForecastPolicy, [2]string{}, [2]string{}},
		{"an unset policy is no checkpoint", "", "", [2]string{"", "gc"}, [2]string{"", "gc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg domains.Config
			cfg.Soldier.Policy, cfg.Commander.Policy = tt.cfgSoldier, tt.cfgCommand
			s, c := JointStart(&cfg, tt.given[0], tt.given[1])
			if [2]string{s, c} != tt.want {
				t.Fatalf("JointStart = %q, %q; want %q", s, c, tt.want)
			}
		})
	}
}

// TestRunStageRefusesAnUnknownStage: a stage RunStage does not know is an
// error naming it, before anything is written.
func TestRunStageRefusesAnUnknownStage(t *testing.T) {
	out := t.TempDir()
	err := RunStage(context.Background(), Options{Stage: "policy", Out: out}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `unknown stage "policy"`) {
		t.Fatalf("RunStage: %v", err)
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 0 {
		t.Errorf("RunStage wrote %v (%v)", entries, err)
	}
}
