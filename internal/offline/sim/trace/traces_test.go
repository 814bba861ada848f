package trace

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/regimentd/regiment/internal/core/domains"
)

// repoTraces is the repository's folder of real traces (traces/README.md),
// relative to this package's directory (the test's working directory).
var repoTraces = filepath.Join("..", "..", "..", "..", "traces")

var (
	worldcupPath = filepath.Join(repoTraces, "worldcup98", "worldcup98_days01-60_per_minute.csv.gz")
	azurePath    = filepath.Join(repoTraces, "azure-functions-2019", "sampleA_1350fn_invocations.csv.gz")
)

// readRepo returns the decompressed contents of a shipped trace. The traces
// are part of the repository: a missing one fails the test.
func readRepo(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func TestReadShippedWorldcup(t *testing.T) {
	data := readRepo(t, worldcupPath)
	if rows := bytes.Count(data, []byte{'\n'}) - 1; rows != 86390 {
		t.Fatalf("file has %d rows, want 86390", rows)
	}
	got, err := ReadFile(worldcupPath, domains.FormatTimeseries)
	if err != nil {
		t.Fatal(err)
	}
	s := got[0]
	if !s.Start.Equal(utc("1998-04-30 21:30:00")) {
		t.Errorf("Start = %v, want 1998-04-30 21:30:00 UTC", s.Start)
	}
	// 60 days of minutes; the 10 minutes without a row read as zero.
	if len(s.Values) != 60*1440 {
		t.Fatalf("len(Values) = %d, want %d", len(s.Values), 60*1440)
	}
	if s.Values[0] != 2 || s.Values[1] != 11 || s.Values[86399] != 35804 {
		t.Errorf("values 0, 1, 86399 = %v, %v, %v; want 2, 11, 35804", s.Values[0], s.Values[1], s.Values[86399])
	}
	if i := s.Index(utc("1998-05-08 03:22:00")); s.Values[i] != 0 {
		t.Errorf("1998-05-08 03:22 (no row) = %v, want 0", s.Values[i])
	}
	if i := s.Index(utc("1998-06-29 16:27:00")); s.Max() != 225138 || s.Values[i] != 225138 {
		t.Errorf("peak %v, value at 1998-06-29 16:27 %v; want both 225138", s.Max(), s.Values[i])
	}
}

func TestReadShippedAzure(t *testing.T) {
	readRepo(t, azurePath)
	got, err := ReadFile(azurePath, domains.FormatAzureFunctions)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1350 {
		t.Fatalf("got %d series, want 1350", len(got))
	}
	agg := make([]float64, 1440)
	for _, s := range got {
		if len(s.Values) != 1440 {
			t.Fatalf("series %s has %d minutes, want 1440", s.Name, len(s.Values))
		}
		for m, v := range s.Values {
			agg[m] += v
		}
	}
	// traces/README.md: aggregate 400-4,025 invocations per minute.
	lo, hi := agg[0], agg[0]
	for _, v := range agg {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo != 400 || hi != 4025 {
		t.Errorf("aggregate per minute in [%v, %v], want [400, 4025]", lo, hi)
	}
	if agg[0] != 2336 {
		t.Errorf("aggregate minute_1 = %v, want 2336", agg[0])
	}
	// The busiest function is the last row: 3,427 invocations in minute 1077.
	r := Rank(got)
	top, second := got[r[0]], got[r[1]]
	if r[0] != 1349 || top.Name != "5af842b48b282b5579321def9a30335f602543c9240c9d35c98b80681d392441" ||
		top.Max() != 3427 || top.Values[1076] != 3427 {
		t.Errorf("busiest = row %d %s peak %v", r[0], top.Name, top.Max())
	}
	if second.Max() != 2889 {
		t.Errorf("second busiest peaks at %v, want 2889", second.Max())
	}
}
