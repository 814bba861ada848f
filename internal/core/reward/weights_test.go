package reward

import (
	"math"
	"strings"
	"testing"
)

func TestDefaultWeightsAreValid(t *testing.T) {
	for name, err := range map[string]error{
		"commander": DefaultCommanderWeights().Validate(),
		"soldier":   DefaultSoldierWeights().Validate(),
		"service":   DefaultServiceWeights().Validate(),
	} {
		if err != nil {
			t.Errorf("%s defaults: %v", name, err)
		}
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := DefaultCommanderWeights()
	c.Cost, c.Churn, c.FloorMargin = -1, math.NaN(), 0
	s := DefaultSoldierWeights()
	s.Alignment, s.UtilisationTarget = math.Inf(1), 1.2
	v := DefaultServiceWeights()
	v.Action, v.ErrorThreshold = -0.05, 1
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"commander", c.Validate(), []string{"weight cost = -1", "weight churn = NaN", "floor_margin = 0"}},
		{"soldier", s.Validate(), []string{"weight alignment = +Inf", "utilisation_target = 1.2"}},
		{"service", v.Validate(), []string{"weight action = -0.05", "error_threshold = 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("no error")
			}
			msg := tc.err.Error()
			if got := strings.Count(msg, "\n") + 1; got != len(tc.want) {
				t.Errorf("%d problems, want %d:\n%s", got, len(tc.want), msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("missing %q in:\n%s", w, msg)
				}
			}
		})
	}
}
