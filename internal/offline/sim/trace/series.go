package trace

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Series is one trace's request counts per minute.
type Series struct {
	// Name is the file's base name for a timeseries trace, the HashFunction
	// value for an azure-functions trace.
	Name string
	// Start is the time of Values[0], in UTC, for a timeseries trace; zero for
	// an azure-functions trace, whose day has no date.
	Start time.Time
	// Values[i] is the number of requests in minute i after Start; >= 0.
	Values []float64
}

// Max is the largest of s.Values, the series' peak in requests per minute, or
// 0 when s is empty.
func (s Series) Max() float64 {
	if len(s.Values) == 0 {
		return 0
	}
	m := s.Values[0]
	for _, v := range s.Values[1:] {
		m = max(m, v)
	}
	return m
}

// Index is the position in s.Values of the minute that contains t:
// floor((t - Start) / 1 min). It may fall outside [0, len(s.Values)); the
// caller checks. For an azure-functions series, whose Start is zero, pass
// time.Time{}.Add(offset) to look up an offset into the day.
func (s Series) Index(t time.Time) int {
	secs := t.Unix() - s.Start.Unix()
	if t.Nanosecond() < s.Start.Nanosecond() {
		secs-- // borrow, so secs is floor((t - Start) / 1 s)
	}
	m := secs / 60
	if secs%60 < 0 {
		m-- // floor, not truncation, before Start
	}
	return int(m)
}

// Rank returns the indices of series ordered from the highest peak (Max) to
// the lowest. Ties go to the smaller Name, then to the smaller index, so the
// order is deterministic. The simulator picks azure-functions series "from the
// busiest down" by this order.
func Rank(series []Series) []int {
	peaks := make([]float64, len(series))
	idx := make([]int, len(series))
	for i := range series {
		peaks[i] = series[i].Max()
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(peaks[b], peaks[a]); c != 0 {
			return c
		}
		if c := strings.Compare(series[a].Name, series[b].Name); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return idx
}
