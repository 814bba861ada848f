package rl

import (
	"fmt"
	"math"
	"testing"
)

func TestNetworkGradientMatchesFiniteDifferences(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int
		acts  []Activation
	}{
		{"tanh hidden layers", []int{5, 7, 6, 3}, []Activation{Tanh, Tanh, Identity}},
		{"relu hidden layers", []int{4, 9, 8, 2}, []Activation{ReLU, ReLU, Identity}},
		{"single linear layer", []int{3, 2}, []Activation{Identity}},
		{"tanh output", []int{3, 4, 2}, []Activation{ReLU, Tanh}},
		{"mixed, wide input", []int{13, 5, 5, 5, 1}, []Activation{Tanh, ReLU, Identity, Identity}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := seeded(t, uint64(100+i))
			n := NewNetwork(tt.sizes, tt.acts)
			randomize(n.Params(), 0.7, r) // nonzero biases too
			in := make([]float64, n.In())
			randomize(in, 1, r)
			c := make([]float64, n.Out()) // L = sum_k c_k y_k
			randomize(c, 1, r)
			tape := n.NewTape()
			loss := func() float64 { return dot(c, n.Forward(tape, in)) }

			grad := make([]float64, n.NumParams())
			dIn := make([]float64, n.In())
			n.Forward(tape, in)
			n.Backward(tape, c, grad, dIn)
			checkGradient(t, "weights", n.Params(), grad, loss, 1e-7)
			checkGradient(t, "input", in, dIn, loss, 1e-7)
		})
	}
}

func TestBackwardAccumulatesIntoGrad(t *testing.T) {
	r := seeded(t, 7)
	n := NewNetwork([]int{3, 4, 2}, []Activation{Tanh, Identity})
	n.Init(r, 1, 1)
	in := []float64{0.1, -0.4, 0.9}
	dOut := []float64{1, -2}
	tape := n.NewTape()
	once := make([]float64, n.NumParams())
	n.Forward(tape, in)
	n.Backward(tape, dOut, once, nil)
	twice := make([]float64, n.NumParams())
	n.Backward(tape, dOut, twice, nil)
	n.Backward(tape, dOut, twice, nil)
	for i := range once {
		if math.Abs(twice[i]-2*once[i]) > 1e-15 {
			t.Fatalf("grad[%d]: two backward passes give %v, want 2 x %v", i, twice[i], once[i])
		}
	}
}

func TestInitIsScaledOrthogonal(t *testing.T) {
	r := seeded(t, 3)
	for _, shape := range [][2]int{{4, 7}, {7, 4}, {5, 5}} {
		rows, cols := shape[0], shape[1]
		w := make([]float64, rows*cols)
		const gain = 1.5
		orthogonal(w, rows, cols, gain, r)
		// rows <= cols: W W^T = gain^2 I; rows > cols: W^T W = gain^2 I.
		k, m := rows, cols
		at := func(i, j int) float64 { return w[i*cols+j] }
		if rows > cols {
			k, m = cols, rows
			at = func(i, j int) float64 { return w[j*cols+i] }
		}
		for i := range k {
			for j := range k {
				var s float64
				for l := range m {
					s += at(i, l) * at(j, l)
				}
				want := 0.0
				if i == j {
					want = gain * gain
				}
				if math.Abs(s-want) > 1e-12 {
					t.Errorf("%dx%d: Gram matrix [%d,%d] = %v, want %v", rows, cols, i, j, s, want)
				}
			}
		}
	}
}

func TestForwardBackwardDoNotAllocate(t *testing.T) {
	r := seeded(t, 1)
	n := NewNetwork([]int{120, 64, 64, 10}, []Activation{Tanh, Tanh, Identity})
	n.Init(r, math.Sqrt2, 1)
	tape := n.NewTape()
	in := make([]float64, 120)
	randomize(in, 1, r)
	dOut := make([]float64, 10)
	randomize(dOut, 1, r)
	grad := make([]float64, n.NumParams())
	dIn := make([]float64, 120)
	allocs := testing.AllocsPerRun(100, func() {
		n.Forward(tape, in)
		n.Backward(tape, dOut, grad, dIn)
	})
	if allocs != 0 {
		t.Errorf("forward+backward allocates %v times per run, want 0", allocs)
	}
}

func TestActivationText(t *testing.T) {
	for _, a := range []Activation{Identity, Tanh, ReLU} {
		b, err := a.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Activation
		if err := back.UnmarshalText(b); err != nil || back != a {
			t.Errorf("%v: round trip gives %v, %v", a, back, err)
		}
	}
	if _, err := ParseActivation("sigmoid"); err == nil {
		t.Error("ParseActivation(sigmoid) succeeded, want an error")
	}
}

func TestForwardBatch(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int
		acts  []Activation
		batch int
	}{
		{"learned soldier's actor, 500 groups", []int{26, 32, 32, 3}, []Activation{Tanh, Tanh, Identity}, 500},
		{"batch not divisible by the block", []int{26, 32, 32, 3}, []Activation{Tanh, Tanh, Identity}, 7},
		{"batch of one", []int{26, 32, 32, 3}, []Activation{Tanh, Tanh, Identity}, 1},
		{"empty batch", []int{5, 4, 2}, []Activation{Tanh, Identity}, 0},
		{"one-row layers", []int{1, 1, 1}, []Activation{Tanh, Identity}, 5},
		{"odd widths and a one-row output", []int{7, 5, 9, 1}, []Activation{ReLU, Tanh, Identity}, 6},
		{"widths 4k+2 and 4k+3", []int{6, 10, 11, 3}, []Activation{Tanh, ReLU, Tanh}, 9},
		{"single linear layer", []int{3, 8}, []Activation{Identity}, 4},
		{"commander-sized", []int{120, 64, 64, 10}, []Activation{Tanh, Tanh, Identity}, 13},
	}
	for _, avx := range avxPaths() {
		for i, tt := range tests {
			t.Run(fmt.Sprintf("%s/avx=%v", tt.name, avx), func(t *testing.T) {
				defer setAVX(avx)()
				forwardBatchCase(t, uint64(200+i), tt.sizes, tt.acts, tt.batch)
			})
		}
	}
}

// avxPaths is the rows4 paths the machine can run: the portable one, and
// AVX where the CPU has it.
func avxPaths() []bool {
	if useAVX {
		return []bool{false, true}
	}
	return []bool{false}
}

// setAVX selects rows4's path and returns the function that restores it.
func setAVX(on bool) (restore func()) {
	was := useAVX
	useAVX = on
	return func() { useAVX = was }
}

// forwardBatchCase checks ForwardBatch against Forward, bit for bit, on a
// random network and batch.
func forwardBatchCase(t *testing.T, seed uint64, sizes []int, acts []Activation, batch int) {
	r := seeded(t, seed)
	n := NewNetwork(sizes, acts)
	randomize(n.Params(), 0.7, r)
	in, out := make([][]float64, batch), make([][]float64, batch)
	for k := range in {
		in[k], out[k] = make([]float64, n.In()), make([]float64, n.Out())
		randomize(in[k], 2, r)
	}
	tape := n.NewTape()
	// Forward's record must survive a ForwardBatch in between.
	probe := make([]float64, n.In())
	randomize(probe, 1, r)
	before := append([]float64(nil), n.Forward(tape, probe)...)
	n.ForwardBatch(tape, in, out)
	if got := tape.Output(); !equalBits(got, before) {
		t.Fatalf("ForwardBatch changed Forward's output on the tape: %v, was %v", got, before)
	}
	single := n.NewTape()
	for k := range in {
		want := n.Forward(single, in[k])
		if !equalBits(out[k], want) {
			t.Fatalf("input %d: ForwardBatch %v, Forward %v", k, out[k], want)
		}
	}
}

func TestRows4AVXMatchesRows4Go(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX on this CPU")
	}
	r := seeded(t, 11)
	for _, nin := range []int{1, 2, 3, 26, 32, 33} {
		for _, nrows := range []int{4, 8, 32} {
			w, b := make([]float64, nrows*nin), make([]float64, nrows)
			x := make([]float64, nin*batchRows)
			randomize(w, 1, r)
			randomize(b, 1, r)
			randomize(x, 3, r)
			// IEEE corner cases must come out the same way.
			x[0], w[len(w)-1] = math.Copysign(0, -1), math.Inf(1)
			if len(x) > 5 {
				x[5] = math.NaN()
			}
			got, want := make([]float64, nrows*batchRows), make([]float64, nrows*batchRows)
			rows4(w, x, b, got, nin)
			rows4Go(w, x, b, want, nin)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
					t.Fatalf("nin %d, rows %d: y[%d] = %v (AVX), %v (Go)", nin, nrows, i, got[i], want[i])
				}
			}
		}
	}
}

func TestForwardBatchPanicsOnMisfits(t *testing.T) {
	n := NewNetwork([]int{3, 4, 2}, []Activation{Tanh, Identity})
	other := NewNetwork([]int{3, 5, 2}, []Activation{Tanh, Identity})
	row := func(k int) []float64 { return make([]float64, k) }
	for _, tc := range []struct {
		name    string
		tape    *Tape
		in, out [][]float64
	}{
		{"more inputs than outputs", n.NewTape(), [][]float64{row(3), row(3)}, [][]float64{row(2)}},
		{"an input of the wrong size", n.NewTape(), [][]float64{row(3), row(4)}, [][]float64{row(2), row(2)}},
		{"an output of the wrong size", n.NewTape(), [][]float64{row(3)}, [][]float64{row(3)}},
		{"a tape of another network", other.NewTape(), [][]float64{row(3)}, [][]float64{row(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("ForwardBatch did not panic")
				}
			}()
			n.ForwardBatch(tc.tape, tc.in, tc.out)
		})
	}
}

func TestForwardBatchDoesNotAllocate(t *testing.T) {
	r := seeded(t, 9)
	n := NewNetwork([]int{26, 32, 32, 3}, []Activation{Tanh, Tanh, Identity})
	n.Init(r, math.Sqrt2, 1)
	in, out := make([][]float64, 50), make([][]float64, 50)
	for k := range in {
		in[k], out[k] = make([]float64, n.In()), make([]float64, n.Out())
		randomize(in[k], 1, r)
	}
	tape := n.NewTape()
	if a := testing.AllocsPerRun(10, func() { n.ForwardBatch(tape, in, out) }); a != 0 {
		t.Fatalf("ForwardBatch allocates %v times per call", a)
	}
}

// equalBits reports whether a and b hold the same float64 bit patterns.
func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
