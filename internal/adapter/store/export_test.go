package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// exportFixture holds a commander step and two soldier steps, one guarded.
func exportFixture(t *testing.T) *Store {
	t.Helper()
	s, _ := openTemp(t)
	cmd, pay := commanderEpisode(), soldierEpisode("payment", t0.Add(-time.Minute))
	begin(t, s, cmd, pay)
	a := s.NewAppender(10, 0)
	steps := []Step{
		{Episode: pay.ID, Seq: 1, At: t0, Obs: []float64{120, 0.5, 0.8},
			Action: map[string]float64{"replicas/checkout": 4}, Reward: map[string]float64{"total": 0.25, "slo": 0.5},
			Outcome: map[string]float64{"p99_seconds": 0.12}},
		{Episode: pay.ID, Seq: 2, At: t0.Add(10 * time.Second), Obs: []float64{150, 1.25, 0.9},
			Action: map[string]float64{"replicas/checkout": 7, "replicas/refunds": 2},
			Guards: []Guard{{Name: "budget-cap", Target: "replicas/checkout", Before: 9, After: 7, Reason: "over budget"}},
			Reward: map[string]float64{"total": -0.5}},
		{Episode: cmd.ID, Seq: 1, At: t0, Obs: []float64{4000, 12},
			Action: map[string]float64{"share/payment": 0.3}, Reward: map[string]float64{"total": 1}},
	}
	for _, st := range steps {
		if err := a.Append(st); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExportCSV(t *testing.T) {
	s := exportFixture(t)
	var buf bytes.Buffer
	if err := s.ExportCSV(&buf, Filter{}); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"episode,level,domain,seq,at,obs.rps,obs.p99_ratio,obs.budget,obs.free_cores,obs.hour," +
			"action.replicas/checkout,action.replicas/refunds,action.share/payment,reward.slo,reward.total,outcome.p99_seconds,guards",
		"sol-payment,soldier,payment,1,2024-05-01T12:00:00Z,120,0.5,0.8,,,4,,,0.5,0.25,0.12,",
		"sol-payment,soldier,payment,2,2024-05-01T12:00:10Z,150,1.25,0.9,,,7,2,,,-0.5,,budget-cap:replicas/checkout:9->7",
		"cmd-1,commander,,1,2024-05-01T12:00:00Z,,,,4000,12,,,0.3,,1,,",
		"",
	}, "\n")
	if buf.String() != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", buf.String(), want)
	}

	buf.Reset()
	if err := s.ExportCSV(&buf, Filter{Level: "commander"}); err != nil {
		t.Fatal(err)
	}
	if want := "episode,level,domain,seq,at,obs.free_cores,obs.hour,action.share/payment,reward.total,guards\n" +
		"cmd-1,commander,,1,2024-05-01T12:00:00Z,4000,12,0.3,1,\n"; buf.String() != want {
		t.Fatalf("commander csv (columns are the union over the selection only):\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestExportJSONL(t *testing.T) {
	s := exportFixture(t)
	var buf bytes.Buffer
	if err := s.ExportJSONL(&buf, Filter{Domain: "payment", From: t0.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	want := `{"episode":"sol-payment","level":"soldier","domain":"payment","obs_version":1,"seq":2,"at":"2024-05-01T12:00:10Z",` +
		`"obs":[150,1.25,0.9],"action":{"replicas/checkout":7,"replicas/refunds":2},` +
		`"guards":[{"name":"budget-cap","target":"replicas/checkout","before":9,"after":7,"reason":"over budget"}],` +
		`"reward":{"total":-0.5}}` + "\n"
	if buf.String() != want {
		t.Fatalf("jsonl:\n%s\nwant:\n%s", buf.String(), want)
	}

	buf.Reset()
	if err := s.ExportJSONL(&buf, Filter{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want one per step (3)", len(lines))
	}
	for _, l := range lines {
		var rec struct{ Episode, Level string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Episode == "" || rec.Level == "" {
			t.Fatalf("line %q: %v", l, err)
		}
	}

	if err := s.ExportJSONL(&buf, Filter{Episode: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("export of an unknown episode = %v, want ErrNotFound", err)
	}
}
