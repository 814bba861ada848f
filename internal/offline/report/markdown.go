package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// WriteMarkdown writes the summary of results read from rec: a table per
// domain both ways, then the top apps of each domain by the difference in
// core-hours, every app of each domain with its namespace and workload, the
// apps at or wanting more than their ceiling, and what is measured and what
// is estimated.
func WriteMarkdown(w io.Writer, rec *Recorded, results []DomainResult, top int) error {
	var b strings.Builder
	steps := 0
	for _, r := range results {
		steps += r.Steps
	}
	fmt.Fprintf(&b, "# What Regiment would have done\n\n")
	fmt.Fprintf(&b, "%d recommend-mode Soldier steps (of %d read) from %s; each step stands for one %s tick.\n\n",
		steps, rec.Steps, strings.Join(rec.Paths, ", "), rec.Tick)
	b.WriteString("*live* is what the cluster ran (its own autoscaling); *regiment* is what the Soldier recommended " +
		"(its policy after the stabiliser and the guards, within the Commander's budget). " +
		"Core-hours are requested cores (replicas x cpu_per_replica); breach app-minutes are **estimated** both ways " +
		"with the simulator's steady-state queue at the recorded request rate (`regiment report --help`); " +
		"the domain's recorded breach minutes are measured, live side only.\n\n")
	b.WriteString("| domain | hours | core-hours live | core-hours regiment | change | breach app-min live (est.) | breach app-min regiment (est.) | breach min recorded (live) | replicas live mean / peak | replicas regiment mean / peak | target changes live | target changes regiment |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		hours := r.To.Sub(r.From).Hours() + rec.Tick.Hours()
		fmt.Fprintf(&b, "| %s | %.1f | %s | %s | %s | %.1f | %.1f | %.1f | %.1f / %.0f | %.1f / %.0f | %d | %d |\n",
			r.Name, hours, CoreHours(r.Live.CoreHours), CoreHours(r.Recommended.CoreHours), change(r.Live.CoreHours, r.Recommended.CoreHours),
			r.Live.BreachMinutes, r.Recommended.BreachMinutes, r.RecordedBreachMinutes,
			r.Live.MeanReplicas, r.Live.PeakReplicas, r.Recommended.MeanReplicas, r.Recommended.PeakReplicas,
			r.Live.Changes, r.Recommended.Changes)
	}
	for _, r := range results {
		n := min(top, len(r.Apps))
		fmt.Fprintf(&b, "\n## %s: the %d apps that differ most\n\n", r.Name, n)
		fmt.Fprintf(&b, "From %s to %s, by the difference in core-hours.\n\n", r.From.UTC().Format(time.RFC3339), r.To.UTC().Format(time.RFC3339))
		b.WriteString("| app | namespace | workload | service time | live HPA bounds | replicas live mean / peak | replicas regiment mean / peak | core-hours live | core-hours regiment | breach app-min live (est.) | breach app-min regiment (est.) |\n")
		b.WriteString("|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|\n")
		d := rec.domain(r.Name)
		for _, a := range r.Apps[:n] {
			bounds := "not observed"
			if a.HPAMax > 0 {
				bounds = fmt.Sprintf("[%.0f, %.0f]", a.HPAMin, a.HPAMax)
			}
			ns, wl := where(d.app(a.Name))
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.1f / %.0f | %.1f / %.0f | %s | %s | %.1f | %.1f |\n", a.Name, ns, wl, serviceTime(a), bounds,
				a.Live.MeanReplicas, a.Live.PeakReplicas, a.Recommended.MeanReplicas, a.Recommended.PeakReplicas,
				CoreHours(a.Live.CoreHours), CoreHours(a.Recommended.CoreHours), a.Live.BreachMinutes, a.Recommended.BreachMinutes)
		}
	}
	for _, r := range results {
		everyApp(&b, rec.domain(r.Name), r)
	}
	for _, d := range rec.Domains {
		atMax(&b, d, rec.Tick)
		limited(&b, d, rec.Tick)
	}
	b.WriteString("\n![replicas live and recommended](" + PlotName + ")\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// atMax writes d's apps that breached with their ceiling's replicas ready,
// most minutes first, if any: no autoscaler, the cluster's or Regiment,
// serves them; a higher max_replicas does.
func atMax(b *strings.Builder, d *Domain, tick time.Duration) {
	ceilingTable(b, d, func(a *App) int { return a.AtMaxSteps }, "apps that breached with their ceiling's replicas ready",
		"Measured on the cluster: the app was over its SLO with as many replicas ready as its ceiling (the live "+
			"HPA's maxReplicas, else max_replicas) allows. Neither the cluster's autoscaler nor Regiment serves that demand: "+
			"raise the ceiling before comparing the two on these apps.",
		"| app | ceiling | breach minutes at the ceiling |\n|---|---:|---:|\n",
		func(a *App) string {
			return fmt.Sprintf("| %s | %.0f | %.1f |", a.Name, ceiling(a), float64(a.AtMaxSteps)*tick.Minutes())
		})
}

// limited writes d's apps whose Soldier's sizing wanted more replicas
// than their ceiling, most minutes first, if any: the ceilings to raise
// before they are breached at.
func limited(b *strings.Builder, d *Domain, tick time.Duration) {
	ceilingTable(b, d, func(a *App) int { return a.LimitedSteps }, "apps whose sizing wanted more than their ceiling",
		"The Soldier's sizing wanted more replicas than the app's ceiling (the live HPA's maxReplicas, else "+
			"max_replicas) allows, breaching or not yet: a ceiling of the most it wanted would have served those minutes.",
		"| app | ceiling | minutes wanting more | most replicas wanted |\n|---|---:|---:|---:|\n",
		func(a *App) string {
			return fmt.Sprintf("| %s | %.0f | %.1f | %.0f |", a.Name, ceiling(a), float64(a.LimitedSteps)*tick.Minutes(), a.MostWanted)
		})
}

// ceilingTable writes, if any of d's apps has steps, a section of them,
// most steps first: its title after the domain's name, its text, the
// table's header and a row per app.
func ceilingTable(b *strings.Builder, d *Domain, steps func(*App) int, title, text, header string, row func(*App) string) {
	var apps []*App
	for i := range d.Apps {
		if steps(&d.Apps[i]) > 0 {
			apps = append(apps, &d.Apps[i])
		}
	}
	if len(apps) == 0 {
		return
	}
	slices.SortStableFunc(apps, func(x, y *App) int { return cmp.Compare(steps(y), steps(x)) })
	fmt.Fprintf(b, "\n## %s: %s\n\n%s\n\n%s", d.Name, title, text, header)
	for _, a := range apps {
		b.WriteString(row(a) + "\n")
	}
}

// ceiling is the app's ceiling: its live HPA's maxReplicas when observed,
// else the config's max_replicas.
func ceiling(a *App) float64 {
	if a.HPAMax > 0 {
		return a.HPAMax
	}
	return float64(a.MaxReplicas)
}

// change is b against a as a signed percentage.
func change(a, b float64) string {
	if a == 0 || math.IsNaN(a) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", 100*(b-a)/a)
}

// serviceTime is a's service time for the app table: "12.5ms learned" when
// the Soldier learned it, else the config's.
func serviceTime(a AppResult) string {
	st := time.Duration(a.ServiceTime * float64(time.Second)).Round(10 * time.Microsecond).String()
	if a.Learned {
		return st + " learned"
	}
	return st
}

// everyApp writes the table of every app of domain d that its Soldier
// decided for, in r's order (by the difference in core-hours): where it
// runs, where its attributes come from, and its figures both ways; then
// the apps whose cost is unknown, if any.
func everyApp(b *strings.Builder, d *Domain, r DomainResult) {
	fmt.Fprintf(b, "\n## %s: every app (%d)\n\n", d.Name, len(r.Apps))
	b.WriteString("Every app the Soldier recorded a decision for, listed in the config or found by label (`discover`), " +
		"under its name in the store.\n\n")
	b.WriteString("| app | namespace | workload | found by | cpu per replica | replicas live mean / peak | replicas regiment mean / peak | core-hours live | core-hours regiment | breach app-min live (est.) | breach app-min regiment (est.) |\n")
	b.WriteString("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var unknown []string
	for _, ar := range r.Apps {
		a := d.app(ar.Name)
		ns, wl := where(a)
		found := "config"
		if a.Discovered {
			found = "label"
		}
		cpu := fmt.Sprintf("%.3g", a.CPU)
		if a.CPU <= 0 {
			cpu = "unknown"
			unknown = append(unknown, a.Name)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %.1f / %.0f | %.1f / %.0f | %s | %s | %.1f | %.1f |\n", a.Name, ns, wl, found, cpu,
			ar.Live.MeanReplicas, ar.Live.PeakReplicas, ar.Recommended.MeanReplicas, ar.Recommended.PeakReplicas,
			CoreHours(ar.Live.CoreHours), CoreHours(ar.Recommended.CoreHours), ar.Live.BreachMinutes, ar.Recommended.BreachMinutes)
	}
	if len(unknown) > 0 {
		fmt.Fprintf(b, "\n%d apps have no CPU per replica: their episodes do not describe them (a store of an older Regiment) "+
			"and the config neither lists them nor sets the discover block's cpu_per_replica, so their core-hours count 0: %s.\n",
			len(unknown), strings.Join(unknown, ", "))
	}
}

// where is the namespace and workload ("deployment/<name>") of a, "-" each
// when its episode did not say.
func where(a *App) (namespace, workload string) {
	namespace, workload = "-", "-"
	if a == nil {
		return namespace, workload
	}
	if a.Namespace != "" {
		namespace = a.Namespace
	}
	if a.Workload != "" {
		workload = strings.ToLower(a.Kind) + "/" + a.Workload
	}
	return namespace, workload
}

// CoreHours formats core-hours with three or more significant digits
// from 0.01 to 100 (two below), so that a short review does not show 0.0.
func CoreHours(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", v)
	default:
		return fmt.Sprintf("%.2g", v)
	}
}

// domain is the domain of rec named name.
func (rec *Recorded) domain(name string) *Domain {
	for _, d := range rec.Domains {
		if d.Name == name {
			return d
		}
	}
	return nil
}
