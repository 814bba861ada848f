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

func TestRelocateKeepsTheCheckpointsACopyNames(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"models/c.ckpt", "models/s.ckpt", "abs.ckpt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	abs := filepath.Join(root, "abs.ckpt")
	orig := filepath.Join(root, "examples", "cluster.hcl")
	tests := []struct {
		name                   string
		commander, soldier     string // as written in the original
		wantCommander, wantSol string // cfg.Commander.Policy, cfg.Soldier.Policy of the copy
	}{
		{"relative checkpoints are rebased", "../models/c.ckpt", "../models/s.ckpt", filepath.Join(root, "models/c.ckpt"), filepath.Join(root, "models/s.ckpt")},
		{"built-in names are kept", "forecast", "proportional", "forecast", "proportional"},
		{"an absolute path is kept", abs, "proportional", abs, "proportional"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := base + "# policies\ncommander {\n  tick   = \"60s\"\n  policy = \"" + tt.commander + "\" # learned\n}\nsoldier { policy = \"" + tt.soldier + "\" }\n"
			to := filepath.Join(t.TempDir(), "deep", "copy.hcl")
			out, err := Relocate([]byte(src), orig, to)
			if err != nil {
				t.Fatal(err)
			}
			anywhere, err := Relocate([]byte(src), orig, "")
			if err != nil {
				t.Fatal(err)
			}
			if cfg, err := Parse(anywhere, filepath.Join(t.TempDir(), "x.hcl")); err != nil {
				t.Errorf("the copy made absolute does not load elsewhere: %v", err)
			} else if cfg.Commander.Policy != tt.wantCommander {
				t.Errorf("the copy made absolute names %q, want %q", cfg.Commander.Policy, tt.wantCommander)
			}
			outLines, srcLines := strings.Split(string(out), "\n"), strings.Split(src, "\n")
			if len(outLines) != len(srcLines) {
				t.Fatalf("%d lines, want %d:\n%s", len(outLines), len(srcLines), out)
			}
			for i := range srcLines {
				if srcLines[i] != outLines[i] && !strings.Contains(srcLines[i], "policy = ") {
					t.Errorf("line %d changed: %q -> %q", i+1, srcLines[i], outLines[i])
				}
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				t.Fatal(err)
			}
			cfg, err := Parse(out, to)
			if err != nil {
				t.Fatalf("the copy does not load: %v\n%s", err, out)
			}
			if cfg.Commander.Policy != tt.wantCommander || cfg.Soldier.Policy != tt.wantSol {
				t.Errorf("copy names %q and %q, want %q and %q", cfg.Commander.Policy, cfg.Soldier.Policy, tt.wantCommander, tt.wantSol)
			}
		})
	}
}
