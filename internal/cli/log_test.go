package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestJSONLogLinesParseWithTheirKeys(t *testing.T) {
	var out bytes.Buffer
	log, err := NewLogger("soldier", "info", LogJSON, &out)
	if err != nil {
		t.Fatal(err)
	}
	log.With("domain", "payment").Info("directive rejected", "reason", "stale", "seq", 42)
	log.Debug("not shown at info")
	log.Named("bus").Warn("reconnected", "error", "EOF: with \"quotes\"\nand a newline")
	sc := bufio.NewScanner(&out)
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2: %q", len(lines), out.String())
	}
	for _, k := range []string{"@timestamp", "@level", "@module", "@message"} {
		if _, ok := lines[0][k]; !ok {
			t.Errorf("line %v lacks %s", lines[0], k)
		}
	}
	if lines[0]["@level"] != "info" || lines[0]["@module"] != "soldier" || lines[0]["@message"] != "directive rejected" ||
		lines[0]["domain"] != "payment" || lines[0]["reason"] != "stale" || lines[0]["seq"] != float64(42) {
		t.Errorf("first line %v", lines[0])
	}
	if lines[1]["@module"] != "soldier.bus" || lines[1]["error"] != "EOF: with \"quotes\"\nand a newline" {
		t.Errorf("second line %v", lines[1])
	}
}

func TestNewLoggerRefusesUnknownLevelsAndFormats(t *testing.T) {
	if _, err := NewLogger("x", "loud", LogText, nil); err == nil || !strings.Contains(err.Error(), `--log-level: unknown level "loud"`) {
		t.Errorf("level: %v", err)
	}
	if _, err := NewLogger("x", "info", "jsn", nil); err == nil || err.Error() != `--log-format: unknown format "jsn" (text, json); did you mean "json"?` {
		t.Errorf("format: %v", err)
	}
	var out bytes.Buffer
	log, err := NewLogger("x", "info", LogText, &out)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hello", "k", 1)
	if !strings.Contains(out.String(), "[INFO]  x: hello: k=1") {
		t.Errorf("text line %q", out.String())
	}
}
