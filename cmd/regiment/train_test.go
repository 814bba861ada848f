package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
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
	// The config names no checkpoint, so the joint stage has no default one.
	src, err := config.ReadPortable("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	heuristic := filepath.Join(t.TempDir(), "heuristic.hcl")
	if err := os.WriteFile(heuristic, []byte(strings.Replace(string(src), `policy = "`, `policy = "forecast" # was "`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--config", heuristic, "--out", t.TempDir(), "--scenario", "../../examples/scenarios/train/small-base.hcl"}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown stage is a usage error", append([]string{"--stage", "policy"}, base...), 2, "unknown stage"},
		{"missing stage is a usage error", base, 2, "required"},
		{"joint stage needs both checkpoints", append([]string{"--stage", "joint", "--init-soldier", "../../models/soldier.ckpt"}, base...), 2, "needs a Soldier and a Commander checkpoint"},
		{"joint stage refuses --init", append([]string{"--stage", "joint", "--init", "../../models/soldier.ckpt"}, base...), 2, "--init is for the soldier stage"},
		{"commander stage refuses --init", append([]string{"--stage", "commander", "--init", "../../models/soldier.ckpt"}, base...), 2, "the commander stage starts from the Forecast heuristic"},
		{"joint init flags are refused by other stages", append([]string{"--stage", "soldier", "--init-commander", "../../models/commander.ckpt"}, base...), 2, "are for the joint stage"},
		{"rounds must be positive", append([]string{"--stage", "joint", "--rounds", "0"}, base...), 2, "--rounds must be at least 1"},
		{"joint steps must cover every round and level", append([]string{"--stage", "joint", "--rounds", "3", "--steps", "5"}, base...), 2, "at least 2 x --rounds"},
		{"a missing joint checkpoint is a failure", append([]string{"--stage", "joint", "--init-soldier", "nope.ckpt", "--init-commander", "../../models/commander.ckpt"}, base...), 1, `load checkpoint "nope.ckpt"`},
		{"a soldier checkpoint is not a commander", append([]string{"--stage", "joint", "--init-soldier", "../../models/soldier.ckpt", "--init-commander", "../../models/soldier.ckpt"}, base...), 1, "load checkpoint"},
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

func TestTrainJointWritesBothCheckpointsAndTheGatesPerRound(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := runTrain(context.Background(), []string{
		"--config", "../../examples/small.hcl", "--stage", "joint", "--out", out, "--rounds", "1",
		"--init-soldier", "../../models/soldier.ckpt", "--init-commander", "../../models/commander.ckpt",
		"--steps", "2000", "--episode", "10m", "--seed", "3",
		"--scenario", "../../examples/scenarios/train/small-base.hcl",
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"joint round 1/1: commander level", "joint round 1/1: soldier level", "r1/commander", "r1/soldier/cluster"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "commander gate") || !strings.Contains(stdout.String(), "soldier gate") {
		t.Errorf("stdout lacks a gate verdict:\n%s", stdout.String())
	}
	var gates []struct {
		Round         int `json:"round"`
		CommanderGate struct {
			Episodes int `json:"episodes"`
		} `json:"commander_gate"`
		SoldierGate struct {
			Episodes int `json:"episodes"`
		} `json:"soldier_gate"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "gate.json"))
	if err := json.Unmarshal(b, &gates); err != nil || len(gates) != 1 || gates[0].Round != 1 || gates[0].CommanderGate.Episodes != 16 || gates[0].SoldierGate.Episodes != 8 {
		t.Errorf("gate.json %s: %v", b, err)
	}
	var checks []struct {
		Commander struct{ Stage string } `json:"commander"`
		Soldier   struct{ Stage string } `json:"soldier"`
	}
	b, _ = os.ReadFile(filepath.Join(out, "check.json"))
	if err := json.Unmarshal(b, &checks); err != nil || len(checks) != 1 || checks[0].Commander.Stage != "commander" || checks[0].Soldier.Stage != "soldier" {
		t.Errorf("check.json %s: %v", b, err)
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
		t.Errorf("the joint Soldier does not load: %v", err)
	}
	if _, err := commander.LoadLearned(filepath.Join(out, "commander.ckpt"), cfg); err != nil {
		t.Errorf("the joint Commander does not load: %v", err)
	}
	for _, name := range []string{"round1/soldier.ckpt", "round1/commander.ckpt", "train.csv"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
}
