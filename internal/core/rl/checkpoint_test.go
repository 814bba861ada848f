package rl

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// trainedPolicy returns a policy with random parameters, normaliser
// statistics and provenance.
func trainedPolicy(t *testing.T, shared bool) *Policy {
	t.Helper()
	r := seeded(t, 61)
	p, err := NewPolicy(testSpec(shared), r)
	if err != nil {
		t.Fatal(err)
	}
	randomize(p.Params(), 0.5, r)
	obs := make([]float64, p.Spec.Obs.Dim())
	for range 100 {
		randomize(obs, 3, r)
		p.Norm.Observe(obs)
	}
	p.Provenance = Provenance{
		Stage: "commander", Steps: 2048000, Updates: 1000, Seed: 7,
		Date:      time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		Commit:    "ccb8241",
		Scenarios: []string{"worldcup-group-stage", "diurnal-day"},
		Metrics:   map[string]float64{"mean_return": -12.5, "slo_compliance": 0.997},
	}
	return p
}

func TestSaveLoadRoundTripGivesIdenticalOutputs(t *testing.T) {
	for _, shared := range []bool{false, true} {
		p := trainedPolicy(t, shared)
		var buf bytes.Buffer
		if err := p.Save(&buf); err != nil {
			t.Fatal(err)
		}
		saved := bytes.Clone(buf.Bytes())
		q, err := Load(&buf, p.Spec.Obs)
		if err != nil {
			t.Fatal(err)
		}
		if !q.Norm.Frozen {
			t.Error("loaded normaliser is not frozen")
		}
		if q.Spec.SharedTrunk != shared || !q.Spec.Action.Equal(p.Spec.Action) {
			t.Errorf("loaded spec %+v, want %+v", q.Spec, p.Spec)
		}
		if got, want := q.Provenance.Date, p.Provenance.Date; !got.Equal(want) || q.Provenance.Metrics["slo_compliance"] != 0.997 || q.Provenance.Scenarios[1] != "diurnal-day" {
			t.Errorf("provenance %+v, want %+v", q.Provenance, p.Provenance)
		}
		r := seeded(t, 62)
		obs := make([]float64, p.Spec.Obs.Dim())
		ap, aq := p.NewAction(), q.NewAction()
		for range 50 {
			randomize(obs, 3, r)
			p.Mean(obs, ap)
			q.Mean(obs, aq)
			if !equal(ap.Env, aq.Env) || ap.Value != aq.Value || ap.LogProb != aq.LogProb {
				t.Fatalf("shared %v: Mean differs after reload: %v / %v, value %v / %v", shared, ap.Env, aq.Env, ap.Value, aq.Value)
			}
			s := r.Uint64()
			p.Act(obs, rand.New(rand.NewPCG(s, 1)), ap)
			q.Act(obs, rand.New(rand.NewPCG(s, 1)), aq)
			if !equal(ap.Env, aq.Env) || ap.LogProb != aq.LogProb {
				t.Fatalf("shared %v: Act differs after reload", shared)
			}
		}
		// Saving the loaded policy writes the same bytes.
		var again bytes.Buffer
		if err := q.Save(&again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), saved) {
			t.Errorf("shared %v: re-saved checkpoint differs from the original", shared)
		}
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCheckpointHeaderIsReadable(t *testing.T) {
	p := trainedPolicy(t, false)
	var buf bytes.Buffer
	if err := p.Save(&buf); err != nil {
		t.Fatal(err)
	}
	header, _, ok := bytes.Cut(buf.Bytes(), []byte("\nweights "))
	if !ok {
		t.Fatal("no weights line")
	}
	for _, want := range []string{
		"regiment-policy-checkpoint\n{",
		`"format": 1`,
		`  {"name": "p99_over_slo", "size": 1},` + "\n",
		`"activations": ["tanh", "relu"]`,
		`{"name": "shares", "kind": "simplex", "size": 3}`,
		`"commit": "ccb8241"`,
		`"date": "2025-03-01T12:00:00Z"`,
		`"slo_compliance": 0.997`,
		`{"name": "actor/layer0/weight", "shape": [6, 4]}`,
	} {
		if !bytes.Contains(header, []byte(want)) {
			t.Errorf("header lacks %q:\n%s", want, header)
		}
	}
}

func TestLoadRefusesADifferentObservationLayout(t *testing.T) {
	p := trainedPolicy(t, false)
	var buf bytes.Buffer
	if err := p.Save(&buf); err != nil {
		t.Fatal(err)
	}
	ckpt := buf.Bytes()
	names := []string{"rps", "p99_over_slo", "free_share", "hour_sin"}
	tests := []struct {
		name string
		code Layout
		want []string
	}{
		{
			"newer version, same features", ScalarLayout("test", 2, names),
			[]string{`checkpoint has "test" v1, running code has "test" v2`, "all 4 features have the same names and sizes"},
		},
		{
			"renamed feature", ScalarLayout("test", 2, []string{"rps", "p99_over_slo", "free_cores", "hour_sin"}),
			[]string{`"test" v1`, `"test" v2`, `first differing feature is #2: checkpoint "free_share" (size 1), code "free_cores" (size 1)`},
		},
		{
			"feature added, version not bumped", ScalarLayout("test", 1, append(names[:4:4], "hour_cos")),
			[]string{`first differing feature is #4: checkpoint (none: 4 features), code "hour_cos" (size 1)`},
		},
		{
			"resized feature", Layout{Name: "test", Version: 1, Features: []Feature{{"rps", 3}, {"p99_over_slo", 1}, {"free_share", 1}, {"hour_sin", 1}}},
			[]string{`#0: checkpoint "rps" (size 1), code "rps" (size 3)`},
		},
		{
			"another level's layout", ScalarLayout("soldier", 1, names),
			[]string{`checkpoint has "test" v1, running code has "soldier" v1`},
		},
	}
	for _, tt := range tests {
		_, err := Load(bytes.NewReader(ckpt), tt.code)
		if !errors.Is(err, ErrLayoutMismatch) {
			t.Errorf("%s: error %v, want ErrLayoutMismatch", tt.name, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tt.name, err, w)
			}
		}
	}
}

func TestLoadRejectsDamagedCheckpoints(t *testing.T) {
	p := trainedPolicy(t, true)
	var buf bytes.Buffer
	if err := p.Save(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	hdrEnd := bytes.Index(good, []byte("\nweights ")) + 1
	dataStart := hdrEnd + bytes.IndexByte(good[hdrEnd:], '\n') + 1
	tests := []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"not a checkpoint", func([]byte) []byte { return []byte("hello\n") }, "not a policy checkpoint"},
		{"empty", func([]byte) []byte { return nil }, "not a policy checkpoint"},
		{"flipped weight bit", func(b []byte) []byte { b[dataStart+17] ^= 4; return b }, "CRC-32"},
		{"truncated weights", func(b []byte) []byte { return b[:len(b)-3] }, "unexpected EOF"},
		{"trailing data", func(b []byte) []byte { return append(b, 0) }, "trailing data"},
		{"truncated header", func(b []byte) []byte { return b[:hdrEnd-40] }, `header without a "weights" line`},
		{"newer format", func(b []byte) []byte { return bytes.Replace(b, []byte(`"format": 1`), []byte(`"format": 2`), 1) }, "checkpoint format 2, this code reads format 1"},
		{"tensor list disagrees with the spec", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"name": "log_std"`), []byte(`"name": "log_sd"`), 1)
		}, `tensor #6 is "log_sd [4]", the spec implies "log_std [4]"`},
		{"hidden width edited", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"hidden": [6, 5]`), []byte(`"hidden": [9, 5]`), 1)
		}, "weights line says 107 values, the header's architecture holds 137"},
		{"absurd architecture", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"hidden": [6, 5]`), []byte(`"hidden": [65536, 65536]`), 1)
		}, "weights line says 107 values, the header's architecture holds"},
		{"absurd weights count", func(b []byte) []byte {
			return bytes.Replace(b, []byte("weights 107 "), []byte("weights 999999999999 "), 1)
		}, "more than the 67108864 this code reads"},
	}
	for _, tt := range tests {
		b := tt.damage(bytes.Clone(good))
		_, err := Load(bytes.NewReader(b), p.Spec.Obs)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "load checkpoint: ") {
			t.Errorf("%s: error %v, want \"load checkpoint: ...%s...\"", tt.name, err, tt.want)
		}
	}
}

func TestSaveRefusesNonFiniteMetrics(t *testing.T) {
	p := trainedPolicy(t, false)
	p.Provenance.Metrics["explained_variance"] = math.NaN()
	if err := p.Save(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `metric "explained_variance" is NaN`) {
		t.Errorf("error %v, want one naming the NaN metric", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestSaveReportsWriteErrors(t *testing.T) {
	p := trainedPolicy(t, false)
	if err := p.Save(failingWriter{}); err == nil || err.Error() != "save checkpoint: disk full" {
		t.Errorf("error %v, want \"save checkpoint: disk full\"", err)
	}
}
