package stats

import (
	"cmp"
	"math"
	"slices"
)

// Percentile reorders xs and returns its q-quantile (nearest rank): the
// value of a domain report's CPUUtilP75 and RPSP95.
func Percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return Kth(xs, NearestRank(len(xs), q))
}

// NearestRank is the index, counting from 0, of the q-quantile of n > 0
// sorted values by nearest rank.
func NearestRank(n int, q float64) int { return min(n-1, int(math.Ceil(q*float64(n)))-1) }

// NearKth is Percentile for a series of slices whose quantile moves little
// from one to the next, as a domain's utilisation p75 from tick to tick:
// one pass counts the values below a window around the last quantile and
// gathers those within it; when the quantile's rank falls within, it is
// selected among the few gathered, else among all as Percentile does.
// Either way it is the same value: the k-th smallest of the slice. The
// window's half-width doubles after a miss and halves while it gathers
// more than nearKthMany values. The zero value is ready.
type NearKth struct {
	last, halfWidth float64 // the last quantile, when known; the window's half-width
	known           bool
	buf             []float64 // the values gathered
}

// NewNearKth is a NearKth whose buffer holds n values: it does not allocate
// for slices of up to n.
func NewNearKth(n int) NearKth { return NearKth{buf: make([]float64, n)} }

// nearKthMany is how many values a window gathers before it narrows.
const nearKthMany = 24

// Percentile is Percentile(xs, q), reordering xs or not.
func (w *NearKth) Percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	k := NearestRank(len(xs), q)
	if w.known {
		if len(w.buf) < len(xs) {
			w.buf = make([]float64, len(xs))
		}
		lo, hi := w.last-w.halfWidth, w.last+w.halfWidth
		below, in, nan := 0, 0, false
		buf := w.buf[:len(xs)]
		for _, x := range xs {
			nan = nan || x != x
			below += b2i(x < lo)
			buf[in] = x
			in += b2i(lo <= x && x <= hi)
		}
		if !nan && below <= k && k < below+in {
			v := Kth(buf[:in], k-below)
			if v == 0 {
				v = Kth(xs, k) // the sign Percentile's zero has (see below)
			}
			if in > nearKthMany {
				w.halfWidth /= 2
			}
			w.last = v
			return v
		}
		w.halfWidth *= 2
		if !nan {
			// The rank fell outside the window: select among the values on
			// its side only. Zeros of both signs compare equal, and which one
			// a selection returns depends on the values it partitions: a
			// zero is selected again among all, here as in the window.
			side, j := 0, k
			if k < below {
				for _, x := range xs {
					buf[side] = x
					side += b2i(x < lo)
				}
			} else {
				for _, x := range xs {
					buf[side] = x
					side += b2i(x > hi)
				}
				j = k - below - in
			}
			if v := Kth(buf[:side], j); v != 0 {
				return w.missed(v)
			}
		}
	}
	return w.missed(Kth(xs, k))
}

// missed notes v, the quantile selected outside the window (or with no
// window yet), and returns it.
func (w *NearKth) missed(v float64) float64 {
	if !w.known || !(w.halfWidth > 0) || math.IsInf(w.halfWidth, 0) {
		w.halfWidth = max(0.01*math.Abs(v), 1e-9)
	}
	w.last, w.known = v, !math.IsNaN(v) && !math.IsInf(v, 0)
	return v
}

// b2i is 1 for true, 0 for false: the compiler makes it a flag, no branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// InsertSorted inserts x into xs, sorted in cmp.Compare's order (NaNs
// first), and returns it; it does not allocate while len(xs) < cap(xs).
func InsertSorted(xs []float64, x float64) []float64 {
	i, _ := slices.BinarySearch(xs, x)
	return slices.Insert(xs, i, x)
}

// DeleteSorted removes one value equal to x in cmp.Compare's order from xs,
// sorted in that order, and returns it; xs must hold one.
func DeleteSorted(xs []float64, x float64) []float64 {
	i, _ := slices.BinarySearch(xs, x)
	return slices.Delete(xs, i, i+1)
}

// Kth is the k-th smallest of xs, counting from 0, in cmp.Compare's order:
// the xs[k] sorting xs would give. It reorders xs. Quickselect with a
// three-way partition, so runs of equal values cost nothing extra: expected
// O(len(xs)), where sorting a domain's 500 utilisations every tick was a
// tenth of a seed-scale tick.
func Kth(xs []float64, k int) float64 {
	for _, x := range xs {
		if x != x {
			return kthNaN(xs, k)
		}
	}
	// Without NaNs, cmp.Compare is < and >: the same partitions, cheaper.
	for len(xs) > 16 {
		a, b, c := xs[0], xs[len(xs)/2], xs[len(xs)-1]
		if b < a {
			a, b = b, a
		}
		if c < b {
			b = c
			if c < a {
				b = a
			}
		}
		pivot := b
		lt, i, gt := 0, 0, len(xs)
		for i < gt {
			switch x := xs[i]; {
			case x < pivot:
				xs[lt], xs[i] = x, xs[lt]
				lt++
				i++
			case x > pivot:
				gt--
				xs[i], xs[gt] = xs[gt], x
			default:
				i++
			}
		}
		switch {
		case k < lt:
			xs = xs[:lt]
		case k >= gt:
			xs, k = xs[gt:], k-gt
		default:
			return xs[k]
		}
	}
	slices.Sort(xs)
	return xs[k]
}

// kthNaN is Kth for xs holding NaNs, which cmp.Compare orders first.
func kthNaN(xs []float64, k int) float64 {
	for len(xs) > 16 {
		a, b, c := xs[0], xs[len(xs)/2], xs[len(xs)-1]
		if cmp.Less(b, a) {
			a, b = b, a
		}
		if cmp.Less(c, b) {
			b = c
			if cmp.Less(c, a) {
				b = a
			}
		}
		pivot := b // the median of the first, middle and last
		// xs[:lt] < pivot, xs[lt:i] == pivot, xs[gt:] > pivot.
		lt, i, gt := 0, 0, len(xs)
		for i < gt {
			switch cmp.Compare(xs[i], pivot) {
			case -1:
				xs[lt], xs[i] = xs[i], xs[lt]
				lt++
				i++
			case 1:
				gt--
				xs[i], xs[gt] = xs[gt], xs[i]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			xs = xs[:lt]
		case k >= gt:
			xs, k = xs[gt:], k-gt
		default:
			return xs[k]
		}
	}
	slices.Sort(xs)
	return xs[k]
}
