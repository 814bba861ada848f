package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

const (
	smallConfig = "../../../../examples/small.hcl"
	smallSample = "../../../../cmd/regiment/testdata/small-sample.hcl"
)

// TestLoadWorldIsTheFilesReadByHand: the loader reads exactly what
// config.LoadFile, config.LoadScenarioFile and trace.Load read, the wiring
// every caller did by hand before it.
func TestLoadWorldIsTheFilesReadByHand(t *testing.T) {
	w, err := LoadWorld(smallConfig, smallSample)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadFile(smallConfig)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile(smallSample, cfg)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w.Config, cfg) || !reflect.DeepEqual(w.Scenario.Scenario, sc) || !reflect.DeepEqual(w.Traces, traces) {
		t.Fatal("LoadWorld differs from the files read by hand")
	}
	read, err := Read(cfg, smallSample)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(read, w.Scenario) {
		t.Fatal("Read of a good scenario differs from Load")
	}
}

// scenarioFiles writes a one-domain config and a scenario replaying trace
// into a new directory and returns their paths.
func scenarioFiles(t *testing.T, trace string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"cluster.hcl": `cluster "c" {
  capacity_cores = 100
}
domain "payment" {
  slo { latency_p99 = "150ms" }
  apps "checkout" {
    cpu_per_replica = 0.5
    service_time    = "25ms"
  }
}
`,
		"day.hcl": `scenario "day" {
  duration = "2h"
  traffic "payment" {
    trace    = "payment.csv"
    format   = "timeseries"
    peak_rps = 100
  }
}
`,
		"payment.csv": trace,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "cluster.hcl"), filepath.Join(dir, "day.hcl")
}

// TestLoadRefusesTheTrafficSimRefuses: Load refuses a trace that sim.New
// would refuse, with sim.New's error; Read reads it and leaves the refusal
// to sim.New.
func TestLoadRefusesTheTrafficSimRefuses(t *testing.T) {
	cfgPath, scPath := scenarioFiles(t, "time,count\n1998-06-10T00:00:00Z,0\n1998-06-10T00:01:00Z,0\n")
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	_, loadErr := Load(cfg, scPath)
	if loadErr == nil {
		t.Fatal("Load took an all-zero trace")
	}
	if _, err := LoadWorld(cfgPath, scPath); err == nil || err.Error() != loadErr.Error() {
		t.Fatalf("LoadWorld: %v, want Load's %v", err, loadErr)
	}
	sc, err := Read(cfg, scPath)
	if err != nil {
		t.Fatalf("Read refused what only a simulation checks: %v", err)
	}
	if _, err := sim.New(cfg, sc.Scenario, sc.Traces); err == nil || err.Error() != loadErr.Error() {
		t.Fatalf("sim.New: %v, want Load's %v", err, loadErr)
	}
}

// TestLoadAllStopsAtTheFirstBadFile: LoadAll loads in order and fails with
// the first bad file's error, which names the file.
func TestLoadAllStopsAtTheFirstBadFile(t *testing.T) {
	cfg, err := config.LoadFile(smallConfig)
	if err != nil {
		t.Fatal(err)
	}
	scs, err := LoadAll(cfg, []string{smallSample, smallSample})
	if err != nil || len(scs) != 2 || scs[0].Name != "small-sample" {
		t.Fatalf("LoadAll of two good files: %d scenarios, %v", len(scs), err)
	}
	missing := filepath.Join(t.TempDir(), "missing.hcl")
	if _, err := LoadAll(cfg, []string{smallSample, missing}); err == nil || !strings.Contains(err.Error(), "missing.hcl") {
		t.Fatalf("LoadAll with a missing file: %v", err)
	}
}
