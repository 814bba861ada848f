package episodes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
)

// StoreFile is the store a subcommand names: the file (or URL) db when
// set, else dir/regiment.db.
func StoreFile(dir, db string) string {
	if db != "" {
		return db
	}
	return filepath.Join(dir, "regiment.db")
}

// Use opens the store at path, read-only unless write, runs f on it and
// closes it. A path that is a URL is a running daemon's: its store's
// snapshot is downloaded (with the bearer token of Token(tokenFile)) into a
// temporary file, read and removed; it cannot be written, and the error
// names what, the action refused.
func Use(ctx context.Context, path, tokenFile string, write bool, what string, f func(s *store.Store) error) error {
	if IsURL(path) {
		if write {
			return fmt.Errorf("%s is a read-only snapshot of a running daemon's store: %s the store itself, with its daemon stopped", path, what)
		}
		srcs, done, err := Resolve(ctx, path, tokenFile)
		defer done()
		if err != nil {
			return err
		}
		path = srcs[0].Path
	}
	s, err := Open(path, write)
	if err != nil {
		return err
	}
	defer s.Close()
	return f(s)
}

// InDomain is f after checking that the store has recorded domain (when
// set): a misspelt domain is an error wrapping ErrUnknown, naming the
// closest (CheckDomain).
func InDomain(domain string, f func(s *store.Store) error) func(s *store.Store) error {
	return func(s *store.Store) error {
		if domain != "" {
			if err := CheckDomain(s, domain); err != nil {
				return err
			}
		}
		return f(s)
	}
}

// ParseRange parses the --from and --to times of a step range (ParseTime,
// relative to now); its errors name the flag.
func ParseRange(from, to string, now time.Time) (time.Time, time.Time, error) {
	f, err := ParseTime(from, now)
	if err != nil {
		return f, f, fmt.Errorf("--from: %w", err)
	}
	t, err := ParseTime(to, now)
	if err != nil {
		return f, t, fmt.Errorf("--to: %w", err)
	}
	return f, t, nil
}

// Cutoff is prune's cutoff: now minus olderThan (a duration or whole days,
// ParseDuration), or the time before (ParseTime); exactly one is given.
// Its errors name the flags.
func Cutoff(olderThan, before string, now time.Time) (time.Time, error) {
	if (olderThan == "") == (before == "") {
		return time.Time{}, errors.New("give exactly one of --older-than and --before")
	}
	if olderThan != "" {
		d, err := ParseDuration(olderThan)
		if err != nil || d <= 0 {
			return time.Time{}, fmt.Errorf("--older-than %q: want a positive duration such as 168h or 30d", olderThan)
		}
		return now.Add(-d), nil
	}
	t, err := ParseTime(before, now)
	if err != nil {
		return t, fmt.Errorf("--before: %w", err)
	}
	return t, nil
}

// Repair copies what is readable of the damaged store at path into dst
// (default: regiment.repaired.db next to it; store.Repair) and writes what
// it copied and what it skipped.
func Repair(w io.Writer, path, dst string) error {
	if dst == "" {
		dst = filepath.Join(filepath.Dir(path), "regiment.repaired.db")
	}
	rep, err := store.Repair(path, dst)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s: %d keys in %d buckets\n", dst, rep.Keys, rep.Buckets)
	if len(rep.Skipped) == 0 {
		fmt.Fprintln(w, "skipped nothing: every page read back")
		return nil
	}
	fmt.Fprintf(w, "skipped %d damaged parts:\n", len(rep.Skipped))
	for _, sk := range rep.Skipped {
		fmt.Fprintf(w, "  %s\n", sk)
	}
	return nil
}
