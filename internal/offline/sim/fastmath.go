package sim

import "math"

// smallLog1p is the bound under which log1p6 stands for log(1 + x).
const smallLog1p = 1e-3

// log1p6 is log(1 + x) for |x| < smallLog1p: its series to x^6, truncation
// under 1.5e-19 relative. Inlined, it costs a fraction of math.Log (an
// assembly call on amd64), and it is more accurate near 0, where
// math.Log(1 + x) rounds 1 + x first. Callers take log1p for larger x.
func log1p6(x float64) float64 {
	return x * (1 - x*(1.0/2-x*(1.0/3-x*(1.0/4-x*(1.0/5-x*(1.0/6))))))
}

// log1p is log(1 + x): log1p6 for |x| < smallLog1p, its series to x^9 for
// |x| < 1e-2 (truncation under 1.1e-17 relative), else math.Log(1 + x).
// TestLog1pAccuracy pins its error.
func log1p(x float64) float64 {
	switch ax := math.Abs(x); {
	case ax < smallLog1p:
		return log1p6(x)
	case ax < 1e-2:
		return x * (1 - x*(1.0/2-x*(1.0/3-x*(1.0/4-x*(1.0/5-x*(1.0/6-x*(1.0/7-x*(1.0/8-x*(1.0/9)))))))))
	}
	return math.Log(1 + x)
}
