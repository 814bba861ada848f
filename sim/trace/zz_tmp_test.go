package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/domains"
)

func TestZZCorpusTiming(t *testing.T) {
	files, _ := filepath.Glob("/root/.cache/go-build/fuzz/github.com/regimentd/regiment/sim/trace/FuzzRead/*")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		lines := strings.Split(string(b), "\n")
		s := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
		data, err := strconv.Unquote(s)
		if err != nil { t.Fatal(err) }
		for _, fm := range []domains.TraceFormat{domains.FormatTimeseries, domains.FormatAzureFunctions} {
			st := time.Now()
			_, err := Read(bytes.NewReader([]byte(data)), "f", fm)
			if d := time.Since(st); d > 5*time.Millisecond {
				t.Logf("%s %s %v %d bytes: %v", filepath.Base(f), fm, d, len(data), err)
			}
		}
	}
}
