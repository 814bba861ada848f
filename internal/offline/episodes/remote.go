package episodes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/cli"
)

// StorePath is the path at which a daemon serves a snapshot of its store
// (daemon.StorePath): a URL given without a path gets it.
const StorePath = "/store"

// TokenEnv is the environment variable holding the bearer token of a
// daemon's HTTP port when no token file is given.
const TokenEnv = "REGIMENT_HTTP_TOKEN"

// IsURL reports whether s names a daemon's HTTP address ("http://" or
// "https://") rather than a file or directory.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// Token is the bearer token to send to a daemon's HTTP port: the content of
// file, whitespace trimmed (--http-token-file), else $REGIMENT_HTTP_TOKEN,
// else "" (none).
func Token(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(TokenEnv)), nil
	}
	return cli.ReadTokenFile(file)
}

// Source is one store to read: Path is a local bbolt file, Name what to call
// it (the path, or the URL it was downloaded from).
type Source struct {
	Name, Path string
}

// Open opens the store read-only for the command what ("calibrate",
// "report"): a store a running daemon holds is refused with how to read it
// instead (a copy, or the daemon's snapshot).
func (src Source) Open(what string) (*store.Store, error) {
	st, err := store.Open(src.Path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrLocked) {
		return nil, fmt.Errorf("open episodes: %s is locked by another process (a running daemon or \"regiment run\"); %s on a copy, or on the daemon's snapshot: --episodes http://<its --listen address>/", src.Name, what)
	}
	if err != nil {
		return nil, fmt.Errorf("open episodes %q: %w", src.Name, err)
	}
	return st, nil
}

// Sources resolves spec, a comma-separated list of bbolt files, directories
// (every *.db file in them: the --data directory of the daemons or of
// "regiment run") and daemon URLs (http(s)://host:port[/store]), into local
// store files. Each URL's snapshot is downloaded (Download, with token)
// into a temporary directory that done removes; done is never nil.
func Sources(ctx context.Context, spec, token string) (srcs []Source, done func(), err error) {
	done = func() {}
	tmp := ""
	defer func() {
		if err != nil {
			done()
			done = func() {}
		}
	}()
	for _, p := range strings.Split(spec, ",") {
		if !IsURL(p) {
			if p == "" {
				continue
			}
			paths, err := StoreFiles(p)
			if err != nil {
				return nil, done, err
			}
			for _, path := range paths {
				srcs = append(srcs, Source{Name: path, Path: path})
			}
			continue
		}
		if tmp == "" {
			if tmp, err = os.MkdirTemp("", "regiment-store-"); err != nil {
				return nil, done, fmt.Errorf("open episodes: %w", err)
			}
			done = func() { _ = os.RemoveAll(tmp) }
		}
		dir := filepath.Join(tmp, strconv.Itoa(len(srcs)))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, done, fmt.Errorf("open episodes: %w", err)
		}
		path, err := Download(ctx, p, token, dir)
		if err != nil {
			return nil, done, err
		}
		srcs = append(srcs, Source{Name: p, Path: path})
	}
	if len(srcs) == 0 {
		return nil, done, errors.New("open episodes: no store given")
	}
	return srcs, done, nil
}

// Resolve is Sources with the bearer token of Token(tokenFile): the
// stores of spec for `regiment calibrate`, `report` and `episodes --db`.
// done is never nil.
func Resolve(ctx context.Context, spec, tokenFile string) (srcs []Source, done func(), err error) {
	tok, err := Token(tokenFile)
	if err != nil {
		return nil, func() {}, err
	}
	return Sources(ctx, spec, tok)
}

// StoreURL is the snapshot URL of raw, a daemon's address: an http(s) URL
// with a host, its path StorePath when it has none ("/" or "").
func StoreURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("download store: bad URL %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("download store: bad URL %q: want http(s)://host:port/, a daemon's --listen address (e.g. http://localhost:9465/)", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = StorePath
	}
	return u.String(), nil
}

// downloadHeaderTimeout bounds connecting and waiting for the answer's
// headers; the body takes as long as it takes (until ctx ends).
const downloadHeaderTimeout = 30 * time.Second

// Download fetches the store snapshot served at raw (a daemon's address,
// StoreURL) with the bearer token, if any, into a new file in dir named
// after the daemon's store (soldier-<domain>.db), and returns its path. It
// fails with an error saying what to do on a bad URL, a refused
// connection, an HTTP error (401: the token; 404: not a daemon's store), an
// answer that is not a snapshot, or one cut short.
func Download(ctx context.Context, raw, token, dir string) (string, error) {
	u, err := StoreURL(raw)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("download store %s: %w", u, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: downloadHeaderTimeout,
	}}
	resp, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("download store %s: %w (is the daemon, or the port-forward to it, running?)", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		why := strings.TrimSpace(string(msg))
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			why += "; give the daemon's token with --http-token-file or $" + TokenEnv
		case http.StatusNotFound:
			why += "; point at a commander's or soldier's --listen address (e.g. http://localhost:9465/)"
		}
		return "", fmt.Errorf("download store %s: %s: %s", u, resp.Status, why)
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "application/octet-stream" {
		return "", fmt.Errorf("download store %s: the answer is %q, not a store snapshot (application/octet-stream): point at a commander's or soldier's --listen address", u, resp.Header.Get("Content-Type"))
	}
	name := "store.db"
	if _, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err == nil {
		if f := filepath.Base(params["filename"]); strings.HasSuffix(f, ".db") && f == filepath.Clean(f) && !strings.ContainsAny(f, `/\`) {
			name = f
		}
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("download store %s: %w", u, err)
	}
	n, err := io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = fmt.Errorf("%d of %d bytes", n, resp.ContentLength)
	}
	if err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("download store %s: cut short: %w", u, err)
	}
	return path, nil
}
