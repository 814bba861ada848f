package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
)

// TestEpisodesWhyShowsLearnedServiceTimes: a step with the service and
// startup times the Soldier learned of apps without a configured
// service_time shows them per app, sorted; a startup not yet learned is a
// dash.
func TestEpisodesWhyShowsLearnedServiceTimes(t *testing.T) {
	dir := epFixture(t)
	s, err := store.Open(filepath.Join(dir, "regiment.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := s.NewAppender(1, 0)
	err = a.Append(store.Step{Episode: "sol-payment", Seq: 3, At: epT0.Add(30 * time.Second), Obs: []float64{110, 0.6, 0.9},
		Action: map[string]float64{"replicas/checkout": 7},
		Outcome: map[string]float64{"service_time/payment/shop_web": 0.0125, "startup_time/payment/shop_web": 14,
			"service_time/payment/pay_auth": 0.004, "ready/payment/pay_auth": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "why", "--data", dir, "--domain", "payment", "--at", "2024-05-01T12:00:35Z")
	wantLines(t, out,
		"learned from observations (apps whose config sets no service_time):",
		"APP SERVICE TIME STARTUP",
		"payment/pay_auth 4ms -",
		"payment/shop_web 12.5ms 14s",
	)
	table := out[strings.Index(out, "learned from observations"):]
	if i, j := strings.Index(table, "payment/pay_auth "), strings.Index(table, "payment/shop_web "); i < 0 || j < i {
		t.Errorf("apps not in order:\n%s", out)
	}
}
