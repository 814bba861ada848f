package rl

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Network is a fully connected multilayer perceptron:
//
//	a_0 = x
//	a_{l+1} = f_l(W_l a_l + b_l),  l = 0 .. L-1
//
// with W_l of shape Sizes[l+1] x Sizes[l]. Its parameters are one flat
// slice, layer by layer, W_l row-major followed by b_l. A Network holds only
// parameters; the activations of one forward pass live in a Tape, so one
// Network can serve several tapes (one per goroutine).
type Network struct {
	sizes  []int
	acts   []Activation
	params []float64
	offs   []int // offs[l] is the offset of W_l in params; offs[L] = len(params)
}

// NumParams returns the number of parameters of an MLP with the given layer
// sizes (input first, output last).
func NumParams(sizes []int) int {
	n := 0
	for l := 0; l+1 < len(sizes); l++ {
		n += sizes[l+1]*sizes[l] + sizes[l+1]
	}
	return n
}

// NewNetwork returns a network with layer sizes sizes (input first, output
// last) and acts[l] after layer l, with all parameters zero (see Init). It
// panics unless len(acts) == len(sizes)-1 >= 1 and every size is positive.
func NewNetwork(sizes []int, acts []Activation) *Network {
	return newNetworkOn(sizes, acts, make([]float64, NumParams(sizes)))
}

// newNetworkOn builds a network whose parameters are the slice params, which
// must have NumParams(sizes) elements.
func newNetworkOn(sizes []int, acts []Activation, params []float64) *Network {
	if len(sizes) < 2 || len(acts) != len(sizes)-1 {
		panic(fmt.Sprintf("rl: network with %d sizes needs %d activations, have %d", len(sizes), len(sizes)-1, len(acts)))
	}
	for _, s := range sizes {
		if s <= 0 {
			panic(fmt.Sprintf("rl: network layer size %d", s))
		}
	}
	if len(params) != NumParams(sizes) {
		panic(fmt.Sprintf("rl: network needs %d parameters, have %d", NumParams(sizes), len(params)))
	}
	n := &Network{
		sizes:  append([]int(nil), sizes...),
		acts:   append([]Activation(nil), acts...),
		params: params,
		offs:   make([]int, len(sizes)),
	}
	off := 0
	for l := 0; l+1 < len(sizes); l++ {
		n.offs[l] = off
		off += sizes[l+1]*sizes[l] + sizes[l+1]
	}
	n.offs[len(sizes)-1] = off
	return n
}

// Sizes returns the layer sizes, input first. The caller must not modify it.
func (n *Network) Sizes() []int { return n.sizes }

// Activations returns the activation after each layer. The caller must not
// modify it.
func (n *Network) Activations() []Activation { return n.acts }

// In returns the input size.
func (n *Network) In() int { return n.sizes[0] }

// Out returns the output size.
func (n *Network) Out() int { return n.sizes[len(n.sizes)-1] }

// NumParams returns the number of parameters.
func (n *Network) NumParams() int { return len(n.params) }

// Params returns the parameters (a view, not a copy).
func (n *Network) Params() []float64 { return n.params }

// Layer returns views of layer l's weights (row-major, Sizes[l+1] x
// Sizes[l]) and biases within p, which is the network's parameters or a
// vector laid out like them (a gradient).
func (n *Network) Layer(p []float64, l int) (w, b []float64) {
	o := n.offs[l]
	nw := n.sizes[l+1] * n.sizes[l]
	return p[o : o+nw], p[o+nw : n.offs[l+1]]
}

// Init sets the weights to scaled random orthogonal matrices (Saxe,
// McClelland and Ganguli 2014), gain hiddenGain for the hidden layers and
// outputGain for the last, and the biases to 0. Orthogonal initialisation
// with gain sqrt(2) for hidden layers, 0.01 for the policy's output and 1
// for the value's is the common PPO choice (Andrychowicz et al. 2021, "What
// matters in on-policy reinforcement learning?", sections 3.2 and 4.1).
func (n *Network) Init(r *rand.Rand, hiddenGain, outputGain float64) {
	last := len(n.acts) - 1
	for l := range n.acts {
		w, b := n.Layer(n.params, l)
		g := hiddenGain
		if l == last {
			g = outputGain
		}
		orthogonal(w, n.sizes[l+1], n.sizes[l], g, r)
		clear(b)
	}
}

// orthogonal fills the rows x cols row-major matrix w with gain times a
// random matrix with orthonormal rows (rows <= cols) or columns (rows >
// cols): Gram-Schmidt, applied twice for numerical orthogonality, to
// standard normal vectors.
func orthogonal(w []float64, rows, cols int, gain float64, r *rand.Rand) {
	k, m := rows, cols // k vectors of length m
	if rows > cols {
		k, m = cols, rows
	}
	v := make([]float64, k*m)
	for i := range k {
		vi := v[i*m : (i+1)*m]
		for {
			for j := range vi {
				vi[j] = r.NormFloat64()
			}
			for range 2 {
				for j := range i {
					vj := v[j*m : (j+1)*m]
					axpy(-dot(vi, vj), vj, vi)
				}
			}
			norm := math.Sqrt(dot(vi, vi))
			if norm > 1e-8 {
				for j := range vi {
					vi[j] /= norm
				}
				break
			}
		}
	}
	for i := range rows {
		for j := range cols {
			if rows <= cols {
				w[i*cols+j] = gain * v[i*m+j]
			} else {
				w[i*cols+j] = gain * v[j*m+i]
			}
		}
	}
}

// Tape holds the activations of one forward pass, for the backward pass
// that follows it. Make one with Network.NewTape; it fits only networks of
// the same sizes.
//
// A Tape also holds the activations of one block of ForwardBatch
// (batchRows inputs), apart from Forward's, so a ForwardBatch between a
// Forward and its Backward does not disturb them.
type Tape struct {
	a   [][]float64 // a[0] is a copy of the input, a[l+1] the output of layer l
	d0  []float64   // backward deltas, widest layer
	d1  []float64
	blk [][]float64 // ForwardBatch: blk[l] holds Sizes[l] x batchRows values, lane-major (see rows4Go)
	sd  []float64   // Policy.LatentMeans: the normaliser's standard deviation per input
}

// NewTape returns a tape for n's sizes.
func (n *Network) NewTape() *Tape {
	t := &Tape{a: make([][]float64, len(n.sizes)), blk: make([][]float64, len(n.sizes)), sd: make([]float64, n.sizes[0])}
	w := 0
	for l, s := range n.sizes {
		t.a[l] = make([]float64, s)
		t.blk[l] = make([]float64, batchRows*s)
		w = max(w, s)
	}
	t.d0 = make([]float64, w)
	t.d1 = make([]float64, w)
	return t
}

// Output returns the output of the last forward pass recorded on t.
func (t *Tape) Output() []float64 { return t.a[len(t.a)-1] }

// Forward computes the network's output for in, records the activations on
// t and returns the output, a slice of t valid until t's next Forward. It
// panics if len(in) != n.In().
func (n *Network) Forward(t *Tape, in []float64) []float64 {
	if len(in) != n.sizes[0] {
		panic(fmt.Sprintf("rl: network input has %d values, want %d", len(in), n.sizes[0]))
	}
	copy(t.a[0], in)
	for l, f := range n.acts {
		w, b := n.Layer(n.params, l)
		x, y := t.a[l], t.a[l+1]
		nin := len(x)
		// y_i = b_i + sum_j W_ij x_j, four rows at a time
		i := 0
		for ; i+4 <= len(y); i += 4 {
			s0, s1, s2, s3 := dot4(w[i*nin:(i+4)*nin], x)
			y[i], y[i+1], y[i+2], y[i+3] = b[i]+s0, b[i+1]+s1, b[i+2]+s2, b[i+3]+s3
		}
		for ; i < len(y); i++ {
			y[i] = b[i] + dot(w[i*nin:(i+1)*nin], x)
		}
		f.apply(y)
	}
	return t.a[len(t.a)-1]
}

// Backward back-propagates dOut = dL/d(output) through the forward pass
// recorded on t (Rumelhart, Hinton and Williams 1986). It adds dL/dtheta to
// grad (laid out like Params, len NumParams) and, when dIn is not nil,
// overwrites dIn with dL/d(input). With delta_l = dL/d(W_l a_l + b_l):
//
//	delta_{L-1} = dOut (.) f'_{L-1}
//	dL/dW_l     = delta_l a_l^T
//	dL/db_l     = delta_l
//	delta_{l-1} = (W_l^T delta_l) (.) f'_{l-1}
//	dL/dx       = W_0^T delta_0
func (n *Network) Backward(t *Tape, dOut, grad, dIn []float64) {
	nl := len(n.acts)
	if len(dOut) != n.Out() || len(grad) != len(n.params) {
		panic(fmt.Sprintf("rl: backward with %d output and %d parameter gradients, want %d and %d", len(dOut), len(grad), n.Out(), len(n.params)))
	}
	delta := t.d0[:len(dOut)]
	copy(delta, dOut)
	n.acts[nl-1].chain(t.a[nl], delta)
	spare := t.d1
	for l := nl - 1; l >= 0; l-- {
		w, _ := n.Layer(n.params, l)
		gw, gb := n.Layer(grad, l)
		x := t.a[l]
		nin := len(x)
		for i, di := range delta {
			if di == 0 {
				continue
			}
			axpy(di, x, gw[i*nin:(i+1)*nin])
			gb[i] += di
		}
		if l == 0 && dIn == nil {
			return
		}
		var prev []float64
		if l == 0 {
			if len(dIn) != nin {
				panic(fmt.Sprintf("rl: backward input gradient has %d values, want %d", len(dIn), nin))
			}
			prev = dIn
		} else {
			prev = spare[:nin]
		}
		// prev = W^T delta, four rows at a time
		clear(prev)
		i := 0
		for ; i+4 <= len(delta); i += 4 {
			axpy4(delta[i:i+4], w[i*nin:(i+4)*nin], prev)
		}
		for ; i < len(delta); i++ {
			axpy(delta[i], w[i*nin:(i+1)*nin], prev)
		}
		if l == 0 {
			return
		}
		n.acts[l-1].chain(t.a[l], prev)
		spare = delta[:cap(delta)]
		delta = prev
	}
}

// dot returns sum_i x_i y_i; len(y) >= len(x).
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	for len(x) >= 4 && len(y) >= 4 {
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		x, y = x[4:], y[4:]
	}
	for i, xi := range x {
		s0 += xi * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dot4 returns the dot products of x with the four rows of w (4 x len(x),
// row-major), reading x once.
func dot4(w, x []float64) (s0, s1, s2, s3 float64) {
	n := len(x)
	w0, w1, w2, w3 := w[:n], w[n:][:n], w[2*n:][:n], w[3*n:][:n]
	for j, xj := range x {
		s0 += w0[j] * xj
		s1 += w1[j] * xj
		s2 += w2[j] * xj
		s3 += w3[j] * xj
	}
	return s0, s1, s2, s3
}

// axpy4 sets y += sum_r a_r w_r for the four rows w_r of w (4 x len(y),
// row-major), reading and writing y once.
func axpy4(a, w, y []float64) {
	n := len(y)
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	w0, w1, w2, w3 := w[:n], w[n:][:n], w[2*n:][:n], w[3*n:][:n]
	for j := range y {
		y[j] += a0*w0[j] + a1*w1[j] + a2*w2[j] + a3*w3[j]
	}
}

// axpy sets y += alpha x; len(y) >= len(x).
func axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for len(x) >= 4 && len(y) >= 4 {
		y[0] += alpha * x[0]
		y[1] += alpha * x[1]
		y[2] += alpha * x[2]
		y[3] += alpha * x[3]
		x, y = x[4:], y[4:]
	}
	for i, xi := range x {
		y[i] += alpha * xi
	}
}

// batchRows is the number of inputs ForwardBatch carries through the layers
// together: one 256-bit vector of float64.
const batchRows = 4

// ForwardBatch computes the network's output for every input in[r] into
// out[r], as Forward would, bit for bit. It panics unless len(out) ==
// len(in), every len(in[r]) == In() and every len(out[r]) == Out(). It does
// not allocate and leaves Forward's record on t alone (t's block scratch is
// its own).
//
// It runs the inputs through the layers batchRows at a time, lane-major
// (see rows4Go): each layer of a block is the matrix product Y = W X + b,
// and on amd64 with AVX one vector instruction multiplies or adds a weight
// into all four inputs' sums. Every sum keeps Forward's order of terms and
// uses no fused multiply-add, hence the bit-identical result.
func (n *Network) ForwardBatch(t *Tape, in, out [][]float64) {
	n.forwardBatch(t, in, out, n.Out(), nil)
}

// scaling is an input transform applied as a batch is loaded: (v - mean[i])
// / sd[i], then clipped to [-clip, clip] when clip > 0.
type scaling struct {
	mean, sd []float64
	clip     float64
}

// forwardBatch is ForwardBatch with each input value scaled by s first (nil:
// as is), keeping the first nout outputs (<= Out) of each input.
func (n *Network) forwardBatch(t *Tape, in, out [][]float64, nout int, s *scaling) {
	if len(in) != len(out) {
		panic(fmt.Sprintf("rl: batch of %d inputs and %d outputs", len(in), len(out)))
	}
	n.checkBlock(t)
	nin := n.In()
	for r0 := 0; r0 < len(in); r0 += batchRows {
		rows := min(batchRows, len(in)-r0)
		x := t.blk[0]
		if rows < batchRows {
			clear(x) // a short last block: zero lanes, results unused
		}
		for r := range rows {
			if len(in[r0+r]) != nin {
				panic(fmt.Sprintf("rl: network input %d has %d values, want %d", r0+r, len(in[r0+r]), nin))
			}
			for j, v := range in[r0+r] {
				if s != nil {
					v = (v - s.mean[j]) / s.sd[j]
					if s.clip > 0 {
						v = min(max(v, -s.clip), s.clip)
					}
				}
				x[j*batchRows+r] = v
			}
		}
		y := n.forwardBlock(t)
		for r := range rows {
			o := out[r0+r]
			if len(o) != nout {
				panic(fmt.Sprintf("rl: network output %d has %d values, want %d", r0+r, len(o), nout))
			}
			for i := range o {
				o[i] = y[i*batchRows+r]
			}
		}
	}
}

// checkBlock panics unless t's block scratch fits n's sizes.
func (n *Network) checkBlock(t *Tape) {
	ok := len(t.blk) == len(n.sizes)
	for l := 0; ok && l < len(n.sizes); l++ {
		ok = len(t.blk[l]) == batchRows*n.sizes[l]
	}
	if !ok {
		panic(fmt.Sprintf("rl: tape does not fit a network of sizes %v", n.sizes))
	}
}

// forwardBlock runs the batchRows inputs in t.blk[0] (lane-major) through
// the network and returns the outputs, t.blk[L] (lane-major, Out x
// batchRows).
//
// The rows Forward computes with dot4 (the first Out - Out%4 of a layer) go
// to rows4; the rest to dotLane, in dot's order, as Forward does.
func (n *Network) forwardBlock(t *Tape) []float64 {
	for l, f := range n.acts {
		w, b := n.Layer(n.params, l)
		nin, nout := n.sizes[l], n.sizes[l+1]
		x, y := t.blk[l], t.blk[l+1]
		n4 := nout &^ 3
		rows4(w[:n4*nin], x, b[:n4], y[:n4*batchRows], nin)
		for i := n4; i < nout; i++ {
			wi := w[i*nin : (i+1)*nin]
			for r := range batchRows {
				y[i*batchRows+r] = b[i] + dotLane(wi, x, r)
			}
		}
		f.apply(y)
	}
	return t.blk[len(t.blk)-1]
}
