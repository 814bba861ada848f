package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/regimentd/regiment/internal/cli/clitest"
)

// TestProgressLogsAPlainLineEveryPeriodIntoAPipe: not on a terminal, the
// progress line is logged at once and then once per period however often
// it is updated, without the terminal's escape codes; into a buffer (not a
// file) nothing is written.
func TestProgressLogsAPlainLineEveryPeriodIntoAPipe(t *testing.T) {
	lines := clitest.PipeLines(t, func(w *os.File) {
		synctest.Test(t, func(t *testing.T) {
			p := NewProgressLog(w, LogText, 30*time.Second)
			for i := range 100 { // 100 s, an update a second
				p.Update(i%10 == 0, "simulating: %d s", i)
				time.Sleep(time.Second)
			}
			p.Done()
		})
	})
	want := []string{"simulating: 0 s", "simulating: 30 s", "simulating: 60 s", "simulating: 90 s"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %q", len(lines), len(want), lines)
	}
	for i, l := range lines {
		if !strings.Contains(l, "[INFO]  regiment: progress: status=\""+want[i]+"\"") || strings.Contains(l, "\033") {
			t.Errorf("line %d %q, want the plain progress of %q", i, l, want[i])
		}
		if wantElapsed := "elapsed=" + (time.Duration(30*i) * time.Second).String(); !strings.HasSuffix(l, wantElapsed) {
			t.Errorf("line %d %q, want it to end %s", i, l, wantElapsed)
		}
	}

	var buf bytes.Buffer
	p := NewProgressLog(&buf, LogText, time.Nanosecond)
	p.Update(true, "x")
	p.Done()
	if buf.Len() != 0 {
		t.Fatalf("progress into a buffer wrote %q", buf.String())
	}
	if lines := clitest.PipeLines(t, func(w *os.File) { NewProgressLog(w, LogText, 0).Update(true, "x") }); len(lines) != 0 {
		t.Fatalf("a period of 0 logged %q", lines)
	}
}

// TestBarCellsAndSplitList pin the bar's cells and the list flags' split.
func TestBarCellsAndSplitList(t *testing.T) {
	if got := BarCells(5, 10); got != "[##########..........]" {
		t.Errorf("BarCells(5, 10) = %q", got)
	}
	if got := BarCells(0, 0); got != "[....................]" {
		t.Errorf("BarCells(0, 0) = %q", got)
	}
	if got := SplitList(" a, ,b,"); strings.Join(got, "|") != "a|b" {
		t.Errorf("SplitList = %q", got)
	}
}
