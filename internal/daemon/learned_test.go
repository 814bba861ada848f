package daemon

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/core/soldier"
)

// A learned service time is logged when first learned and when it moves by
// a quarter or more, not every tick.
func TestLearnedServiceTimeIsLoggedWhenItMoves(t *testing.T) {
	var out bytes.Buffer
	p := &SoldierProcess{log: hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Info})}
	for _, st := range []float64{0, 0.010, 0.011, 0.012, 0.0125, 0.013, 0.020} {
		p.learnedTimes([]soldier.LearnedApp{{App: "shop/cart", ServiceTime: st, Startup: 12, Samples: 6}})
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "service time learned: app=shop/cart service_time=10ms startup=12s samples=6") ||
		!strings.Contains(lines[1], "service_time=12.5ms") || !strings.Contains(lines[2], "service_time=20ms") {
		t.Errorf("want 10ms, 12.5ms (a quarter above 10ms) and 20ms logged, nothing before learning:\n%s", out.String())
	}
}
