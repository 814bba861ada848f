package daemon

import (
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/soldier"
)

// learnedTimes logs, at Info, the service time the Soldier learned of an
// app whose config sets none (soldier.LearnedApp) when it is first learned
// and when it moves by a quarter or more from the value last logged: not
// every tick. The values are in every step (`regiment episodes why`).
func (p *SoldierProcess) learnedTimes(learned []soldier.LearnedApp) {
	for _, l := range learned {
		if l.ServiceTime <= 0 {
			continue
		}
		last, ok := p.learned[l.App]
		if ok && math.Abs(l.ServiceTime-last) < 0.25*last {
			continue
		}
		if p.learned == nil {
			p.learned = map[string]float64{}
		}
		p.learned[l.App] = l.ServiceTime
		p.log.Info("service time learned", "app", l.App, "service_time", seconds(l.ServiceTime),
			"startup", seconds(l.Startup), "samples", l.Samples)
	}
}

// seconds is s seconds as a rounded duration, "0s" when unknown.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(10 * time.Microsecond)
}
