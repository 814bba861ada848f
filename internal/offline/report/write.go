package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/regimentd/regiment/internal/offline/eval"
)

// MarkdownName is the file of the summary.
const MarkdownName = "report.md"

// Write writes MarkdownName and PlotName into dir (created) with the top
// apps of each domain, and returns their paths.
func Write(dir string, rec *Recorded, results []DomainResult, top int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	md, png := filepath.Join(dir, MarkdownName), filepath.Join(dir, PlotName)
	if err := writeFile(md, func(w io.Writer) error { return WriteMarkdown(w, rec, results, top) }); err != nil {
		return nil, err
	}
	if err := writeFile(png, func(w io.Writer) error { return WritePlot(w, rec, results, top) }); err != nil {
		return nil, err
	}
	return []string{md, png}, nil
}

// writeFile creates path and writes it with fn through a buffer.
func writeFile(path string, fn func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	w := bufio.NewWriter(f)
	err = fn(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}

// WriteSummary writes a line per domain of results: its steps, apps,
// core-hours and estimated breach minutes both ways, and the apps that
// breached at their ceiling or wanted more than it; what `regiment report`
// prints before naming the files it wrote.
func WriteSummary(w io.Writer, results []DomainResult) {
	for _, r := range results {
		fmt.Fprintf(w, "%s: %d steps, %s, core-hours live %s regiment %s, breach app-minutes (estimated) live %.1f regiment %.1f",
			r.Name, r.Steps, eval.Count(len(r.Apps), "app", "apps"), CoreHours(r.Live.CoreHours), CoreHours(r.Recommended.CoreHours),
			r.Live.BreachMinutes, r.Recommended.BreachMinutes)
		switch {
		case r.AtMaxApps > 0 && r.LimitedApps > 0:
			fmt.Fprintf(w, "; %s breached at the ceiling, %s wanted more than it (see report.md)",
				eval.Count(r.AtMaxApps, "app", "apps"), eval.Count(r.LimitedApps, "app", "apps"))
		case r.AtMaxApps > 0:
			fmt.Fprintf(w, "; %s breached at the ceiling (see report.md)", eval.Count(r.AtMaxApps, "app", "apps"))
		case r.LimitedApps > 0:
			fmt.Fprintf(w, "; %s wanted more than the ceiling (see report.md)", eval.Count(r.LimitedApps, "app", "apps"))
		}
		fmt.Fprintln(w)
	}
}
