package trace

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/core/domains"
)

func TestLoad(t *testing.T) {
	worldcup, err := filepath.Abs(filepath.Join("testdata", "worldcup98_sample.csv"))
	if err != nil {
		t.Fatal(err)
	}
	az, err := filepath.Abs(filepath.Join("testdata", "azure_functions_sample.csv"))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("every domain gets its trace and a shared file is read once", func(t *testing.T) {
		sc := &domains.Scenario{Traffic: []domains.Traffic{
			{Domain: "shop", Trace: worldcup, Format: domains.FormatTimeseries},
			{Domain: "batch", Trace: az, Format: domains.FormatAzureFunctions},
			{Domain: "search", Trace: az, Format: domains.FormatAzureFunctions, FunctionOffset: 1, FunctionStride: 2},
		}}
		got, err := Load(sc)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || len(got["shop"]) != 1 || len(got["batch"]) != 200 || len(got["search"]) != 200 {
			t.Fatalf("Load = %d domains (shop %d, batch %d, search %d series), want 3 (1, 200, 200)",
				len(got), len(got["shop"]), len(got["batch"]), len(got["search"]))
		}
		if &got["batch"][0] != &got["search"][0] {
			t.Error("batch and search name the same file but got separate reads")
		}
	})

	t.Run("all failures are reported at once, each file once", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing.csv")
		sc := &domains.Scenario{Traffic: []domains.Traffic{
			{Domain: "a", Trace: missing, Format: domains.FormatTimeseries},
			{Domain: "b", Trace: missing, Format: domains.FormatTimeseries},
			{Domain: "c", Trace: worldcup, Format: domains.FormatAzureFunctions},
			{Domain: "d", Trace: worldcup, Format: domains.FormatTimeseries},
			{Domain: "d", Trace: worldcup, Format: domains.FormatTimeseries},
		}}
		got, err := Load(sc)
		if got != nil || err == nil {
			t.Fatalf("Load = %v, %v; want nil and an error", got, err)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v does not wrap fs.ErrNotExist", err)
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 1 {
			t.Errorf("error %v has no *ParseError for line 1 of the wrong-format trace", err)
		}
		msg := err.Error()
		for _, want := range []string{`domain "a"`, `domain "c"`, `domain "d" already has traffic block 3`} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not mention %s", msg, want)
			}
		}
		if strings.Contains(msg, `domain "b"`) || strings.Count(msg, "missing.csv") != 1 {
			t.Errorf("error %q reports the missing file more than once", msg)
		}
	})

	t.Run("no traffic, no traces", func(t *testing.T) {
		got, err := Load(&domains.Scenario{})
		if err != nil || len(got) != 0 {
			t.Errorf("Load = %v, %v; want an empty map", got, err)
		}
	})
}
