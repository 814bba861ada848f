package forecast

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// repoTraces is the repository's folder of real traces (traces/README.md),
// relative to this package's directory (the test's working directory).
var repoTraces = filepath.Join("..", "..", "..", "traces")

var (
	worldcupPath = filepath.Join(repoTraces, "worldcup98", "worldcup98_days01-60_per_minute.csv.gz")
	azurePath    = filepath.Join(repoTraces, "azure-functions-2019", "sampleA_1350fn_invocations.csv.gz")
)

// readTrace reads a shipped trace; the traces are part of the repository, so
// a missing one fails the test.
func readTrace(tb testing.TB, path string, format domains.TraceFormat) []trace.Series {
	tb.Helper()
	s, err := trace.ReadFile(path, format)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// WorldCup98: 40 days of warm-up (the quiet weeks before the tournament),
// then the 20 days from 9 June, with the group stage's match-time surges. P80
// must be exceeded 20% +- 5 of the time, overall and in every 4-hour slice,
// and the 15-minute P50 must beat persistence.
func TestWorldCup98(t *testing.T) {
	s := readTrace(t, worldcupPath, domains.FormatTimeseries)[0]
	const warmup = 40 * 1440
	rep := Evaluate(s.Values, time.Minute, s.Start, warmup)
	naive := rep.Horizon[1].NaiveMAPE
	t.Logf("WorldCup98 days 41-60 after 40 days of warm-up\n%v", rep)
	t.Logf("15-min MAPE %.2f%%, persistence %.2f%%", 100*rep.Horizon[1].MAPE, 100*naive)
	if e := rep.Overall.Exceed80; e < 0.15 || e > 0.25 {
		t.Errorf("P80 exceeded %.1f%% of the time, want 20%% +- 5", 100*e)
	}
	for i, sc := range rep.Slice {
		if sc.Exceed80 < 0.15 || sc.Exceed80 > 0.25 {
			t.Errorf("slice %d: P80 exceeded %.1f%% of the time, want 20%% +- 5", i, 100*sc.Exceed80)
		}
	}
	if rep.Seasonal < 0.99 {
		t.Errorf("seasonal model made %.1f%% of the forecasts, want all after 40 days", 100*rep.Seasonal)
	}
	if m := rep.Horizon[1].MAPE; m >= naive {
		t.Errorf("15-min MAPE %.2f%% does not beat persistence %.2f%%", 100*m, 100*naive)
	}
}

// Azure Functions 2019: the sum of all 1,350 functions per minute over the
// trace's one day. With less than a day of history the fallback makes every
// forecast; its P80 must still be calibrated overall.
func TestAzureFunctionsAggregate(t *testing.T) {
	series := readTrace(t, azurePath, domains.FormatAzureFunctions)
	agg := make([]float64, len(series[0].Values))
	for _, s := range series {
		for i, v := range s.Values {
			agg[i] += v
		}
	}
	const warmup = 120
	rep := Evaluate(agg, time.Minute, series[0].Start, warmup)
	naive := rep.Horizon[1].NaiveMAPE
	t.Logf("Azure Functions aggregate, one day, 2 hours of warm-up\n%v", rep)
	t.Logf("15-min MAPE %.2f%%, persistence %.2f%%", 100*rep.Horizon[1].MAPE, 100*naive)
	if rep.Seasonal != 0 {
		t.Errorf("seasonal model made %.1f%% of the forecasts, want none within one day", 100*rep.Seasonal)
	}
	if e := rep.Overall.Exceed80; e < 0.15 || e > 0.25 {
		t.Errorf("P80 exceeded %.1f%% of the time, want 20%% +- 5", 100*e)
	}
}
