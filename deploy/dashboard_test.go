package deploy

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/regimentd/regiment/internal/daemon"
)

const dashboardFile = "chart/regiment/dashboards/regiment.json"

// exportedNames records the metric names of the collectors registered on
// it, with the series names a histogram or summary adds (_bucket, _sum,
// _count), from their descriptions: a vector with no series yet is known
// too, which gathering would miss.
type exportedNames map[string]bool

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (n exportedNames) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	var suffixes []string
	switch c.(type) {
	case prometheus.Histogram, *prometheus.HistogramVec:
		suffixes = []string{"_bucket", "_sum", "_count"}
	case prometheus.Summary, *prometheus.SummaryVec:
		suffixes = []string{"_sum", "_count"}
	}
	for d := range ch {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			return nil
		}
		n[m[1]] = true
		for _, s := range suffixes {
			n[m[1]+s] = true
		}
	}
	return nil
}

func (n exportedNames) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = n.Register(c)
	}
}

func (n exportedNames) Unregister(prometheus.Collector) bool { return false }

// daemonMetrics is every metric name a Commander or a Soldier exports: the
// daemon package's own (NewMetrics, RegisterConn) and the runtime and
// process collectors of its registry (NewRegistry), gathered.
func daemonMetrics(t *testing.T) exportedNames {
	t.Helper()
	names := exportedNames{}
	for _, component := range []string{"commander", "soldier"} {
		daemon.NewMetrics(names, component)
		daemon.RegisterConn(names, component, nil) // its counters read the connection only when collected
	}
	mfs, err := daemon.NewRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		names[mf.GetName()] = true
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[mf.GetName()+s] = true
			}
		}
	}
	return names
}

// promqlMetrics returns the metric names an expression selects: what is
// left once strings, label matchers, ranges, grouping clauses, Grafana
// variables, numbers, functions and keywords are taken out.
func promqlMetrics(expr string) []string {
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`"(\\.|[^"\\])*"|'(\\.|[^'\\])*'`),
		regexp.MustCompile(`\{[^}]*\}`),
		regexp.MustCompile(`\[[^\]]*\]`),
		regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`),
		regexp.MustCompile(`\$\{?\w+\}?`),
		regexp.MustCompile(`\b\d+(ms|s|m|h|d|w|y)\b`),
		regexp.MustCompile(`\b\d+(\.\d+)?([eE][-+]?\d+)?\b`),
	} {
		expr = re.ReplaceAllString(expr, " ")
	}
	keywords := map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true,
		"group_right": true, "bool": true, "and": true, "or": true, "unless": true, "offset": true, "inf": true, "nan": true}
	var out []string
	ident := regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	for _, m := range ident.FindAllString(expr, -1) {
		if strings.HasSuffix(m, "(") || keywords[strings.ToLower(m)] {
			continue // a function or an aggregation
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

var labelValues = regexp.MustCompile(`^\s*label_values\((.*),\s*\w+\s*\)\s*$`)

// variableExpr is the PromQL of a Grafana variable's query:
// label_values(selector, label) selects selector (the label is no metric);
// query_result(expr) and anything else is PromQL as is.
func variableExpr(query string) string {
	if m := labelValues.FindStringSubmatch(query); m != nil {
		return m[1]
	}
	return query
}

func TestPromQLMetrics(t *testing.T) {
	cases := map[string]struct {
		expr string
		want []string
	}{
		"a histogram quantile":      {`histogram_quantile(0.99, sum by (le, domain) (rate(x_seconds_bucket{namespace="$namespace",domain=~"a|b"}[$__rate_interval])))`, []string{"x_seconds_bucket"}},
		"arithmetic on two":         {`60 * sum(rate(a_total[5m])) / on (pod) group_left (domain) b_info offset 1h`, []string{"a_total", "b_info"}},
		"a variable's label_values": {variableExpr(`label_values(regiment_soldier_ticks_total{namespace="$namespace"}, domain)`), []string{"regiment_soldier_ticks_total"}},
		"a bare selector":           {`up`, []string{"up"}},
		"strings hold no name":      {`count(a{b="c d", e='f(g)'}) > bool 1e3`, []string{"a"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := promqlMetrics(c.expr); !slices.Equal(got, c.want) {
				t.Errorf("promqlMetrics(%s) = %v, want %v", c.expr, got, c.want)
			}
		})
	}
}

// TestDashboardUsesExportedMetrics: every metric a panel or a variable of
// the Grafana dashboard queries is one the daemons export, so no panel of
// the shipped dashboard is empty by a typo or a renamed metric.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	exported := daemonMetrics(t)
	used := map[string]bool{}
	check := func(where, expr string) {
		for _, m := range promqlMetrics(expr) {
			used[m] = true
			if !exported[m] {
				t.Errorf("%s: %s is not a metric the daemons export (in %s)", where, m, expr)
			}
		}
	}
	panels := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		panels++
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			check("panel "+p.Title, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(map[string]any); ok {
			query, _ := q["query"].(string)
			check("variable "+v.Name, variableExpr(query))
		}
	}
	var names []string
	for m := range used {
		names = append(names, m)
	}
	sort.Strings(names)
	t.Logf("%d panels query %d metrics: %s", panels, len(names), strings.Join(names, " "))
	if dash.UID != "regiment" || panels < 10 {
		t.Errorf("uid %q, %d panels", dash.UID, panels)
	}
}
