package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/storage"
)

// Server serves the Prometheus HTTP API's instant query endpoint
// (/api/v1/query, GET or form POST) from the real PromQL engine over
// series loaded in the promqltest format ("load 15s\n  metric{labels}
// 0+10x40"). There is no Prometheus binary in the test environment; this is
// its query path. It evaluates every query at a fixed time (at), counts
// requests and keeps the last request's headers.
type Server struct {
	*httptest.Server
	eng *promql.Engine

	mu       sync.Mutex
	st       storage.Queryable
	failing  bool
	requests int
	header   http.Header
	longest  int            // bytes of the longest query served
	methods  map[string]int // requests per HTTP method
}

// at is when a Server evaluates queries: 10 minutes after the loaded series
// start (at the Unix epoch).
var at = time.Unix(600, 0)

// New starts a plain HTTP server over the series of script, closed when t
// ends.
func New(t testing.TB, script string) *Server {
	s := NewUnstarted(t, script)
	s.Start()
	return s
}

// NewUnstarted is New without starting the server, so that a test can set
// its TLS config and call StartTLS; it is closed when t ends.
func NewUnstarted(t testing.TB, script string) *Server {
	s := &Server{eng: promql.NewEngine(promql.EngineOpts{MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})}
	s.Load(t, script)
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Load replaces the series the server answers from.
func (s *Server) Load(t testing.TB, script string) {
	st := promqltest.LoadedStorage(t, script)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st = st
}

// Fail makes every query fail (503, as an unavailable Prometheus answers)
// while on.
func (s *Server) Fail(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing = on
}

// Stats returns the requests served so far and the last one's headers.
func (s *Server) Stats() (int, http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.header
}

// LongestQuery returns the bytes of the longest query served so far and
// the requests per HTTP method.
func (s *Server) LongestQuery() (int, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.longest, maps.Clone(s.methods)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	s.header = r.Header.Clone()
	if s.methods == nil {
		s.methods = map[string]int{}
	}
	s.methods[r.Method]++
	st, failing := s.st, s.failing
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path != "/api/v1/query":
		http.NotFound(w, r)
		return
	case failing:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"status":"error","errorType":"unavailable","error":"test outage"}`)
		return
	}
	query := r.FormValue("query")
	s.mu.Lock()
	s.longest = max(s.longest, len(query))
	s.mu.Unlock()
	q, err := s.eng.NewInstantQuery(r.Context(), st, nil, query, at)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"status": "error", "errorType": "bad_data", "error": err.Error()})
		return
	}
	defer q.Close()
	res := q.Exec(context.Background())
	if res.Err != nil {
		w.WriteHeader(http.StatusUnprocessableEntity)
		json.NewEncoder(w).Encode(map[string]string{"status": "error", "errorType": "execution", "error": res.Err.Error()})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": encodeResult(res.Value)})
}

// encodeResult writes a result as the HTTP API does: values as strings,
// times as Unix seconds.
func encodeResult(v any) map[string]any {
	value := func(t int64, f float64) [2]any {
		return [2]any{float64(t) / 1000, strconv.FormatFloat(f, 'f', -1, 64)}
	}
	switch v := v.(type) {
	case promql.Scalar:
		return map[string]any{"resultType": "scalar", "result": value(v.T, v.V)}
	case promql.Vector:
		out := make([]map[string]any, len(v))
		for i, s := range v {
			out[i] = map[string]any{"metric": s.Metric.Map(), "value": value(s.T, s.F)}
		}
		return map[string]any{"resultType": "vector", "result": out}
	}
	return map[string]any{"resultType": fmt.Sprintf("%T", v), "result": nil}
}

// Script is a promqltest load script of series at a 15 s step.
func Script(series ...fmt.Stringer) string {
	var b strings.Builder
	b.WriteString("load 15s\n")
	for _, s := range series {
		b.WriteString(s.String())
	}
	return b.String()
}

// Series is one series of a Script as promqltest writes it:
// `up{job="a"} 0+10x40`.
type Series string

func (r Series) String() string { return "  " + string(r) + "\n" }
