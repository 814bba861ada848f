package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/regimentd/regiment/internal/core/domains"
)

// BenchmarkRead parses whole traces from memory: the testdata samples and
// the full shipped traces, gzip-compressed as they ship.
func BenchmarkRead(b *testing.B) {
	for _, bc := range []struct {
		name   string
		path   string
		format domains.TraceFormat
	}{
		{"worldcup98/sample-300rows", filepath.Join("testdata", "worldcup98_sample.csv"), domains.FormatTimeseries},
		{"worldcup98/full-86390rows", worldcupPath, domains.FormatTimeseries},
		{"azure/sample-200x120", filepath.Join("testdata", "azure_functions_sample.csv"), domains.FormatAzureFunctions},
		{"azure/full-1350x1440", azurePath, domains.FormatAzureFunctions},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data, err := os.ReadFile(bc.path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Read(bytes.NewReader(data), bc.path, bc.format); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
