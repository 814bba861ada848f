package regiment_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// module is the repository's module path; packages are named relative to it.
const module = "github.com/regimentd/regiment"

// archDoc holds the import table: one row per package, its role and what it
// may import. The table is the rule; this file only enforces it.
const archDoc = "docs/architecture.md"

// thirdParty maps the short names the table uses for outside modules to the
// import-path prefixes they stand for.
var thirdParty = map[string][]string{
	"HCL":                  {"github.com/hashicorp/hcl/"},
	"go-cty":               {"github.com/zclconf/go-cty/"},
	"bbolt":                {"go.etcd.io/bbolt"},
	"nats":                 {"github.com/nats-io/nats.go"},
	"nats-server":          {"github.com/nats-io/nats-server/"},
	"nkeys":                {"github.com/nats-io/nkeys"},
	"go-hclog":             {"github.com/hashicorp/go-hclog"},
	"client-go":            {"k8s.io/", "github.com/go-logr/logr"},
	"x/time/rate":          {"golang.org/x/time/rate"},
	"golang.org/x/sys/cpu": {"golang.org/x/sys/cpu"},
	"prometheus":           {"github.com/prometheus/"},
	"gonum":                {"gonum.org/v1/gonum/"},
	"gonum/plot":           {"gonum.org/v1/plot"},
	"kustomize":            {"sigs.k8s.io/kustomize/"},
	"go-containerregistry": {"github.com/google/go-containerregistry/"},
}

// importRule is one row of the table: the packages it names and what they may
// import (module-relative package paths and outside-module prefixes). any
// marks a row whose packages may import anything.
type importRule struct {
	line     int
	packages []string
	inside   map[string]bool
	outside  []string
	any      bool
}

var (
	tableRow   = regexp.MustCompile(`^\|\s*(` + "`" + `[^|]+)\|[^|]*\|([^|]*)\|\s*$`)
	backticked = regexp.MustCompile("`([^`]+)`")
	aside      = regexp.MustCompile(`\s*\([^)]*\)`)
)

// readImportRules parses the import table of doc. Every package a row names
// maps to its rule; a token it cannot place is an error.
func readImportRules(path string) (map[string]importRule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []importRule
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		m := tableRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		r := importRule{line: n, inside: map[string]bool{}}
		for _, p := range backticked.FindAllStringSubmatch(m[1], -1) {
			r.packages = append(r.packages, p[1])
		}
		rows = append(rows, r)
		for _, tok := range strings.Split(aside.ReplaceAllString(m[2], ""), ",") {
			rows[len(rows)-1].inside[strings.TrimSpace(tok)] = true // resolved below
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, r := range rows {
		for _, p := range r.packages {
			known[p] = true
		}
	}
	rules := map[string]importRule{}
	for _, r := range rows {
		tokens := r.inside
		r.inside = map[string]bool{}
		for tok := range tokens {
			switch {
			case tok == "stdlib" || tok == "":
			case tok == "anything":
				r.any = true
			case known[tok]:
				r.inside[tok] = true
			case thirdParty[tok] != nil:
				r.outside = append(r.outside, thirdParty[tok]...)
			default:
				return nil, fmt.Errorf("%s:%d: %q is neither a package of the table nor a known outside module", path, r.line, tok)
			}
		}
		for _, p := range r.packages {
			rules[p] = r
		}
	}
	return rules, nil
}

// checkImports returns one line per import the rules do not allow, and per
// package with no row, naming the package, the import and the rule's line.
func checkImports(rules map[string]importRule, imports map[string][]string) []string {
	var bad []string
	for pkg, deps := range imports {
		r, ok := rules[pkg]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s has no row in %s's import table", pkg, archDoc))
			continue
		}
		if r.any {
			continue
		}
		for _, d := range deps {
			if rel, ok := strings.CutPrefix(d, module+"/"); ok {
				if !r.inside[rel] {
					bad = append(bad, fmt.Sprintf("%s imports %s, which its row (%s:%d) does not allow", pkg, rel, archDoc, r.line))
				}
				continue
			}
			if !strings.Contains(strings.SplitN(d, "/", 2)[0], ".") {
				continue // the standard library
			}
			if !slices.ContainsFunc(r.outside, func(p string) bool { return strings.HasPrefix(d, p) }) {
				bad = append(bad, fmt.Sprintf("%s imports %s, which its row (%s:%d) does not allow", pkg, d, archDoc, r.line))
			}
		}
	}
	used := map[int]map[string]bool{}
	for pkg, deps := range imports {
		r := rules[pkg]
		if used[r.line] == nil {
			used[r.line] = map[string]bool{}
		}
		for _, d := range deps {
			if rel, ok := strings.CutPrefix(d, module+"/"); ok {
				used[r.line][rel] = true
			}
		}
	}
	seen := map[int]bool{}
	for _, r := range rules {
		if r.any || seen[r.line] {
			continue
		}
		seen[r.line] = true
		for dep := range r.inside {
			if !used[r.line][dep] {
				bad = append(bad, fmt.Sprintf("%s:%d lists %s, which %s does not import", archDoc, r.line, dep, strings.Join(r.packages, ", ")))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// moduleImports lists, through `go list -deps`, every package of the module
// with the packages its non-test files import.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{"\t"}}{{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, "\t")
		rel, ok := strings.CutPrefix(pkg, module+"/")
		if !ok {
			continue
		}
		imports[rel] = strings.Fields(deps)
	}
	return imports
}

// TestEveryImportIsAllowedByTheArchitectureTable holds every package of the
// module to its row of docs/architecture.md: an import the row does not list
// (a core reaching up into an adapter, an adapter into a process) fails,
// naming the package, the import and the row.
func TestEveryImportIsAllowedByTheArchitectureTable(t *testing.T) {
	rules, err := readImportRules(archDoc)
	if err != nil {
		t.Fatal(err)
	}
	imports := moduleImports(t)
	if len(imports) < 20 {
		t.Fatalf("go list found %d packages of %s, want the whole module", len(imports), module)
	}
	for _, b := range checkImports(rules, imports) {
		t.Error(b)
	}
	for pkg := range rules {
		if _, ok := imports[pkg]; !ok {
			t.Errorf("%s has a row in %s but is not a package of the module", pkg, archDoc)
		}
	}
}

// TestImportCheckNamesAPlantedUpwardImport plants imports the table forbids:
// a core (soldier) reaching the bus adapter and bbolt, and a package with no
// row, and expects each named.
func TestImportCheckNamesAPlantedUpwardImport(t *testing.T) {
	rules, err := readImportRules(archDoc)
	if err != nil {
		t.Fatal(err)
	}
	imports := moduleImports(t)
	imports["internal/core/soldier"] = append(slices.Clone(imports["internal/core/soldier"]), module+"/internal/adapter/bus", "go.etcd.io/bbolt")
	imports["nowhere"] = nil
	got := strings.Join(checkImports(rules, imports), "\n")
	for _, want := range []string{
		"internal/core/soldier imports internal/adapter/bus, which its row (" + archDoc + ":",
		"internal/core/soldier imports go.etcd.io/bbolt, which its row",
		"nowhere has no row in " + archDoc,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the check did not say %q; it said:\n%s", want, got)
		}
	}
}
