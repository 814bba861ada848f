package baseline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/offline/sim"
)

func TestRegistry(t *testing.T) {
	t.Run("names are in report order", func(t *testing.T) {
		if got := fmt.Sprint(Names); got != "[hpa hpa-priority hpa-legacy tuned-hpa hpa-calendar proportional static oracle]" {
			t.Fatalf("Names = %s", got)
		}
	})
	t.Run("every name builds a policy", func(t *testing.T) {
		cfg, sc, traces := smallSample(t)
		for _, name := range Names {
			cfg := World(name, cfg)
			s, err := sim.New(cfg, sc, traces)
			if err != nil {
				t.Fatal(err)
			}
			p, err := New(name, cfg, s)
			if err != nil || p == nil {
				t.Fatalf("New(%q) = %v, %v", name, p, err)
			}
		}
	})
	t.Run("an unknown name is an error that lists the known", func(t *testing.T) {
		cfg, sc, traces := smallSample(t)
		s, err := sim.New(cfg, sc, traces)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New("hpa2", cfg, s); err == nil || !strings.Contains(err.Error(), "tuned-hpa") {
			t.Fatalf("New(hpa2) error %v, want one listing the known names", err)
		}
	})
}
