package forecast

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkObserveForecast is one Commander tick for one domain: an
// observation, then a forecast, on a seeded noisy daily sine. "fallback"
// runs within the first day; "seasonal" after three days, with full
// calibration rings of the given size per slice and horizon.
func BenchmarkObserveForecast(b *testing.B) {
	series := sine(rand.New(rand.NewPCG(1, 1)), 4)
	b.Run("fallback", func(b *testing.B) {
		const from, to = 300, 1400 // stay within the first day
		f := New(Config{})
		feed(f, series[:from])
		i := from
		b.ReportAllocs()
		for b.Loop() {
			if i == to {
				b.StopTimer()
				f.Reset()
				feed(f, series[:from])
				i = from
				b.StartTimer()
			}
			f.Observe(minute(i), series[i])
			_ = f.Forecast(minute(i))
			i++
		}
	})
	for _, residuals := range []int{240, 720, 4096} {
		b.Run(fmt.Sprintf("seasonal/residuals=%d", residuals), func(b *testing.B) {
			f := New(Config{Residuals: residuals})
			feed(f, series[:3*1440])
			i := 3 * 1440
			b.ReportAllocs()
			for b.Loop() {
				f.Observe(minute(i), series[i%len(series)])
				_ = f.Forecast(minute(i))
				i++
			}
		})
	}
}

// BenchmarkEvaluateDay replays one day of minutes through EvaluateConfig.
func BenchmarkEvaluateDay(b *testing.B) {
	series := sine(rand.New(rand.NewPCG(1, 1)), 1)
	b.ReportAllocs()
	for b.Loop() {
		EvaluateConfig(Config{}, series, epoch, 60)
	}
}
