package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/infile"
)

// LoadScenarioFile reads, decodes and validates the scenario at path against
// cfg. See ParseScenario.
func LoadScenarioFile(path string, cfg *domains.Config) (*domains.Scenario, error) {
	return loadScenario(path, cfg, 0)
}

// maxExtends bounds a chain of scenarios extending each other (and so cycles).
const maxExtends = 8

func loadScenario(path string, cfg *domains.Config, depth int) (*domains.Scenario, error) {
	src, err := ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	return parseScenario(src, path, cfg, depth)
}

// ParseScenario decodes and validates a scenario; filename names it in
// diagnostics, and relative trace paths resolve against its directory (the
// resolved path is stored in Traffic.Trace). Every trace file must exist.
// Traffic and event references to domains and app sets are checked against
// cfg unless cfg is nil. Defaults are applied to the returned scenario. If
// anything is wrong it returns a nil scenario and a Diagnostics error listing
// every problem.
//
// A scenario may extend another (extends = "diurnal.hcl", relative to its own
// file): it starts from the base's start, duration, seed, noise, traffic and
// events; its own settings override the base's, its traffic blocks replace
// the base's for the same domain, and its events are added to the base's.
func ParseScenario(src []byte, filename string, cfg *domains.Config) (*domains.Scenario, error) {
	return parseScenario(src, filename, cfg, 0)
}

func parseScenario(src []byte, filename string, cfg *domains.Config, depth int) (*domains.Scenario, error) {
	var ds Diagnostics
	body, ok := parseHCL(src, filename, &ds)
	if !ok {
		return nil, ds.err()
	}
	var h scenarioFileHCL
	decodeBody(body, body.MissingItemRange(), "the scenario file", &h, &ds)
	s := h.Scenario.translate(filepath.Dir(filename))
	s.Defaults()
	if h.Scenario.Def != (hcl.Range{}) {
		validateScenario(s, &h.Scenario, cfg, &ds)
	}
	if ext := h.Scenario.Extends; ext.ok() && ds.err() == nil {
		path := ext.V
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(filename), path)
		}
		if depth >= maxExtends {
			ds.add(ext.Range, "Invalid extends", "more than %d scenarios extend each other; is there a cycle?", maxExtends)
			return nil, ds.err()
		}
		base, err := loadScenario(path, cfg, depth+1)
		if err != nil {
			ds.add(ext.Range, "Invalid extends", "the base scenario %q does not load: %v", ext.V, firstLine(err))
			return nil, ds.err()
		}
		extend(s, &h.Scenario, base)
		checkExtendedWarmup(s, &h.Scenario, &ds)
	}
	if err := ds.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// extend lays s, decoded from h, over base.
func extend(s *domains.Scenario, h *scenarioHCL, base *domains.Scenario) {
	if !h.Start.Set {
		s.Start = base.Start
	}
	if !h.Duration.Set {
		s.Duration = base.Duration
	}
	if !h.Seed.Set {
		s.Seed = base.Seed
	}
	if !h.Noise.Set {
		s.Noise = base.Noise
	}
	// Traffic structure and warm-up (issue 31, traffic).
	if !h.ArrivalNoise.Set {
		s.ArrivalNoise = base.ArrivalNoise
	}
	if !h.Warmup.Set {
		s.Warmup = base.Warmup
	}
	traffic := append([]domains.Traffic(nil), base.Traffic...)
	for _, t := range s.Traffic {
		replaced := false
		for i := range traffic {
			if traffic[i].Domain == t.Domain {
				traffic[i], replaced = t, true
			}
		}
		if !replaced {
			traffic = append(traffic, t)
		}
	}
	s.Traffic = traffic
	s.Events = append(append([]domains.Event(nil), base.Events...), s.Events...)
}

// checkExtendedWarmup reports an extended scenario whose duration is within
// the warm-up it inherits (traffic structure, issue 31): no tick would be
// accounted.
func checkExtendedWarmup(s *domains.Scenario, h *scenarioHCL, ds *Diagnostics) {
	if h.Warmup.Set || s.Duration <= 0 || s.Warmup < s.Duration {
		return
	}
	r := h.Def
	if h.Duration.Set {
		r = h.Duration.Range
	}
	ds.add(r, "Invalid duration", "the duration %s must be longer than the warm-up %s this scenario extends, or no tick is accounted", s.Duration, s.Warmup)
}

func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		return msg[:i] + " (and more)"
	}
	return msg
}

// scenarioFileHCL is a decoded scenario file: exactly one scenario block.
type scenarioFileHCL struct {
	Scenario scenarioHCL
}

func (f *scenarioFileHCL) children() []child {
	return []child{
		{typ: "scenario", label: "name", once: true, required: true,
			example: `scenario "worldcup" { duration = "72h" ... }`,
			open:    func(def hcl.Range, l label) node { f.Scenario.Def, f.Scenario.Name = def, l; return &f.Scenario }},
	}
}

type scenarioHCL struct {
	Def      hcl.Range
	Name     label
	Extends  stringAttr   `hcl:"extends"`
	Start    timeAttr     `hcl:"start"`
	Duration durationAttr `hcl:"duration"`
	Seed     intAttr      `hcl:"seed"`
	Noise    numberAttr   `hcl:"noise"`
	// Traffic structure and warm-up (issue 31, traffic).
	ArrivalNoise stringAttr   `hcl:"arrival_noise"`
	Warmup       durationAttr `hcl:"warmup"`

	Traffic []*trafficHCL
	Events  []*eventHCL
}

func (s *scenarioHCL) children() []child {
	return []child{
		{typ: "traffic", label: "domain",
			example: `traffic "payment" { trace = "traces/x.csv" ... }`,
			open: func(def hcl.Range, l label) node {
				t := &trafficHCL{Def: def, Domain: l}
				s.Traffic = append(s.Traffic, t)
				return t
			}},
		{typ: "event", label: "kind",
			example: `event "flash-sale" { domain = "payment" ... }`,
			open: func(def hcl.Range, l label) node {
				e := &eventHCL{Def: def, Kind: l}
				s.Events = append(s.Events, e)
				return e
			}},
	}
}

// translate builds the plain scenario, without defaults, resolving trace paths
// against dir. Traffic and events keep file order.
func (s *scenarioHCL) translate(dir string) *domains.Scenario {
	out := &domains.Scenario{
		Name:     s.Name.V,
		Start:    s.Start.V,
		Duration: s.Duration.V,
		Noise:    s.Noise.V,
		// Traffic structure and warm-up (issue 31, traffic).
		ArrivalNoise: domains.ArrivalNoise(s.ArrivalNoise.V),
		Warmup:       s.Warmup.V,
	}
	if s.Seed.V > 0 {
		out.Seed = uint64(s.Seed.V)
	}
	for _, t := range s.Traffic {
		trace := t.Trace.V
		if trace != "" && !filepath.IsAbs(trace) {
			trace = filepath.Join(dir, trace)
		}
		out.Traffic = append(out.Traffic, domains.Traffic{
			Domain:         t.Domain.V,
			Trace:          trace,
			Format:         domains.TraceFormat(t.Format.V),
			PeakRPS:        t.PeakRPS.V,
			PeakRPSOf:      domains.PeakOf(t.PeakRPSOf.V),
			AppSkew:        t.AppSkew.V,
			EqualShares:    t.AppSkew.ok() && t.AppSkew.V == 0,
			FunctionRows:   domains.Rows(t.FunctionRows.V),
			FunctionOffset: t.FunctionOffset.V,
			FunctionStride: t.FunctionStride.V,
			Functions:      domains.Functions(t.Functions.V),
			// Traffic structure (issue 31, traffic).
			BurstSigma:       t.BurstSigma.V,
			BurstCorrelation: t.BurstCorrelation.V,
			AppOwn:           t.AppOwn.V,
			AppShift:         t.AppShift.V,
		})
	}
	for _, e := range s.Events {
		out.Events = append(out.Events, domains.Event{
			Kind:              domains.EventKind(e.Kind.V),
			Domain:            e.Domain.V,
			App:               e.App.V,
			At:                e.At.V,
			Ramp:              e.Ramp.V,
			Hold:              e.Hold.V,
			Every:             e.Every.V,
			Multiplier:        e.Multiplier.V,
			ServiceTimeFactor: e.ServiceTimeFactor.V,
			Announced:         e.Announced.ok(),
			AnnouncedAt:       e.Announced.V,
		})
	}
	return out
}

type trafficHCL struct {
	Def            hcl.Range
	Domain         label
	Trace          stringAttr `hcl:"trace"`
	Format         stringAttr `hcl:"format"`
	PeakRPS        numberAttr `hcl:"peak_rps"`
	PeakRPSOf      stringAttr `hcl:"peak_rps_of"`
	AppSkew        numberAttr `hcl:"app_skew"`
	FunctionRows   stringAttr `hcl:"function_rows"`
	FunctionOffset intAttr    `hcl:"function_offset"`
	FunctionStride intAttr    `hcl:"function_stride"`
	Functions      stringAttr `hcl:"functions"`
	// Traffic structure (issue 31, traffic).
	BurstSigma       numberAttr   `hcl:"burst_sigma"`
	BurstCorrelation numberAttr   `hcl:"burst_correlation"`
	AppOwn           numberAttr   `hcl:"app_own"`
	AppShift         durationAttr `hcl:"app_shift"`
}

func (t *trafficHCL) children() []child { return nil }

type eventHCL struct {
	Def               hcl.Range
	Kind              label
	Domain            stringAttr   `hcl:"domain"`
	App               stringAttr   `hcl:"app"`
	At                durationAttr `hcl:"at"`
	Ramp              durationAttr `hcl:"ramp"`
	Hold              durationAttr `hcl:"hold"`
	Every             durationAttr `hcl:"every"`
	Multiplier        numberAttr   `hcl:"multiplier"`
	ServiceTimeFactor numberAttr   `hcl:"service_time_factor"`
	// Announced is when the operator's calendar had the event, an offset
	// like at; unset: nobody announced it (domains.Scenario.Planned).
	Announced durationAttr `hcl:"announced"`
}

func (e *eventHCL) children() []child { return nil }

// eventKinds lists, per event kind, the attributes it needs and those that
// belong to other kinds.
var eventKinds = map[domains.EventKind]struct{ need, other []string }{
	domains.EventFlashSale:      {need: []string{"domain", "at", "multiplier", "hold"}, other: []string{"app", "service_time_factor"}},
	domains.EventBatchWindow:    {need: []string{"domain", "at", "multiplier", "hold"}, other: []string{"app", "service_time_factor"}},
	domains.EventSlowDependency: {need: []string{"app", "at", "service_time_factor", "hold"}, other: []string{"domain", "multiplier", "announced"}},
}

var (
	eventKindNames = []string{string(domains.EventFlashSale), string(domains.EventBatchWindow), string(domains.EventSlowDependency)}
	formatNames    = []string{string(domains.FormatTimeseries), string(domains.FormatAzureFunctions)}
	peakOfNames    = []string{string(domains.PeakOfTrace), string(domains.PeakOfWindow)}
	rowsNames      = []string{string(domains.RowsAll), string(domains.RowsEven), string(domains.RowsOdd)}
	functionsNames = []string{string(domains.FunctionsOnePerApp), string(domains.FunctionsSummed)}
	// Traffic structure and warm-up (issue 31, traffic).
	arrivalNoiseNames = []string{string(domains.NoiseMultiplicative), string(domains.NoisePoisson)}
	burstSigmas       = interval{lo: 0, hi: domains.MaxBurstSigma}
	burstCorrelations = interval{lo: 0, hi: domains.MaxBurstCorrelation}
	appShifts         = interval{lo: 0, hi: float64(domains.MaxAppShift), loOpen: true}
	appSkews          = interval{lo: 0, hi: domains.MaxAppSkew} // [0, 10]
	// The bounds of package domains (see its MaxScenarioDuration).
	scenarioDurations = interval{lo: 0, hi: float64(domains.MaxScenarioDuration), loOpen: true}
	peakRPSs          = interval{lo: 0, hi: domains.MaxPeakRPS, loOpen: true}
	eventFactors      = interval{lo: 0, hi: domains.MaxEventFactor, loOpen: true}
)

// validateScenario checks s, the translated scenario with defaults applied,
// reporting each problem at its source in h. cfg may be nil.
func validateScenario(s *domains.Scenario, h *scenarioHCL, cfg *domains.Config, ds *Diagnostics) {
	c := checker{ds}
	c.name(h.Name, "scenario")
	if !h.Extends.Set {
		c.required(&h.Duration.attr, `duration = "72h"`)
	}
	c.duration(&h.Duration, s.Duration, scenarioDurations)
	c.integer(&h.Seed, int(s.Seed), nonNegative)
	c.number(&h.Noise, s.Noise, unit)
	// Traffic structure and warm-up (issue 31, traffic).
	c.oneOf(&h.ArrivalNoise, string(s.ArrivalNoise), arrivalNoiseNames)
	c.duration(&h.Warmup, s.Warmup, nonNegative)
	if h.Warmup.ok() && s.Duration > 0 && s.Warmup >= s.Duration {
		ds.add(h.Warmup.Range, "Invalid warmup", "the warm-up %s must be shorter than the scenario's duration %s, or no tick is accounted", s.Warmup, s.Duration)
	}

	var domainNames, setKeys []string
	if cfg != nil {
		for _, d := range cfg.Domains {
			domainNames = append(domainNames, d.Name)
			for _, a := range d.AppSets {
				setKeys = append(setKeys, d.Name+"/"+a.Name)
			}
		}
	}

	first := map[string]*trafficHCL{}
	for i := range s.Traffic {
		t, ht := &s.Traffic[i], h.Traffic[i]
		if f, dup := first[t.Domain]; dup {
			ds.add(ht.Domain.Range, fmt.Sprintf("Duplicate traffic for domain %s", clip(t.Domain)), "a domain takes one traffic block; the first is at line %d", f.Domain.Range.Start.Line)
		} else {
			first[t.Domain] = ht
		}
		if cfg != nil {
			c.ref(ht.Domain.Range, t.Domain, "domain", domainNames)
		}
		c.required(&ht.Trace.attr, `trace = "traces/x.csv"`)
		if ht.Trace.ok() {
			checkTrace(ht.Trace, t.Trace, ds)
		}
		c.required(&ht.Format.attr, `format = "timeseries"`)
		c.oneOf(&ht.Format, string(t.Format), formatNames)
		c.required(&ht.PeakRPS.attr, "peak_rps = 20000")
		c.number(&ht.PeakRPS, t.PeakRPS, peakRPSs)
		c.oneOf(&ht.PeakRPSOf, string(t.PeakRPSOf), peakOfNames)
		// app_skew = 0 is equal shares, not unset: checked raw, not by c.number.
		if ht.AppSkew.ok() && !appSkews.contains(ht.AppSkew.V) {
			ds.add(ht.AppSkew.Range, "Invalid app_skew", "app_skew must be %s (0: equal shares), got %s", appSkews.describe(formatNumber), formatNumber(ht.AppSkew.V))
		}
		c.oneOf(&ht.FunctionRows, string(t.FunctionRows), rowsNames)
		c.integer(&ht.FunctionOffset, t.FunctionOffset, nonNegative)
		c.integer(&ht.FunctionStride, t.FunctionStride, atLeastOne)
		c.oneOf(&ht.Functions, string(t.Functions), functionsNames)
		// Traffic structure (issue 31, traffic).
		c.number(&ht.BurstSigma, t.BurstSigma, burstSigmas)
		c.number(&ht.BurstCorrelation, t.BurstCorrelation, burstCorrelations)
		c.number(&ht.AppOwn, t.AppOwn, unit)
		c.duration(&ht.AppShift, t.AppShift, appShifts)
		if ht.AppShift.ok() && t.AppShift%time.Minute != 0 {
			ds.add(ht.AppShift.Range, "Invalid app_shift", "app_shift is a whole number of minutes (the traces' step), got %s", t.AppShift)
		}
		if own := t.AppOwn > 0 || ht.AppShift.Set; own && t.Format == domains.FormatAzureFunctions && t.Functions != domains.FunctionsSummed {
			a := &ht.AppOwn.attr
			if !a.Set {
				a = &ht.AppShift.attr
			}
			ds.add(a.Range, "Invalid "+a.Name, "%s applies only to a domain-level shape (format \"timeseries\" or functions = \"summed\"); an azure-functions trace otherwise gives each app its own function", a.Name)
		}
		switch t.Format {
		case domains.FormatTimeseries:
			for _, a := range []*attr{&ht.FunctionRows.attr, &ht.FunctionOffset.attr, &ht.FunctionStride.attr, &ht.Functions.attr} {
				if a.Set {
					ds.add(a.Range, "Invalid "+a.Name, "%s applies only to format \"azure-functions\"", a.Name)
				}
			}
		case domains.FormatAzureFunctions:
			if a := &ht.AppSkew.attr; a.Set && t.Functions != domains.FunctionsSummed {
				ds.add(a.Range, "Invalid app_skew", "app_skew applies only to format \"timeseries\" and to functions = \"summed\"; an azure-functions trace otherwise gives each app its own function")
			}
		}
	}

	for i := range s.Events {
		validateEvent(&s.Events[i], h.Events[i], s, cfg != nil, domainNames, setKeys, c)
	}
}

// checkTrace reports a trace file that cannot be read.
func checkTrace(a stringAttr, resolved string, ds *Diagnostics) {
	if a.V == "" {
		ds.add(a.Range, "Invalid trace", "the trace path is empty")
		return
	}
	fi, err := os.Stat(resolved)
	switch {
	case os.IsNotExist(err):
		where := resolved
		if abs, err := filepath.Abs(resolved); err == nil {
			where = abs
		}
		hint := ""
		if _, err := os.Stat(resolved + ".gz"); err == nil {
			hint = fmt.Sprintf("; %q exists: the shipped traces are gzip-compressed", a.V+".gz")
		}
		ds.add(a.Range, "Trace file not found", "%s: looked for %s (relative paths start at the scenario file's directory)%s", clip(a.V), where, hint)
	case err != nil:
		ds.add(a.Range, "Unreadable trace file", "%v", err)
	case !fi.Mode().IsRegular():
		ds.add(a.Range, "Invalid trace", "%q is %s, not a trace file (a trace is a regular file)", resolved, infile.Kind(fi.Mode()))
	}
}

func validateEvent(e *domains.Event, he *eventHCL, s *domains.Scenario, checkRefs bool, domainNames, setKeys []string, c checker) {
	ds := c.ds
	kind, ok := eventKinds[e.Kind]
	if !ok {
		hint := fmt.Sprintf("event kinds are %s", quoteList(eventKindNames))
		if dym := didYouMean(string(e.Kind), eventKindNames); dym != "" {
			hint = dym
		}
		ds.add(he.Kind.Range, fmt.Sprintf("Unknown event kind %s", clip(string(e.Kind))), "%s", hint)
		return
	}
	byName := map[string]*attr{}
	for _, f := range fieldsOf(he) {
		byName[f.name] = f.dst.base()
	}
	for _, n := range kind.need {
		if a := byName[n]; !a.Set {
			ds.add(he.Def, fmt.Sprintf("Missing %s in %s event", n, e.Kind), "a %s event needs %s", e.Kind, strings.Join(kind.need, ", "))
		}
	}
	for _, n := range kind.other {
		if a := byName[n]; a.Set {
			ds.add(a.Range, fmt.Sprintf("Invalid %s in %s event", n, e.Kind), "%s belongs to other event kinds; a %s event takes %s", n, e.Kind, strings.Join(kind.need, ", "))
		}
	}
	if checkRefs && he.Domain.ok() {
		c.ref(he.Domain.Range, e.Domain, "domain", domainNames)
	}
	if checkRefs && he.App.ok() {
		c.ref(he.App.Range, e.App, "app set", setKeys)
	}
	c.duration(&he.At, e.At, nonNegative)
	if he.At.ok() && s.Duration > 0 && e.At >= s.Duration {
		ds.add(he.At.Range, "Invalid at", "the event starts at %s, after the scenario's duration %s", e.At, s.Duration)
	}
	c.duration(&he.Ramp, e.Ramp, nonNegative)
	c.duration(&he.Hold, e.Hold, positive)
	c.duration(&he.Every, e.Every, nonNegative)
	if he.Every.ok() && e.Every > 0 && e.Ramp >= 0 && e.Hold > 0 && e.Every <= 2*e.Ramp+e.Hold {
		ds.add(he.Every.Range, "Invalid every", "every %s must be longer than 2 x ramp + hold = %s, or windows overlap", e.Every, 2*e.Ramp+e.Hold)
	}
	c.number(&he.Multiplier, e.Multiplier, eventFactors)
	c.number(&he.ServiceTimeFactor, e.ServiceTimeFactor, eventFactors)
	c.duration(&he.Announced, e.AnnouncedAt, nonNegative)
	if he.Announced.ok() && he.Multiplier.ok() && e.Multiplier <= 1 {
		ds.add(he.Announced.Range, "Invalid announced", "only a rise is planned for: the event's multiplier %g is not above 1", e.Multiplier)
	}
}

// ref reports a reference to a name not among names.
func (c checker) ref(r hcl.Range, name, what string, names []string) {
	for _, n := range names {
		if n == name {
			return
		}
	}
	hint := fmt.Sprintf("the config has no %s %s", what, clip(name))
	if near, _ := nearest(name, names); near != "" {
		hint += fmt.Sprintf("; the nearest is %q", near)
	}
	c.ds.add(r, fmt.Sprintf("Unknown %s %s", what, clip(name)), "%s", hint)
}
