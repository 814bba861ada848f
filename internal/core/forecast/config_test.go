package forecast

import (
	"strings"
	"testing"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	d := Config{}.WithDefaults()
	if err := d.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	if d.BaseAlpha != 1.0/1440 {
		t.Errorf("BaseAlpha = %v, want Step/Period = 1/1440", d.BaseAlpha)
	}
	if got := (Config{Step: 10 * time.Second}).WithDefaults().BaseAlpha; got != 1.0/8640 {
		t.Errorf("BaseAlpha with a 10s step = %v, want 1/8640", got)
	}
	if got := (Config{Residuals: 30}).WithDefaults().MinResiduals; got != 30 {
		t.Errorf("MinResiduals with 30 residuals = %v, want 30 (clipped)", got)
	}
	set := Config{Alpha: 0.5, Horizons: [NumHorizons]time.Duration{0, time.Hour, 0}}.WithDefaults()
	if set.Alpha != 0.5 || set.Horizons != [NumHorizons]time.Duration{5 * time.Minute, time.Hour, 30 * time.Minute} {
		t.Errorf("WithDefaults overwrote set fields: alpha %v horizons %v", set.Alpha, set.Horizons)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string // substrings of the error; none for a valid config
	}{
		{"zero config is valid", Config{}, nil},
		{"a 10-second step is valid", Config{Step: 10 * time.Second}, nil},
		{"step must be whole seconds", Config{Step: 1500 * time.Millisecond}, []string{"step 1.5s"}},
		{"step must be positive", Config{Step: -time.Minute}, []string{"step -1m0s"}},
		{"period must be a multiple of step", Config{Period: 24*time.Hour + 30*time.Second}, []string{"multiple of step"}},
		{"period needs a step per slice", Config{Period: 5 * time.Minute, Horizons: [NumHorizons]time.Duration{time.Minute, time.Minute, time.Minute}}, []string{"between 6 and"}},
		{"season window must fit the period", Config{Period: time.Hour, SeasonWindow: 30}, []string{"season window 30"}},
		{"horizons are multiples of step", Config{Horizons: [NumHorizons]time.Duration{90 * time.Second, 0, 0}}, []string{"horizon 0 (1m30s)"}},
		{"horizons are at most a period", Config{Period: time.Hour}, nil},
		{"horizon over a period", Config{Period: 6 * time.Minute}, []string{"horizon 1 (15m0s)", "horizon 2 (30m0s)"}},
		{"weights are in (0, 1]", Config{Alpha: 1.5, Beta: -0.1, Gamma: 2, Phi: 1.01, BaseAlpha: -1, SmoothingAlpha: 3, SmoothingBeta: 7},
			[]string{"alpha 1.5", "beta -0.1", "gamma 2", "phi 1.01", "base alpha -1", "smoothing alpha 3", "smoothing beta 7"}},
		{"residual windows are bounded", Config{Residuals: -1, SmoothingResiduals: 1 << 17}, []string{"residuals -1", "smoothing residuals 131072"}},
		{"min residuals at most residuals", Config{Residuals: 10, MinResiduals: 11}, []string{"min residuals 11"}},
		{"offset is positive", Config{Offset: -1}, []string{"offset -1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want an error mentioning %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q, does not mention %q", err, w)
				}
			}
		})
	}
}

func TestNewPanicsOnInvalidConfig(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(error).Error(), "alpha 2") {
			t.Errorf("recovered %v, want the Validate error", r)
		}
	}()
	New(Config{Alpha: 2})
}
