package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
