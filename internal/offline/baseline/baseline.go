package baseline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// Names lists the reference policies New knows, in report order.
var Names = []string{"hpa", "hpa-priority", "hpa-legacy", "tuned-hpa", HPACalendar, "proportional", "static", "oracle"}

// HPAPriority is the policy that is the HPA in a world where the domains'
// pods carry PriorityClasses by tier: the strong baseline of HPAs, priority
// and preemption, which the seed's author concedes gets 60-70% of the way.
// It changes the world, not the policy: build its simulation from World.
const HPAPriority = "hpa-priority"

// World is the config the named policy runs in: cfg itself for every
// policy but HPAPriority, which gets a copy of cfg with
// Cluster.PriorityClasses set (kube-scheduler orders pending pods by tier
// and preempts lower tiers; see domains.Cluster). Build both the
// simulation and the policy from it.
func World(name string, cfg *domains.Config) *domains.Config {
	if name != HPAPriority || cfg.Cluster.PriorityClasses {
		return cfg
	}
	w := *cfg
	w.Cluster.PriorityClasses = true
	return &w
}

// New builds the named reference policy for simulation s of cfg. Build it
// before stepping s: the static policy and the oracle read s's scenario.
// The simulation of HPAPriority must have PriorityClasses (World).
func New(name string, cfg *domains.Config, s *sim.Sim) (sim.Policy, error) {
	switch name {
	case "hpa":
		return NewHPA(cfg, DefaultHPASettings(cfg)), nil
	case HPAPriority:
		if !s.PriorityClasses() {
			return nil, fmt.Errorf("baseline policy %q: its simulation must be built from baseline.World (priority_classes = true)", name)
		}
		return NewHPA(cfg, DefaultHPASettings(cfg)), nil
	case "hpa-legacy":
		return NewHPA(cfg, LegacyHPASettings(cfg)), nil
	case "tuned-hpa":
		return NewHPA(cfg, TunedHPASettings(cfg)), nil
	case HPACalendar:
		return NewCalendarHPA(cfg, s), nil
	case "proportional":
		return NewProportional(cfg, cfg.Soldier.TargetUtilisation), nil
	case "static":
		return NewStatic(cfg.Apps(), cfg.Soldier.TargetUtilisation, s), nil
	case "oracle":
		return NewOracle(cfg, s), nil
	}
	if rest, ok := strings.CutPrefix(name, "oracle-ahead+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < s.Tick() || d > time.Hour {
			return nil, fmt.Errorf("baseline policy %q: want oracle-ahead+D, D a look-ahead from one tick to 1h (e.g. 3m)", name)
		}
		return NewOracleAhead(cfg, s, int(d/s.Tick())), nil
	}
	if rest, ok := strings.CutPrefix(name, "oracle-hold+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < s.Tick() || d > 24*time.Hour {
			return nil, fmt.Errorf("baseline policy %q: want oracle-hold+D, D how long idle nodes are kept for a need to come, from one tick to 24h (e.g. 1h)", name)
		}
		return NewOracleHold(cfg, s, int(d/s.Tick())), nil
	}
	if q, ok, err := oracleNowQuantile(name); ok {
		if err != nil {
			return nil, err
		}
		return NewOracleNowPerApp(cfg, s, q), nil
	}
	if l, form, ok, err := oracleNowLoad(name); ok {
		switch {
		case err != nil:
			return nil, err
		case form == oracleNowHeldForm:
			return NewOracleNowHeld(cfg, s, l), nil
		case form == oracleSeenForm:
			return NewOracleSeen(cfg, s, l), nil
		}
		return NewOracleNowLoad(cfg, s, l), nil
	}
	if l, ok, err := oracleExpected(name); ok {
		if err != nil {
			return nil, err
		}
		return NewOracleExpected(cfg, s, l), nil
	}
	if h, ok, err := oracleNowHeadroom(name); ok {
		if err != nil {
			return nil, err
		}
		return NewOracleNow(cfg, s, h), nil
	}
	return nil, fmt.Errorf("unknown baseline policy %q (known: %s)", name, strings.Join(Names, ", "))
}

// Known says whether New knows name: one of Names, or the experiments'
// bounds, not in Names: the present-only oracle oracle-now[+P] (P percent
// headroom), the same with its headroom on the load oracle-now-load+P, that
// one writing as a Soldier writes oracle-now-held+P, and seeing the need as
// old as a Soldier's telemetry oracle-seen+P, or
// per app oracle-now-app@Q (each app's own Q-percent quantile of its growth
// over its lead), the short-sighted oracle oracle-ahead+D (D of
// look-ahead), the oracle that holds idle nodes needed again within D,
// oracle-hold+D, and the oracle that foresees the demand without its noise,
// sized for P percent more arrivals, oracle-expected+P.
func Known(name string) bool {
	if slices.Contains(Names, name) {
		return true
	}
	if rest, ok := strings.CutPrefix(name, "oracle-ahead+"); ok {
		d, err := time.ParseDuration(rest)
		return err == nil && d > 0 && d <= time.Hour
	}
	if rest, ok := strings.CutPrefix(name, "oracle-hold+"); ok {
		d, err := time.ParseDuration(rest)
		return err == nil && d > 0 && d <= 24*time.Hour
	}
	if _, ok, err := oracleNowQuantile(name); ok {
		return err == nil
	}
	if _, _, ok, err := oracleNowLoad(name); ok {
		return err == nil
	}
	if _, ok, err := oracleExpected(name); ok {
		return err == nil
	}
	_, ok, err := oracleNowHeadroom(name)
	return ok && err == nil
}

// Bounds names the experiments' bounds Known accepts besides Names, for
// messages: the forms, not names to run.
const Bounds = "oracle-now[+P], oracle-now-load+P, oracle-now-held+P, oracle-seen+P, oracle-now-app@Q, oracle-ahead+D, oracle-hold+D, oracle-expected+P"

// Malformed is the error of a name with a bound's prefix that is no bound
// New knows (oracle-expected+x), saying the form it wants; nil for any
// other name.
func Malformed(name string) error {
	if Known(name) {
		return nil
	}
	if strings.HasPrefix(name, "oracle-ahead+") {
		return fmt.Errorf("baseline policy %q: want oracle-ahead+D, D a look-ahead from one tick to 1h (e.g. 3m)", name)
	}
	if strings.HasPrefix(name, "oracle-hold+") {
		return fmt.Errorf("baseline policy %q: want oracle-hold+D, D how long idle nodes are kept for a need to come, from one tick to 24h (e.g. 1h)", name)
	}
	if _, ok, err := oracleNowQuantile(name); ok {
		return err
	}
	if _, _, ok, err := oracleNowLoad(name); ok {
		return err
	}
	if _, ok, err := oracleExpected(name); ok {
		return err
	}
	if _, ok, err := oracleNowHeadroom(name); ok {
		return err
	}
	return nil
}

// oracleNowQuantile parses "oracle-now-app@Q", Q a quantile in percent
// (0, 100) such as 95 or 99.5; ok says name has the prefix.
func oracleNowQuantile(name string) (q float64, ok bool, err error) {
	rest, ok := strings.CutPrefix(name, "oracle-now-app@")
	if !ok {
		return 0, false, nil
	}
	p, perr := strconv.ParseFloat(rest, 64)
	if perr != nil || !(p > 0 && p < 100) {
		return 0, true, fmt.Errorf("baseline policy %q: want oracle-now-app@Q, Q a quantile in percent (0, 100), e.g. 99", name)
	}
	return p / 100, true, nil
}

// The present-only load bounds' forms: the bound, the same writing as a
// Soldier writes, and that one seeing what a Soldier sees.
const (
	oracleNowLoadForm = "oracle-now-load"
	oracleNowHeldForm = "oracle-now-held"
	oracleSeenForm    = "oracle-seen"
)

// oracleNowLoad parses FORM+P for the present-only load bounds' forms, P
// percent more arrivals (0, 1000]; ok says name has one of their prefixes.
func oracleNowLoad(name string) (load float64, form string, ok bool, err error) {
	var rest string
	for _, form = range []string{oracleNowLoadForm, oracleNowHeldForm, oracleSeenForm} {
		if rest, ok = strings.CutPrefix(name, form+"+"); ok {
			break
		}
	}
	if !ok {
		return 0, "", false, nil
	}
	n, perr := strconv.Atoi(rest)
	if perr != nil || n <= 0 || n > 1000 {
		return 0, form, true, fmt.Errorf("baseline policy %q: want %s+P, P percent more arrivals in (0, 1000]", name, form)
	}
	return float64(n) / 100, form, true, nil
}

// oracleExpected parses "oracle-expected+P", P percent more arrivals
// [0, 1000]; ok says name has the prefix.
func oracleExpected(name string) (load float64, ok bool, err error) {
	rest, ok := strings.CutPrefix(name, "oracle-expected+")
	if !ok {
		return 0, false, nil
	}
	n, perr := strconv.Atoi(rest)
	if perr != nil || n < 0 || n > 1000 {
		return 0, true, fmt.Errorf("baseline policy %q: want oracle-expected+P, P percent more arrivals in [0, 1000]", name)
	}
	return float64(n) / 100, true, nil
}

// oracleNowHeadroom parses "oracle-now" (headroom 0) and "oracle-now+P"
// (P percent, [0, 1000]); ok says name has the prefix.
func oracleNowHeadroom(name string) (headroom float64, ok bool, err error) {
	rest, ok := strings.CutPrefix(name, "oracle-now")
	if !ok || rest == "" {
		return 0, ok, nil
	}
	n, perr := strconv.Atoi(strings.TrimPrefix(rest, "+"))
	if perr != nil || !strings.HasPrefix(rest, "+") || n < 0 || n > 1000 {
		return 0, true, fmt.Errorf("baseline policy %q: want oracle-now or oracle-now+P, P a headroom in percent [0, 1000]", name)
	}
	return float64(n) / 100, true, nil
}
