package sim

import "math"

// log1pSmall is log(1 + x), by its series to x^9 for |x| < 1e-2 (truncation
// under 1.1e-17 relative), else math.Log(1 + x). The series is about a third
// of math.Log's cost (an assembly call on amd64), and near 0 more accurate:
// math.Log(1 + x) rounds 1 + x first. TestLog1pSmallAccuracy pins its error.
func log1pSmall(x float64) float64 {
	if !(math.Abs(x) < 1e-2) {
		return math.Log(1 + x)
	}
	return x * (1 - x*(1.0/2-x*(1.0/3-x*(1.0/4-x*(1.0/5-x*(1.0/6-x*(1.0/7-x*(1.0/8-x*(1.0/9)))))))))
}
