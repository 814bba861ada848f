package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// ProgressEvery is how often a progress line is logged when the output is
// not a terminal (a pod's log, CI): the default of regiment run's
// --progress-every, and the period of sim, eval and calibrate.
const ProgressEvery = 30 * time.Second

// Progress shows how far a long command is. On a terminal it draws a live
// line, redrawn at most every 200 ms. When the output is a file or a pipe
// (a pod, CI, "2> log") it logs a plain line (go-hclog, at Info, in the
// --log-format) at once and then at most every period, so that something
// shows in the log while the command runs. Into anything else (a buffer in
// a test) it writes nothing.
type Progress struct {
	w       io.Writer
	on      bool         // a terminal: the live line
	log     hclog.Logger // not a terminal: the periodic line; nil: none
	every   time.Duration
	last    time.Time
	lastLog time.Time
	start   time.Time
}

// NewProgress is NewProgressLog in text, every ProgressEvery.
func NewProgress(w io.Writer) *Progress { return NewProgressLog(w, LogText, ProgressEvery) }

// NewProgressLog is the progress of a command writing to w, logging in
// format every period when w is a file or pipe (every <= 0: never).
func NewProgressLog(w io.Writer, format string, every time.Duration) *Progress {
	p := &Progress{w: w, every: every, start: time.Now()}
	f, ok := w.(*os.File)
	if !ok {
		return p
	}
	st, err := f.Stat()
	switch {
	case err != nil:
	case st.Mode()&os.ModeCharDevice != 0:
		p.on = true
	case every > 0:
		p.log, _ = NewLogger("regiment", "info", format, w) // format is checked by the caller
	}
	return p
}

// Elapsed is the time since the progress began.
func (p *Progress) Elapsed() time.Duration { return time.Since(p.start) }

// Update redraws the line if it is due (at once when force), or logs it
// when the period has passed since the last; format and args make the line.
func (p *Progress) Update(force bool, format string, args ...any) {
	now := time.Now()
	if p.log != nil && (p.lastLog.IsZero() || now.Sub(p.lastLog) >= p.every) {
		p.lastLog = now
		p.log.Info("progress", "status", fmt.Sprintf(format, args...), "elapsed", now.Sub(p.start).Round(time.Second).String())
	}
	if !p.on {
		return
	}
	if force || now.Sub(p.last) >= 200*time.Millisecond {
		p.last = now
		fmt.Fprintf(p.w, "\r\033[K"+format, args...)
	}
}

// Done ends the progress line.
func (p *Progress) Done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// BarCells is a 20-cell text progress bar for done of total.
func BarCells(done, total int) string {
	const cells = 20
	n := cells * done / max(total, 1)
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", cells-n) + "]"
}

// SplitList splits a comma-separated flag value, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// WriteJSON writes v to path as indented JSON with a final newline.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
