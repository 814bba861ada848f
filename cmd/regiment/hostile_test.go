package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildRegiment builds this command into a temporary directory and returns
// the binary's path.
func buildRegiment(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "regiment")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// sparse makes a file of size bytes that starts with head and reads as zero
// bytes after it, without writing them to disk.
func sparse(t *testing.T, path, head string, size int64) {
	t.Helper()
	if err := os.WriteFile(path, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// TestHostileFilesExitOneFastAndSmall runs the real binary on each hostile
// file, as a trace and as a config, through every command that reads it: it
// exits 1 within 2 s and under 200 MB of memory (the child's peak resident
// set), with an error that names the file and, for a file with lines, the
// line. A trace with a byte order mark and CRLF line endings is accepted.
func TestHostileFilesExitOneFastAndSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildRegiment(t)
	dir := t.TempDir()
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	config := abs("../../examples/small.hcl")
	merchant := abs("../../internal/offline/sim/trace/testdata/azure_functions_sample.csv")
	path := func(name string) string { return filepath.Join(dir, name) }

	// The hostile files.
	if err := os.Symlink("/dev/zero", path("zero.csv")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path("fifo.csv"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path("dir.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	sparse(t, path("sparse.csv"), "", 3<<30)                                       // 3 GiB of zeros: one line
	sparse(t, path("longline.csv"), "period,count\n2020-01-01 00:00:00,", 300<<20) // a 300 MB second line
	rows := func(cell string, eol string) string {
		var b strings.Builder
		start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		b.WriteString("period,count" + eol)
		for i := range 120 {
			v := "100"
			if i == 1 {
				v = cell
			}
			fmt.Fprintf(&b, "%s,%s%s", start.Add(time.Duration(i)*time.Minute).Format(time.DateTime), v, eol)
		}
		return b.String()
	}
	write := func(name, text string) {
		if err := os.WriteFile(path(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("huge.csv", rows("1e300", "\n"))
	write("nan.csv", rows("NaN", "\n"))
	write("bom-crlf.csv", "\xef\xbb\xbf"+rows("100", "\r\n"))
	sparse(t, path("sparse.hcl"), "", 3<<30)
	if err := syscall.Mkfifo(path("fifo.hcl"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A FIFO that something writes to forever.
	if err := syscall.Mkfifo(path("endless.csv"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		f, err := os.OpenFile(path("endless.csv"), os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		zeros := make([]byte, 64<<10)
		for ctx.Err() == nil {
			if _, err := f.Write(zeros); err != nil {
				return
			}
		}
	}()

	// scenario writes a scenario whose payment traffic is the trace file name.
	scenario := func(trace string) string {
		p := path("s-" + strings.TrimSuffix(trace, ".csv") + ".hcl")
		write(filepath.Base(p), fmt.Sprintf(`scenario "hostile" {
  start    = "2020-01-01T00:00:00Z"
  duration = "1h"
  traffic "payment" {
    trace    = %q
    format   = "timeseries"
    peak_rps = 9000
  }
  traffic "merchant" {
    trace    = %q
    format   = "azure-functions"
    peak_rps = 3000
  }
}
`, path(trace), merchant))
		return p
	}
	// traceCommands are the commands that read a trace, each with the
	// scenario (or trace) for file.
	traceCommands := func(file string) [][]string {
		s := scenario(file)
		return [][]string{
			{"validate", "--config", config, "--scenario", s},
			{"sim", "--config", config, "--scenario", s, "--duration", "10m"},
			{"run", "--config", config, "--scenario", s, "--duration", "10m", "--data", t.TempDir()},
			{"forecast", "--trace", path(file)},
		}
	}
	configCommands := func(file string) [][]string {
		return [][]string{
			{"validate", "--config", path(file)},
			{"sim", "--config", path(file), "--scenario", scenario("bom-crlf.csv")},
			{"calibrate", "--config", path(file), "--episodes", t.TempDir()},
		}
	}
	invalidTrace := func(file, kind string) string {
		return `s-` + strings.TrimSuffix(file, ".csv") + `\.hcl:5,\d+-\d+: Invalid trace; ".*/` + regexp.QuoteMeta(file) + `" is ` + regexp.QuoteMeta(kind) + `, not a trace file`
	}
	notRegular := func(file, kind string) string {
		return regexp.QuoteMeta(file) + `"?: is ` + regexp.QuoteMeta(kind) + `, not a regular file`
	}
	tests := []struct {
		name     string
		commands [][]string
		code     int
		stderr   []string // per command, a regexp; one for all if a single one
	}{
		{"/dev/zero behind a trace path", traceCommands("zero.csv"), 1,
			[]string{invalidTrace("zero.csv", "a character device"), "", "", notRegular("zero.csv", "a character device")}},
		{"a FIFO nothing writes to", traceCommands("fifo.csv"), 1,
			[]string{invalidTrace("fifo.csv", "a named pipe (FIFO)"), "", "", notRegular("fifo.csv", "a named pipe (FIFO)")}},
		{"a FIFO written to forever", traceCommands("endless.csv"), 1,
			[]string{invalidTrace("endless.csv", "a named pipe (FIFO)"), "", "", notRegular("endless.csv", "a named pipe (FIFO)")}},
		{"a directory", traceCommands("dir.csv"), 1,
			[]string{invalidTrace("dir.csv", "a directory"), "", "", notRegular("dir.csv", "a directory")}},
		{"a 3 GiB sparse trace", traceCommands("sparse.csv"), 1,
			[]string{`read trace ".*/sparse\.csv": line 1: line longer than 1 MiB`}},
		{"a 300 MB line", traceCommands("longline.csv"), 1,
			[]string{`read trace ".*/longline\.csv": line 2: line longer than 1 MiB`}},
		{"a count of 1e300", traceCommands("huge.csv"), 1,
			[]string{`read trace ".*/huge\.csv": line 3: column "count": "1e300" is above 1e\+09 requests a minute`}},
		{"a count of NaN", traceCommands("nan.csv"), 1,
			[]string{`read trace ".*/nan\.csv": line 3: column "count": "NaN" is not a finite number`}},
		{"a config that is a FIFO", configCommands("fifo.hcl"), 1,
			[]string{notRegular("fifo.hcl", "a named pipe (FIFO)")}},
		{"a config that is /dev/zero", [][]string{{"validate", "--config", "/dev/zero"}, {"calibrate", "--config", "/dev/zero", "--episodes", dir}}, 1,
			[]string{notRegular("/dev/zero", "a character device")}},
		{"a config that is a directory", configCommands("dir.csv"), 1,
			[]string{notRegular("dir.csv", "a directory")}},
		{"a 3 GiB sparse config", configCommands("sparse.hcl"), 1,
			[]string{`sparse\.hcl:1,524289-524289: File too large`}},
	}
	for _, tt := range tests {
		for i, args := range tt.commands {
			t.Run(tt.name+"/"+args[0], func(t *testing.T) {
				want := tt.stderr[0]
				if len(tt.stderr) > 1 && tt.stderr[i] != "" {
					want = tt.stderr[i]
				}
				runHostile(t, bin, args, tt.code, want)
			})
		}
	}
	t.Run("a trace with a byte order mark and CRLF line ends is accepted", func(t *testing.T) {
		s := scenario("bom-crlf.csv")
		runHostile(t, bin, []string{"validate", "--config", config, "--scenario", s}, 0, "")
		runHostile(t, bin, []string{"sim", "--config", config, "--scenario", s, "--duration", "10m"}, 0, "")
	})
}

// runHostile runs bin with args and checks its exit code, that stderr
// matches want, and that it took under 2 s and 200 MB.
func runHostile(t *testing.T, bin string, args []string, code int, want string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("regiment %s: still running after 10 s; killed", strings.Join(args, " "))
	}
	took := time.Since(start)
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	t.Logf("exit %d in %v, peak RSS %d MB: %s", cmd.ProcessState.ExitCode(), took.Round(time.Millisecond), rss>>20, firstLine(stderr.String()))
	if got := cmd.ProcessState.ExitCode(); got != code {
		t.Errorf("exit code %d, want %d; stderr:\n%s", got, code, stderr.String())
	}
	if took > 2*time.Second {
		t.Errorf("took %v, want under 2 s", took)
	}
	if rss > 200<<20 {
		t.Errorf("peak RSS %d MB, want under 200 MB", rss>>20)
	}
	if want != "" && !regexp.MustCompile(want).MatchString(stderr.String()) {
		t.Errorf("stderr does not match %q:\n%s", want, stderr.String())
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
