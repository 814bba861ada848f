package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/soldier"
)

func TestTrainSoldierWritesACheckpointTheSoldierLoads(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := runTrain(context.Background(), []string{
		"--config", "../../examples/small.hcl", "--stage", "soldier", "--out", out,
		"--steps", "3000", "--episode", "10m", "--seed", "3",
		"--scenario", "../../examples/scenarios/train/small-base.hcl,../../examples/scenarios/train/small-flash-batch.hcl",
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, name := range []string{"soldier.ckpt", "gate.json", "check.json", "train.csv"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
	if !strings.Contains(stderr.String(), "steps/s") || !strings.Contains(stdout.String(), "soldier gate") {
		t.Errorf("no progress lines or gate verdict:\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	var gate struct {
		Gate struct {
			Episodes   int     `json:"episodes"`
			Compliance float64 `json:"compliance"`
		} `json:"gate"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "gate.json"))
	if err := json.Unmarshal(b, &gate); err != nil || gate.Gate.Episodes != 8 || gate.Gate.Compliance <= 0 {
		t.Errorf("gate.json %s: %v", b, err)
	}
	cfg, err := config.LoadFile("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	scfg, err := soldier.NewConfig(cfg, "payment")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := soldier.LoadLearned(filepath.Join(out, "soldier.ckpt"), scfg); err != nil {
		t.Fatalf("the trained checkpoint does not load as a Soldier policy: %v", err)
	}
}

func TestTrainRefusesBadInvocations(t *testing.T) {
	base := []string{"--config", "../../examples/small.hcl", "--out", t.TempDir(), "--scenario", "../../examples/scenarios/train/small-base.hcl"}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown stage is a usage error", append([]string{"--stage", "policy"}, base...), 2, "unknown stage"},
		{"missing stage is a usage error", base, 2, "required"},
		{"joint stage says it is not built", append([]string{"--stage", "joint"}, base...), 1, "not built"},
		{"an episode longer than a scenario is refused", append([]string{"--stage", "soldier", "--episode", "2000h"}, base...), 1, "shorter than an episode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := runTrain(context.Background(), tt.args, &stdout, &stderr); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
		})
	}
}
