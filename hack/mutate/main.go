// Command mutate is the repository's mutation check (make mutate): it applies
// each mutation of its list, one at a time, to a temporary copy of the tree,
// runs the tests of the mutation's package there with -count=1, and expects
// them to fail. It prints one line per mutant, killed or survived, and exits
// 1 if any survived, 2 if the list is wrong: a mutation's original text
// must occur exactly once in its file, and the mutated package must build. The working tree is never modified.
//
// Usage, from the repository's root:
//
//	go run ./hack/mutate [-run substring]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// mutant is one small change expected to fail its package's tests.
type mutant struct {
	Name     string // what it breaks
	File     string // relative to the repository's root
	Original string // exact text, occurring once in File
	Mutated  string
	Pkg      string // package to test, "./internal/core/soldier"
	Run      string // -run pattern narrowing the tests; "" runs them all
}

func main() {
	only := flag.String("run", "", "test only the mutants whose name contains this")
	timeout := flag.Duration("timeout", 10*time.Minute, "time limit of each mutant's test run")
	flag.Parse()
	if err := run(*only, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		var s survivors
		if errors.As(err, &s) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

type survivors int

func (s survivors) Error() string { return fmt.Sprintf("%d mutant(s) survived", int(s)) }

func run(only string, timeout time.Duration) error {
	root, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("find the repository: %w", err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return fmt.Errorf("find the repository: run from its root: %w", err)
	}
	tmp, err := os.MkdirTemp("", "regiment-mutate-")
	if err != nil {
		return fmt.Errorf("make the temporary copy: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(root, tmp); err != nil {
		return fmt.Errorf("copy the tree to %s: %w", tmp, err)
	}
	// Check every mutation applies before spending time on tests.
	for _, m := range mutants {
		b, err := os.ReadFile(filepath.Join(tmp, m.File))
		if err != nil {
			return fmt.Errorf("mutant %q: %w", m.Name, err)
		}
		if n := strings.Count(string(b), m.Original); n != 1 {
			return fmt.Errorf("mutant %q: %s holds %q %d times, want once", m.Name, m.File, m.Original, n)
		}
	}
	survived, tested := 0, 0
	fmt.Printf("%-9s %-7s %-26s %s\n", "RESULT", "TIME", "PACKAGE", "MUTANT")
	for _, m := range mutants {
		if only != "" && !strings.Contains(m.Name, only) {
			continue
		}
		tested++
		start := time.Now()
		killed, out, err := try(tmp, m, timeout)
		if err != nil {
			return err
		}
		result := "killed"
		if !killed {
			result, survived = "SURVIVED", survived+1
		}
		fmt.Printf("%-9s %-7s %-26s %s\n", result, time.Since(start).Round(time.Second), m.Pkg, m.Name)
		if !killed && os.Getenv("MUTATE_VERBOSE") != "" {
			fmt.Println(out)
		}
	}
	fmt.Printf("%d mutants, %d killed, %d survived\n", tested, tested-survived, survived)
	if survived > 0 {
		return survivors(survived)
	}
	return nil
}

// try applies m in the copy at dir, runs its tests and restores the file.
// A failing test run kills the mutant (a run that times out fails); a
// mutant that does not build is an error of the list, not a kill.
func try(dir string, m mutant, timeout time.Duration) (killed bool, out string, err error) {
	path := filepath.Join(dir, m.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		return false, "", fmt.Errorf("mutant %q: %w", m.Name, err)
	}
	mutated := strings.Replace(string(orig), m.Original, m.Mutated, 1)
	if err := os.WriteFile(path, []byte(mutated), 0o644); err != nil {
		return false, "", fmt.Errorf("mutant %q: write %s: %w", m.Name, path, err)
	}
	defer os.WriteFile(path, orig, 0o644)
	args := []string{"test", "-count=1", "-timeout", timeout.String()}
	if m.Run != "" {
		args = append(args, "-run", m.Run)
	}
	args = append(args, m.Pkg)
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	b, runErr := cmd.CombinedOutput()
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return false, string(b), fmt.Errorf("mutant %q: go %s: %w", m.Name, strings.Join(args, " "), runErr)
	}
	if strings.Contains(string(b), "[build failed]") || strings.Contains(string(b), "[setup failed]") {
		return false, string(b), fmt.Errorf("mutant %q does not build, so no test can kill it:\n%s", m.Name, b)
	}
	return runErr != nil, string(b), nil
}

// copyTree copies the regular files and directories under src to dst,
// leaving out .git.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.Name() == ".git" { // a directory, or a worktree's file
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, info.Mode().Perm())
		}
		return nil // symlinks, FIFOs and the like are not the code under test
	})
}
