package rl

// The batched forward pass keeps a block's activations lane-major: value j
// of the block's input r is x[j*batchRows+r], so that the batchRows inputs'
// values j are adjacent (one 256-bit vector of four float64).

// rows4Go sets, for every row i of w (row-major, len(b) rows of nin, len(b)
// a multiple of 4) and every lane r < batchRows,
//
//	y[i*batchRows+r] = b[i] + sum_j w[i*nin+j] x[j*batchRows+r]
//
// summing j in order from 0, as dot4 does: the same bits as Forward. It is
// rows4's portable form and its reference.
func rows4Go(w, x, b, y []float64, nin int) {
	x = x[:nin*batchRows]
	for i := range b {
		wi := w[i*nin : (i+1)*nin]
		var s0, s1, s2, s3 float64
		for j, a := range wi {
			xj := x[j*batchRows : j*batchRows+4]
			s0 += a * xj[0]
			s1 += a * xj[1]
			s2 += a * xj[2]
			s3 += a * xj[3]
		}
		yi := y[i*batchRows : i*batchRows+4]
		yi[0], yi[1], yi[2], yi[3] = b[i]+s0, b[i]+s1, b[i]+s2, b[i]+s3
	}
}

// dotLane returns dot(w, x_r) for lane r of the lane-major block x, summed
// in dot's order (four interleaved partial sums, the tail into the first,
// then (s0 + s1) + (s2 + s3)): the same bits as Forward's dot.
func dotLane(w, x []float64, r int) float64 {
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(w); j += 4 {
		s0 += w[j] * x[j*batchRows+r]
		s1 += w[j+1] * x[(j+1)*batchRows+r]
		s2 += w[j+2] * x[(j+2)*batchRows+r]
		s3 += w[j+3] * x[(j+3)*batchRows+r]
	}
	for ; j < len(w); j++ {
		s0 += w[j] * x[j*batchRows+r]
	}
	return (s0 + s1) + (s2 + s3)
}
