package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/calibrate"
	"github.com/regimentd/regiment/internal/offline/episodes"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
	"github.com/regimentd/regiment/internal/offline/simcluster"
)

// truthChanges is how the "real" cluster differs from examples/small.hcl:
// service time factors and startup times per "domain/set".
var truthChanges = map[string]struct {
	serviceFactor float64
	startup       time.Duration // 0: as configured
}{
	"payment/checkout": {1.4, 60 * time.Second},
	"fraud/scoring":    {1.4, 0},
	"merchant/api":     {0.8, 50 * time.Second},
	"payment/ledger":   {1.2, 0},
}

// recordTruth simulates the small example with truthChanges applied (and,
// with spell, slowSpell) for 3 hours, driven by Regiment itself
// (simcluster.NewPolicy) under the small world's learned Commander,
// recording every Soldier step into real bbolt stores in dir through the
// recorders the daemons use. It returns dir.
func recordTruth(dir string, spell, perDomain bool) (string, error) {
	truth, err := config.LoadFile("../../examples/small.hcl")
	if err != nil {
		return "", err
	}
	if truth.Commander.Policy, err = filepath.Abs("../../models/commander.ckpt"); err != nil {
		return "", err
	}
	for di := range truth.Domains {
		d := &truth.Domains[di]
		for si := range d.AppSets {
			s := &d.AppSets[si]
			if c, ok := truthChanges[d.Name+"/"+s.Name]; ok {
				s.ServiceTime = time.Duration(float64(s.ServiceTime) * c.serviceFactor)
				if c.startup > 0 {
					s.StartupTime = c.startup
				}
			}
		}
	}
	sc, err := config.LoadScenarioFile("testdata/small-sample.hcl", truth)
	if err != nil {
		return "", err
	}
	sc.Duration = 3 * time.Hour
	if spell {
		sc.Events = append(sc.Events, slowSpell)
	}
	traces, err := trace.Load(sc)
	if err != nil {
		return "", err
	}
	s, err := sim.New(truth, sc, traces)
	if err != nil {
		return "", err
	}
	// One store for the whole run, as "regiment run" writes, or one per
	// domain, as the Soldier daemons do.
	type sink struct {
		st  *store.Store
		app *store.Appender
	}
	sinks := map[string]sink{}
	for _, d := range truth.Domains {
		name := "regiment.db"
		if perDomain {
			name = "soldier-" + d.Name + ".db"
		}
		k, ok := sinks[name]
		if !ok {
			st, err := store.Open(filepath.Join(dir, name), store.Options{})
			if err != nil {
				return "", err
			}
			k = sink{st, st.NewAppender(256, time.Second)}
			sinks[name] = k
		}
		sinks[d.Name] = k
		ep := recording.SoldierEpisode("truth-"+d.Name, truth, d.Name, truth.Soldier.Policy)
		ep.Started = s.Now()
		if err := k.st.BeginEpisode(ep); err != nil {
			return "", err
		}
	}
	var recErr error
	p, err := simcluster.NewPolicy(truth, nil, func(domain string) soldier.Recorder {
		return &recording.Soldier{Episode: "truth-" + domain, Out: sinks[domain].app, Err: func(err error) { recErr = err }}
	})
	if err != nil {
		return "", err
	}
	s.Run(p)
	if p.Err() != nil {
		return "", p.Err()
	}
	for _, d := range truth.Domains {
		if err := sinks[d.Name].app.Flush(); err != nil {
			return "", err
		}
		if err := sinks[d.Name].st.EndEpisode("truth-"+d.Name, s.Now()); err != nil {
			return "", err
		}
	}
	for name, k := range sinks {
		if strings.HasSuffix(name, ".db") {
			if err := k.app.Close(); err != nil {
				return "", err
			}
			if err := k.st.Close(); err != nil {
				return "", err
			}
		}
	}
	return dir, recErr
}

func nominal(t *testing.T) *domains.Config {
	t.Helper()
	cfg, err := config.LoadFile("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// slowSpell is something no config describes: fraud/scoring serves twice as
// slowly for 15 minutes.
var slowSpell = domains.Event{Kind: domains.EventSlowDependency, App: "fraud/scoring",
	At: 2 * time.Hour, Ramp: time.Minute, Hold: 15 * time.Minute, ServiceTimeFactor: 2}

// TestCalibrateFromRecordedEpisodes records a simulated cluster that differs
// from its config into a real store, then calibrates from it.
func TestCalibrateFromRecordedEpisodes(t *testing.T) {
	dir, err := recordTruth(t.TempDir(), false, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("calibration recovers the recorded cluster", func(t *testing.T) { testCalibrateRecovers(t, dir) })
	t.Run("the command writes a loadable config", func(t *testing.T) { testCalibrateCommand(t, dir) })
	t.Run("the command reads a running daemon's URL", func(t *testing.T) { testCalibrateReadsARunningDaemonsURL(t, dir) })
}

// testCalibrateReadsARunningDaemonsURL: the store a running daemon holds
// (locked) is calibrated through the daemon's URL (its /store, served by
// the daemon's HTTP server behind its token, from --http-token-file or
// $REGIMENT_HTTP_TOKEN) to the same report as from the file; without the
// token the command says 401 and how to give it, and the locked file itself
// is refused with the URL to use instead.
func testCalibrateReadsARunningDaemonsURL(t *testing.T, dir string) {
	calibrateOn := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := runCalibrate(context.Background(), append([]string{"--config", "../../examples/small.hcl"}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, fromFile, errOut := calibrateOn("--episodes", dir)
	if code != 0 || !strings.Contains(fromFile, "PASS") {
		t.Fatalf("from the file: exit %d\n%s\n%s", code, fromFile, errOut)
	}
	held, err := store.Open(filepath.Join(dir, "regiment.db"), store.Options{}) // the running daemon's
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	url := serveStore(t, held, "s3cret")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, fromURL, errOut := calibrateOn("--episodes", url, "--http-token-file", tokenFile)
	if code != 0 || fromURL != fromFile {
		t.Errorf("from %s: exit %d\n%s\nstderr:\n%s\nfrom the file:\n%s", url, code, fromURL, errOut, fromFile)
	}
	if !strings.Contains(errOut, "from 1 store(s)") {
		t.Errorf("from %s: progress %q, want the one store read", url, errOut)
	}
	t.Setenv("REGIMENT_HTTP_TOKEN", "s3cret")
	if code, fromEnv, errOut := calibrateOn("--episodes", url); code != 0 || fromEnv != fromFile {
		t.Errorf("from %s with $REGIMENT_HTTP_TOKEN: exit %d\n%s\n%s", url, code, fromEnv, errOut)
	}
	t.Setenv("REGIMENT_HTTP_TOKEN", "")
	wrongFile := filepath.Join(t.TempDir(), "wrong")
	if err := os.WriteFile(wrongFile, []byte("s3cre7"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rule string
		args []string
		want []string
	}{
		{"no token", []string{"--episodes", url}, []string{"401 Unauthorized", "--http-token-file"}},
		{"a wrong token, the URL with its path", []string{"--episodes", url + "store", "--http-token-file", wrongFile}, []string{"401 Unauthorized"}},
		{"the locked file", []string{"--episodes", dir}, []string{"is locked", "--episodes http://"}},
		{"an empty token file", []string{"--episodes", url, "--http-token-file", os.DevNull}, []string{"read http token", "is empty"}},
	} {
		code, out, errOut := calibrateOn(tc.args...)
		for _, w := range tc.want {
			if code != 1 || out != "" || !strings.Contains(errOut, w) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1, nothing, and %q", tc.rule, code, out, errOut, w)
			}
		}
	}
}

// TestCalibrateFlagsWhatItCannotModel: with a slow spell in the recording,
// the estimators still recover the service times (medians), but the replay,
// which knows nothing of the spell, fails fraud's p99 while the domains the
// spell leaves alone still pass.
func TestCalibrateFlagsWhatItCannotModel(t *testing.T) {
	dir, err := recordTruth(t.TempDir(), true, true) // one store per domain, as the daemons write
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	res, err := episodes.Calibrate(context.Background(), nominal(t), dir, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "from 5 store(s): 1 run(s)") {
		t.Errorf("the five daemons' stores should make one run: %s", progress.String())
	}
	for _, s := range res.Sets {
		if c, ok := truthChanges[s.Domain+"/"+s.Set]; ok {
			want := s.ServiceTime.Old * c.serviceFactor
			if math.Abs(s.ServiceTime.New/want-1) > 0.10 {
				t.Errorf("%s/%s service time %.4fs, true %.4fs", s.Domain, s.Set, s.ServiceTime.New, want)
			}
		}
	}
	// One domain's store alone: the others are replayed without demand,
	// and only the recorded domain is scored.
	one, err := episodes.Calibrate(context.Background(), nominal(t), filepath.Join(dir, "soldier-merchant.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := one.After.Score("payment/p99"); ok || !one.After.Pass() {
		t.Errorf("merchant's store alone: %+v", one.After.Scores)
	}
	fraud, _ := res.After.Score("fraud/p99")
	merchant, _ := res.After.Score("merchant/p99")
	if fraud.Pass || !merchant.Pass || res.After.Pass() {
		t.Errorf("fraud/p99 %+v, merchant/p99 %+v: the spell should fail fraud only", fraud, merchant)
	}
}

// testCalibrateRecovers is the end-to-end rule: starting from the nominal
// config, calibration from recorded episodes recovers the
// true service times within 10% and the startup delays within a tick, and
// the calibrated simulator replays the recorded p99 with r >= 0.85 and a
// clearly smaller error than the nominal one.
func testCalibrateRecovers(t *testing.T, dir string) {
	cfg := nominal(t)
	var progress bytes.Buffer
	res, err := episodes.Calibrate(context.Background(), cfg, dir, &progress)
	if err != nil {
		t.Fatal(err)
	}
	var report bytes.Buffer
	if err := calibrate.WriteReport(&report, res); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\n%s", progress.String(), report.String())

	tick := cfg.Soldier.Tick.Seconds()
	for _, s := range res.Sets {
		name := s.Domain + "/" + s.Set
		c, changed := truthChanges[name]
		if !changed && s.ServiceTime.Samples == 0 {
			continue // no traffic in the scenario: nothing to fit, nothing changed
		}
		if c.serviceFactor == 0 {
			c.serviceFactor = 1
		}
		wantSvc := s.ServiceTime.Old * c.serviceFactor
		if !s.ServiceTime.Applied || math.Abs(s.ServiceTime.New/wantSvc-1) > 0.10 {
			t.Errorf("%s service time %.4fs (applied %v, %d samples), true %.4fs", name, s.ServiceTime.New, s.ServiceTime.Applied, s.ServiceTime.Samples, wantSvc)
		}
		wantStart := s.StartupTime.Old
		if c.startup > 0 {
			wantStart = c.startup.Seconds()
		}
		if s.StartupTime.Applied && math.Abs(s.StartupTime.New-wantStart) > tick {
			t.Errorf("%s startup %.0fs from %d replicas, true %.0fs", name, s.StartupTime.New, s.StartupTime.Samples, wantStart)
		}
		if c.startup > 0 && !s.StartupTime.Applied {
			t.Errorf("%s startup not fitted (%d replicas: %s); the recording scales it up", name, s.StartupTime.Samples, s.StartupTime.Note)
		}
	}
	if cfg.Domains[0].AppSets[0].ServiceTime != 25*time.Millisecond {
		t.Errorf("Calibrate modified its input config")
	}
	for _, sc := range res.After.Scores {
		if !sc.Skipped && !sc.Pass {
			t.Errorf("calibrated replay of %s: r %.3f below %.2f", sc.Series, sc.R, res.After.Target)
		}
	}
	for _, s := range res.Sets {
		if s.CallRatio != nil && (!s.CallRatio.Applied || math.Abs(s.CallRatio.New-1) > 0.05) {
			t.Errorf("%s/%s call ratio %.3f (%s), true 1", s.Domain, s.Set, s.CallRatio.New, s.CallRatio.Note)
		}
	}
	before, _ := res.Before.Score("overall/p99_over_slo")
	after, ok := res.After.Score("overall/p99_over_slo")
	if !ok || !after.Pass {
		t.Fatalf("overall p99 after calibration: %+v", after)
	}
	// The negative side: the nominal config replays the same recording
	// measurably worse.
	if before.RelErr < 2*after.RelErr || before.RelErr-after.RelErr < 0.05 {
		t.Errorf("overall p99 error: nominal %.3f, calibrated %.3f: calibration should at least halve it", before.RelErr, after.RelErr)
	}
}

// testCalibrateCommand pins the CLI: it prints PASS,
// exits 0, and writes an HCL config that loads and carries the fitted
// values, and a JSON report.
func testCalibrateCommand(t *testing.T, dir string) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := runCalibrate(context.Background(), []string{"--config", "../../examples/small.hcl", "--episodes", dir,
		"--out", filepath.Join(out, "calibrated.hcl"), "--json", filepath.Join(out, "report.json")}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "PASS") {
		t.Errorf("no PASS in:\n%s", stdout.String())
	}
	cal, err := config.LoadFile(filepath.Join(out, "calibrated.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	var rep calibrate.Result
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Sets {
		set := cal.Domains[cal.Domain(s.Domain)].AppSets[0]
		for _, a := range cal.Domains[cal.Domain(s.Domain)].AppSets {
			if a.Name == s.Set {
				set = a
			}
		}
		if s.ServiceTime.Applied && math.Abs(set.ServiceTime.Seconds()-s.ServiceTime.New) > 1e-6 {
			t.Errorf("%s/%s: calibrated.hcl has service_time %s, report %.6fs", s.Domain, s.Set, set.ServiceTime, s.ServiceTime.New)
		}
	}
	src, _ := os.ReadFile(filepath.Join(out, "calibrated.hcl"))
	if !strings.Contains(string(src), "# A small cluster") {
		t.Errorf("calibrated.hcl lost the source's comments")
	}
}

func TestCalibrateCommandRejectsMissingFlags(t *testing.T) {
	for _, args := range [][]string{{}, {"--config", "../../examples/small.hcl"}, {"--episodes", "x"}} {
		var stdout, stderr bytes.Buffer
		if code := runCalibrate(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	var stdout, stderr bytes.Buffer
	code := runCalibrate(context.Background(), []string{"--config", "../../examples/small.hcl", "--episodes", t.TempDir()}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "no store at") {
		t.Errorf("empty dir: exit %d, stderr %q", code, stderr.String())
	}
}

// TestTrainOnEpisodesCalibratesFirst: `regiment train --episodes` fits the
// simulator to the recording, prints what it fitted and the replay's
// Pearson r, keeps the report, and trains on the calibrated cluster.
func TestTrainOnEpisodesCalibratesFirst(t *testing.T) {
	dir, err := recordTruth(t.TempDir(), false, false)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := runTrain(context.Background(), []string{
		"--config", "../../examples/small.hcl", "--stage", "soldier", "--out", out, "--episodes", dir,
		"--steps", "2000", "--episode", "10m", "--seed", "3",
		"--scenario", "../../examples/scenarios/train/small-base.hcl",
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	report := stdout.String()
	// The truth runs checkout 1.4x slower than the config says (35 ms).
	for _, want := range []string{"payment/checkout  service_time  25ms   35ms *", "Replay of the recorded demand", "soldier gate"} {
		if !strings.Contains(report, want) {
			t.Errorf("stdout lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "WARNING") {
		t.Errorf("the calibrated replay fails:\n%s", report)
	}
	var cal struct {
		After struct {
			Scores []struct{ Pass, Skipped bool } `json:"scores"`
		} `json:"after"`
	}
	b, err := os.ReadFile(filepath.Join(out, "calibration.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cal); err != nil || len(cal.After.Scores) == 0 {
		t.Fatalf("calibration.json: %v\n%s", err, b)
	}
}
