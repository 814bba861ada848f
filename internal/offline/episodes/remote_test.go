package episodes

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
)

// snapshotStore writes a store with one episode of n steps and returns it.
func snapshotStore(t *testing.T, n int) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "soldier-payment.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := st.BeginEpisode(store.Episode{ID: "e", Level: "soldier", Domain: "payment", Started: t0}); err != nil {
		t.Fatal(err)
	}
	a := st.NewAppender(64, time.Hour)
	for i := range n {
		if err := a.Append(store.Step{Episode: "e", Seq: uint64(i), At: t0.Add(time.Duration(i) * time.Second), Outcome: map[string]float64{"x": float64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDownloadReadsTheSnapshotOfAURL serves a store's snapshot as a daemon
// does (its /store) and downloads it from the bare address and from the
// full URL, with the token: the file, named as the server says, opens with
// every step.
func TestDownloadReadsTheSnapshotOfAURL(t *testing.T) {
	st := snapshotStore(t, 300)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != StorePath || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="soldier-payment.db"`)
		if _, err := st.Snapshot(w, func(n int64) { w.Header().Set("Content-Length", strconv.FormatInt(n, 10)) }); err != nil {
			t.Error(err)
		}
	}))
	defer srv.Close()
	for _, u := range []string{srv.URL, srv.URL + "/", srv.URL + StorePath} {
		path, err := Download(context.Background(), u, "tok", t.TempDir())
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if filepath.Base(path) != "soldier-payment.db" {
			t.Errorf("%s saved as %s, want soldier-payment.db", u, path)
		}
		got, err := store.Open(path, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("%s: the download is not a store: %v", u, err)
		}
		n, err := got.StepCount("e")
		got.Close()
		if err != nil || n != 300 {
			t.Errorf("%s: %d steps (%v), want 300", u, n, err)
		}
	}
	srcs, done, err := Sources(context.Background(), srv.URL+"/", "tok")
	if err != nil || len(srcs) != 1 || srcs[0].Name != srv.URL+"/" {
		t.Fatalf("Sources: %+v, %v", srcs, err)
	}
	done()
	if _, err := os.Stat(srcs[0].Path); !os.IsNotExist(err) {
		t.Errorf("the download %s is left after done: %v", srcs[0].Path, err)
	}
}

// TestDownloadErrorsSayWhatToDo pins the errors of a bad address: each
// names the URL and what went wrong, and none leaves a file behind.
func TestDownloadErrorsSayWhatToDo(t *testing.T) {
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, "# HELP x\n")
	}))
	defer metrics.Close()
	short := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", "8192")
		w.Write(make([]byte, 4096))
		panic(http.ErrAbortHandler) // the daemon stopped mid-snapshot
	}))
	defer short.Close()
	codes := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		http.Error(w, "refused", code)
	}))
	defer codes.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()
	for _, tc := range []struct {
		name, url string
		want      []string
	}{
		{"not http", "ftp://localhost:9465/", []string{"bad URL", "http(s)://host:port/"}},
		{"no host", "http:///store", []string{"bad URL"}},
		{"nothing listens", closed, []string{"connection refused", "port-forward"}},
		{"no token", codes.URL + "/store?code=401", []string{"401 Unauthorized", "--http-token-file", TokenEnv}},
		{"not a daemon", codes.URL + "/store?code=404", []string{"404 Not Found", "--listen address"}},
		{"a server error", codes.URL + "/store?code=503", []string{"503 Service Unavailable: refused"}},
		{"the metrics, not the store", metrics.URL + "/metrics", []string{`"text/plain; version=0.0.4", not a store snapshot`}},
		{"cut short", short.URL + "/", []string{"cut short"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Download(context.Background(), tc.url, "", dir)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(tc.want, "download store") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("left %v behind", left)
			}
		})
	}
}
