package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/daemon"
)

// serveStore serves st as a daemon does (its HTTP server's /store) behind
// token, and returns its URL.
func serveStore(t *testing.T, st *store.Store, token string) string {
	t.Helper()
	p, err := daemon.ServeProbes("127.0.0.1:0", prometheus.NewRegistry(), func() string { return "" },
		daemon.HTTPOptions{Store: st, Token: token}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return "http://" + p.Addr() + "/"
}

// TestEpisodesReadARunningDaemonsSnapshot: the store a running daemon
// holds (locked) is read through the daemon's URL, with its token from a
// file or the environment; without it the command says 401 and how to give
// it, and a command that writes refuses the URL.
func TestEpisodesReadARunningDaemonsSnapshot(t *testing.T) {
	dir := epFixture(t)
	held, err := store.Open(filepath.Join(dir, "regiment.db"), store.Options{}) // the running daemon's
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	url := serveStore(t, held, "s3cret")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "list", "--db", url, "--http-token-file", tokenFile)
	wantLines(t, out, "sol-payment soldier payment ppo@3")
	t.Setenv("REGIMENT_HTTP_TOKEN", "s3cret")
	out = mustRun(t, "show", "--db", url, "--episode", "sol-payment")
	if !strings.Contains(out, "budget-cap") {
		t.Errorf("show over the URL lacks the guarded step:\n%s", out)
	}
	t.Setenv("REGIMENT_HTTP_TOKEN", "")
	for _, tc := range []struct {
		rule string
		args []string
		want string
	}{
		{"no token", []string{"list", "--db", url}, "401 Unauthorized"},
		{"a write", []string{"prune", "--db", url, "--http-token-file", tokenFile, "--before", "2024-05-01T12:05:00Z"}, "read-only snapshot of a running daemon's store"},
	} {
		code, _, errOut := runEp(t, tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", tc.rule, code, errOut, tc.want)
		}
	}
}

// TestReportReadsARunningDaemonsURL reports on a recommend run's store
// through a daemon's URL: the same figures as from the file.
func TestReportReadsARunningDaemonsURL(t *testing.T) {
	dir := t.TempDir()
	cfgPath := recommendConfig(t, dir, "payment")
	data := filepath.Join(dir, "data")
	run(t, cfgPath, data, "30m")
	report := func(episodes string) string {
		var stdout, stderr bytes.Buffer
		if code := runReport(context.Background(), []string{"--config", cfgPath, "--episodes", episodes, "--out", t.TempDir()}, &stdout, &stderr); code != 0 {
			t.Fatalf("regiment report --episodes %s exited %d: %s", episodes, code, stderr.String())
		}
		return strings.Split(stdout.String(), "\nwrote ")[0]
	}
	fromFile := report(data)
	held, err := store.Open(filepath.Join(data, "regiment.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if fromURL := report(serveStore(t, held, "")); fromURL != fromFile || !strings.Contains(fromFile, "payment: 180 steps") {
		t.Errorf("from the URL:\n%s\nfrom the file:\n%s", fromURL, fromFile)
	}
}
