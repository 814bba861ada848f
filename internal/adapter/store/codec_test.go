package store

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestAppendStepMatchesEncodingJSON pins the hand-written encoder to
// encoding/json byte for byte, on seeded random steps with awkward floats
// and strings.
func TestAppendStepMatchesEncodingJSON(t *testing.T) {
	const seed = 7
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 1e-7, -1e-7, 1e-6, 1e20, 1e21, 1.5e300, -2.5e-300, math.SmallestNonzeroFloat64, math.MaxFloat64, 0.1, 1.0 / 3}
	strs := []string{"", "share", "replicas/checkout-3", `quo"te\back`, "tab\tnl\ncr\r", "<&>", "\x00\x1f\x7f", "héllo 世界", "bad\xffutf8", "line\u2028sep\u2029", "emoji 🚀"}
	pickF := func() float64 {
		if rng.IntN(3) == 0 {
			return floats[rng.IntN(len(floats))]
		}
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
	}
	pickS := func() string { return strs[rng.IntN(len(strs))] }
	randMap := func() map[string]float64 {
		n := rng.IntN(4)
		if n == 0 {
			return nil
		}
		m := map[string]float64{}
		for range n {
			m[pickS()] = pickF()
		}
		return m
	}
	var keys []string
	for i := range 2000 {
		st := Step{
			Seq:     rng.Uint64(),
			At:      time.Unix(0, rng.Int64N(math.MaxInt64)).In(time.FixedZone("x", 3600*(rng.IntN(5)-2))),
			Action:  randMap(),
			Reward:  randMap(),
			Outcome: randMap(),
		}
		if rng.IntN(5) > 0 {
			st.Obs = make([]float64, rng.IntN(6))
			for j := range st.Obs {
				st.Obs[j] = pickF()
			}
		}
		for range rng.IntN(3) {
			st.Guards = append(st.Guards, Guard{Name: pickS(), Target: pickS(), Before: pickF(), After: pickF(), Reason: pickS()})
		}
		want, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		got, keys = appendStep(nil, &st, keys)
		if !bytes.Equal(got, want) {
			t.Fatalf("step %d:\n got %s\nwant %s", i, got, want)
		}
		back, err := decodeStep("ep", got)
		if err != nil {
			t.Fatal(err)
		}
		st.Episode = "ep"
		if !back.At.Equal(st.At) || back.Seq != st.Seq || !reflect.DeepEqual(back.Obs, st.Obs) {
			t.Fatalf("step %d did not survive a round trip: %+v", i, back)
		}
	}
}
