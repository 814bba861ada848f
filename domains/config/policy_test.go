package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPolicyPaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models", "commander.ckpt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "cluster.hcl")
	// The blocks start at line 12, after base.
	tests := []struct {
		name      string
		add       string
		commander string // want cfg.Commander.Policy; "" when an error is expected
		soldier   string
		diag      string // want "line,col" and texts of the only diagnostic
		hint      []string
	}{
		{name: "built-in names are kept", add: "commander { policy = \"forecast\" }\nsoldier { policy = \"proportional\" }\n",
			commander: "forecast", soldier: "proportional"},
		{name: "a relative checkpoint path is relative to the config file", add: "commander { policy = \"models/commander.ckpt\" }\n",
			commander: filepath.Join(dir, "models", "commander.ckpt"), soldier: "proportional"},
		{name: "an absolute checkpoint path is kept", add: "commander { policy = \"" + filepath.Join(dir, "models", "commander.ckpt") + "\" }\n",
			commander: filepath.Join(dir, "models", "commander.ckpt"), soldier: "proportional"},
		{name: "a missing checkpoint is reported at the attribute", add: "commander { tick = \"60s\" }\nsoldier { policy = \"models/soldier.ckpt\" }\n",
			diag: ":13,20-41: Missing checkpoint", hint: []string{`soldier policy "models/soldier.ckpt" is neither "proportional" nor a checkpoint file`, "relative to the config file's directory"}},
		{name: "a directory is not a checkpoint", add: "commander { policy = \"models\" }\n",
			diag: ":12,22-30: Invalid checkpoint", hint: []string{"not a checkpoint file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(base+tt.add), file)
			if tt.diag == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Commander.Policy != tt.commander || cfg.Soldier.Policy != tt.soldier {
					t.Errorf("policies %q, %q; want %q, %q", cfg.Commander.Policy, cfg.Soldier.Policy, tt.commander, tt.soldier)
				}
				return
			}
			ds := diagnostics(t, err)
			if len(ds) != 1 {
				t.Fatalf("%d diagnostics, want 1: %v", len(ds), err)
			}
			got := ds[0].String()
			if !strings.HasPrefix(got, file+tt.diag) {
				t.Errorf("diagnostic %q does not start with %q", got, file+tt.diag)
			}
			for _, h := range tt.hint {
				if !strings.Contains(got, h) {
					t.Errorf("diagnostic %q does not mention %q", got, h)
				}
			}
		})
	}
}
