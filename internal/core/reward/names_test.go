package reward

import "testing"

func TestEveryNamedWeightSetsItsField(t *testing.T) {
	c := CommanderWeights{}
	for i, n := range CommanderWeightNames {
		if err := c.Set(n, float64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if c != (CommanderWeights{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("commander weights %+v", c)
	}
	s := SoldierWeights{}
	for i, n := range SoldierWeightNames {
		if err := s.Set(n, float64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if s != (SoldierWeights{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("soldier weights %+v", s)
	}
	v := ServiceWeights{}
	for i, n := range ServiceWeightNames {
		if err := v.Set(n, float64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if v != (ServiceWeights{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("service weights %+v", v)
	}
	if err := c.Set("nope", 1); err == nil {
		t.Fatal("an unknown weight was accepted")
	}
}
