package regiment_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// raceExempt are the packages that start goroutines but make test runs
// without the race detector, each with why. Each is a gap to close when CI's
// time allows (issue 36): move it to RACE_PKGS and measure.
var raceExempt = map[string]string{
	"internal/adapter/kube":         "its tests need a real control plane (~3 min without -race); -race on client-go not yet measured within CI's 90 min",
	"internal/adapter/kube/testenv": "starts and waits on the control-plane processes; exercised only by the kube, deploy, e2e and cmd/regiment tests",
}

// TestMakeTestRunsRaceOnEveryPackageThatStartsGoroutines pins the Makefile's
// RACE_PKGS: every package whose non-test code has a go statement or a
// WaitGroup.Go runs under -race in make test, unless raceExempt says why not.
func TestMakeTestRunsRaceOnEveryPackageThatStartsGoroutines(t *testing.T) {
	race := racePkgs(t)
	for _, dir := range goroutinePkgs(t) {
		if _, ok := raceExempt[dir]; ok || slices.ContainsFunc(race, func(p string) bool { return covers(p, dir) }) {
			continue
		}
		t.Errorf("%s starts goroutines but is not in the Makefile's RACE_PKGS %q (nor in raceExempt)", dir, race)
	}
}

// TestMakeTestRequiresKubernetes pins that the Makefile's test target
// exports REGIMENT_K8S_REQUIRED=1, so absent control-plane binaries fail
// make test rather than skip (internal/adapter/kube/testenv.Required).
func TestMakeTestRequiresKubernetes(t *testing.T) {
	b, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^test: export REGIMENT_K8S_REQUIRED = 1$`).Match(b) {
		t.Error("Makefile: the test target does not export REGIMENT_K8S_REQUIRED = 1")
	}
}

// racePkgs returns the Makefile's RACE_PKGS, as written (./internal/core/soldier/, ./internal/adapter/bus/...).
func racePkgs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RACE_PKGS \?= (.+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Makefile: no RACE_PKGS ?= line")
	}
	if !regexp.MustCompile(`(?m)^\t\$\(GO\) test -race -count=1 (-timeout \S+ )?\$\(RACE_PKGS\)$`).Match(b) {
		t.Fatal("Makefile: the test target does not run $(GO) test -race -count=1 $(RACE_PKGS)")
	}
	return strings.Fields(string(m[1]))
}

// covers says whether the go test pattern p (./x/ or ./x/...) names dir (x/y).
func covers(p, dir string) bool {
	p = strings.TrimPrefix(p, "./")
	if rest, ok := strings.CutSuffix(p, "..."); ok {
		rest = strings.TrimSuffix(rest, "/")
		return dir == rest || strings.HasPrefix(dir, rest+"/")
	}
	return strings.TrimSuffix(p, "/") == dir
}

// goroutinePkgs returns the directories (slash, relative) of the packages
// whose non-test Go files have a go statement or call a .Go method.
func goroutinePkgs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		found := false
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				found = true
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Go" {
					found = true
				}
			}
			return !found
		})
		if dir := filepath.ToSlash(filepath.Dir(path)); found && !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no package starts a goroutine: the walk found nothing")
	}
	return dirs
}
