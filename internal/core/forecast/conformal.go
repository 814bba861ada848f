package forecast

import "math"

// residuals is a calibration set: the last cap(ring) signed residuals
// x - xhat of one model at one horizon (and, for the seasonal model, one
// time-of-day slice), kept both in arrival order (to evict the oldest) and
// sorted (to read quantiles in O(1)). Adding costs two binary searches and a
// memmove of at most cap elements; nothing allocates after New.
type residuals struct {
	ring   []float64 // arrival order; while filling, ring[:len(sorted)]; once full, ring[next] is the oldest
	sorted []float64 // the same values, ascending; len is the count held
	next   int
}

// newResiduals carves a calibration set of capacity n out of buf, which must
// hold 2n values.
func newResiduals(buf []float64, n int) residuals {
	return residuals{ring: buf[:n:n], sorted: buf[n : n : 2*n]}
}

func (r *residuals) len() int { return len(r.sorted) }

// add records residual v, evicting the oldest when full. When full, the
// values between the evicted one's position and v's move by one place, in a
// single memmove.
func (r *residuals) add(v float64) {
	n := len(r.sorted)
	if n < len(r.ring) {
		r.ring[n] = v
		j := search(r.sorted, v)
		r.sorted = r.sorted[:n+1] // within capacity
		copy(r.sorted[j+1:], r.sorted[j:n])
		r.sorted[j] = v
		return
	}
	old := r.ring[r.next]
	r.ring[r.next] = v
	r.next++
	if r.next == n {
		r.next = 0
	}
	i, j := search(r.sorted, old), search(r.sorted, v) // sorted[i] == old
	if j > i {
		copy(r.sorted[i:j-1], r.sorted[i+1:j])
		r.sorted[j-1] = v
	} else {
		copy(r.sorted[j+1:i+1], r.sorted[j:i])
		r.sorted[j] = v
	}
}

// search returns the first index i of the ascending s with s[i] >= v, or
// len(s).
func search(s []float64, v float64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s[mid] < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// reset forgets every residual.
func (r *residuals) reset() {
	r.sorted = r.sorted[:0]
	r.next = 0
}

// quantile returns the split-conformal quantile of level q in (0, 1) of the
// held residuals, or 0 when there are none. With n residuals sorted
// r_(1) <= ... <= r_(n), an upper quantile (q >= 0.5) is r_(k) with
// k = ceil((n+1)*q) and a lower one r_(k) with k = floor((n+1)*q), k clipped
// to [1, n]. If the residuals and the next one are exchangeable,
// P(next <= r_(ceil((n+1)q))) >= q and P(next < r_(floor((n+1)q))) <= q
// (V. Vovk, A. Gammerman, G. Shafer, "Algorithmic Learning in a Random
// World", Springer 2005; J. Lei et al., "Distribution-Free Predictive
// Inference for Regression", JASA 113, 2018, section 2.2). Applying it per
// time-of-day slice is Mondrian conformal prediction (Vovk et al. 2005,
// section 4.5): the guarantee then holds within each slice.
func (r *residuals) quantile(q float64) float64 {
	n := len(r.sorted)
	if n == 0 {
		return 0
	}
	var k int
	if q >= 0.5 {
		k = int(math.Ceil(float64(n+1) * q))
	} else {
		k = int(math.Floor(float64(n+1) * q))
	}
	k = min(max(k, 1), n)
	return r.sorted[k-1]
}
