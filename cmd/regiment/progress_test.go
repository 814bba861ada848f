package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/cli/clitest"
)

// TestRunLogsJSONAndItsProgressIntoAPipe runs `regiment run` with stderr a
// pipe and --log-format json: every line of stderr is one JSON object with
// hclog's keys, among them the periodic progress of the simulated time.
func TestRunLogsJSONAndItsProgressIntoAPipe(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	var code int
	lines := clitest.PipeLines(t, func(w *os.File) {
		code = runRun(context.Background(), []string{"--config", "../../examples/small.hcl", "--scenario", "testdata/small-sample.hcl",
			"--duration", "10m", "--data", dir, "--log-level", "info", "--log-format", "json", "--progress-every", "1ns"}, &out, w)
	})
	if code != 0 {
		t.Fatalf("regiment run exited %d:\n%s", code, strings.Join(lines, "\n"))
	}
	progress, info := 0, 0
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stderr line %q is not JSON: %v", l, err)
		}
		for _, k := range []string{"@timestamp", "@level", "@module", "@message"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("line %q lacks %s", l, k)
			}
		}
		switch {
		case m["@message"] == "progress":
			if s, _ := m["status"].(string); strings.Contains(s, "of 10m0s") {
				progress++
			}
			if _, ok := m["elapsed"]; !ok {
				t.Errorf("progress line %q lacks elapsed", l)
			}
		case m["@level"] == "info" && strings.HasPrefix(fmt.Sprint(m["@module"]), "regiment"):
			info++
		}
	}
	if progress == 0 || info == 0 {
		t.Fatalf("%d progress lines of the simulated time and %d other info lines, want both:\n%s", progress, info, strings.Join(lines, "\n"))
	}
	if !strings.Contains(out.String(), "10m0s simulated") {
		t.Fatalf("summary:\n%s", out.String())
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "{") {
			t.Fatalf("the summary on stdout has a log line: %q", sc.Text())
		}
	}
}

// TestVersionNamesTheBuildAndTheContract: regiment --version (and version)
// prints the binary, its revision and the wire contract, and exits 0.
func TestVersionNamesTheBuildAndTheContract(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		var stdout, stderr bytes.Buffer
		if code := dispatch(context.Background(), []string{arg}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
			t.Fatalf("regiment %s: exit %d, stderr %q", arg, code, stderr.String())
		}
		lines := strings.Split(stdout.String(), "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "regiment ") || !strings.Contains(lines[0], "(revision ") ||
			lines[1] != "wire contract 1.1 (reads 1.0-1.1, writes 1.0)" {
			t.Fatalf("regiment %s:\n%s", arg, stdout.String())
		}
	}
}
