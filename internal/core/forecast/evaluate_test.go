package forecast

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestEvaluateConstant(t *testing.T) {
	series := make([]float64, 600)
	for i := range series {
		series[i] = 50
	}
	rep := Evaluate(series, time.Minute, epoch, 100)
	// Forecasts issued at steps 100..599-h are scored: 500-h per horizon.
	for h, sc := range rep.Horizon {
		n := 500 - int(rep.Horizons[h]/time.Minute)
		if sc.N != n || sc.MAPEN != n {
			t.Errorf("+%v: %d scored, %d in MAPE; want %d", rep.Horizons[h], sc.N, sc.MAPEN, n)
		}
		if sc.Exceed80 != 0 || sc.Coverage != 1 || sc.MAPE > 1e-12 {
			t.Errorf("+%v: exceed %v coverage %v MAPE %v; want 0, 1, 0", rep.Horizons[h], sc.Exceed80, sc.Coverage, sc.MAPE)
		}
	}
	// Minutes 0-599 from midnight: targets in slices 0 (0-4h), 1 and 2.
	var bySlice int
	for _, sc := range rep.Slice {
		bySlice += sc.N
	}
	if rep.Overall.N != 3*500-5-15-30 || bySlice != rep.Overall.N || rep.Slice[3].N != 0 {
		t.Errorf("overall %d, sum over slices %d, slice 3 %d; want %d, %d, 0", rep.Overall.N, bySlice, rep.Slice[3].N, 3*500-50, 3*500-50)
	}
	if rep.MAPEFloor != 1 {
		t.Errorf("MAPE floor %v, want max(1, 1%% of 50) = 1", rep.MAPEFloor)
	}
}

// Actuals below max(1, 1% of the mean scored actual) do not count in MAPE.
func TestEvaluateMAPEFloor(t *testing.T) {
	series := make([]float64, 300)
	for i := range series {
		series[i] = 1000
		if i%10 == 0 {
			series[i] = 5 // below 1% of the mean, about 900
		}
	}
	rep := Evaluate(series, time.Minute, epoch, 0)
	if rep.MAPEFloor < 8 || rep.MAPEFloor > 10 {
		t.Errorf("MAPE floor %v, want 1%% of the mean (about 9)", rep.MAPEFloor)
	}
	for h, sc := range rep.Horizon {
		if skipped := sc.N - sc.MAPEN; skipped != sc.N/10 && skipped != sc.N/10+1 {
			t.Errorf("+%v: %d of %d skipped in MAPE, want every tenth", rep.Horizons[h], skipped, sc.N)
		}
	}
}

func TestEvaluateShortSeries(t *testing.T) {
	for _, n := range []int{0, 1, 30} {
		rep := Evaluate(make([]float64, n), time.Minute, epoch, 0)
		if n <= 5 && rep.Overall.N != 0 {
			t.Errorf("%d steps: %d scored, want 0", n, rep.Overall.N)
		}
		if rep.Overall.Exceed80 != 0 || rep.Overall.MAPE != 0 {
			t.Errorf("%d zeros: exceed %v MAPE %v, want 0", n, rep.Overall.Exceed80, rep.Overall.MAPE)
		}
	}
}

func TestReportString(t *testing.T) {
	rep := Evaluate(make([]float64, 100), time.Minute, epoch, 10)
	s := rep.String()
	for _, want := range []string{"100 steps, 10 warm-up", ">p80", "p10-p90", "MAPE", "0-4h", "20h-24h", "+5m", "+15m", "+30m", "overall"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
}

func TestFmtDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0", 10 * time.Second: "10s", 90 * time.Second: "1m30s", 15 * time.Minute: "15m",
		4 * time.Hour: "4h", 4*time.Hour + 30*time.Minute: "4h30m", 20 * time.Hour: "20h",
	} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// persistenceMAPE is the MAPE of the naive forecast y[i+h] = y[i] over the
// targets Evaluate scores for forecasts issued from step warmup on, with the
// same floor.
func persistenceMAPE(y []float64, warmup, h int, floor float64) float64 {
	var sum float64
	var n int
	for i := warmup; i+h < len(y); i++ {
		if a := y[i+h]; a >= floor {
			sum += math.Abs(y[i]-a) / a
			n++
		}
	}
	return sum / float64(n)
}

// NaiveMAPE is persistence's MAPE over the very forecasts MAPE scores.
func TestNaiveMAPEIsPersistence(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	series := make([]float64, 3000)
	for i := range series {
		series[i] = 100 + 60*math.Sin(2*math.Pi*float64(i)/1440) + 10*r.NormFloat64()
		if i%97 == 0 {
			series[i] = 0.2 // under the MAPE floor
		}
	}
	const warmup = 200
	rep := Evaluate(series, time.Minute, epoch, warmup)
	for h, sc := range rep.Horizon {
		want := persistenceMAPE(series, warmup, int(rep.Horizons[h]/time.Minute), rep.MAPEFloor)
		if math.Abs(sc.NaiveMAPE-want) > 1e-12 || sc.NaiveMAPE == 0 {
			t.Errorf("+%v: naive MAPE %v, persistence %v", rep.Horizons[h], sc.NaiveMAPE, want)
		}
	}
}
