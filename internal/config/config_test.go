package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// base is the smallest valid config. Rule tests edit it in place (keeping
// line numbers where they can) or append to it, from line 12.
const base = `cluster "prod" {
  capacity_cores = 100
}
domain "pay" {
  floor = 0.2
  slo { latency_p99 = "100ms" }
  apps "web" {
    cpu_per_replica = 0.5
    service_time    = "10ms"
  }
}
`

// domainB is a second valid domain to append to base; it starts at line 12.
const domainB = `domain "b" {
  floor = 0.1
  slo { latency_p99 = "100ms" }
  apps "db" {
    cpu_per_replica = 1
    service_time    = "5ms"
  }
}
`

// diagnostics returns err as Diagnostics, failing the test if it is not one.
func diagnostics(t *testing.T, err error) Diagnostics {
	t.Helper()
	var ds Diagnostics
	if !errors.As(err, &ds) {
		t.Fatalf("error %v (%T) is not Diagnostics", err, err)
	}
	return ds
}

// ruleCase pins one validation rule: the base config with edits applied and
// add appended yields exactly one diagnostic, at line:col, whose summary and
// hint contain the given texts.
type ruleCase struct {
	name    string
	edit    []string // old, new pairs applied to base
	add     string
	line    int
	col     int
	summary string
	hint    string
}

func TestParseRules(t *testing.T) {
	cases := []ruleCase{
		// HCL itself.
		{name: "syntax errors are reported at their position",
			edit: []string{"capacity_cores = 100", "capacity_cores = = 100"},
			line: 2, col: 20, summary: "Invalid expression"},
		{name: "several attributes on one line are a syntax error with a hint",
			add:  "commander { tick = \"60s\"  policy = \"forecast\" }\n",
			line: 12, col: 27, summary: "Invalid single-argument block definition", hint: "its own line"},
		{name: "variables are not allowed",
			edit: []string{"capacity_cores = 100", "capacity_cores = cores"},
			line: 2, col: 20, summary: "Variables not allowed"},

		// Unknown keys and blocks.
		{name: "unknown key suggests the nearest valid key",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  node_core = 32"},
			line: 3, col: 3, summary: `Unknown key "node_core" in cluster "prod"`, hint: `did you mean "node_cores"?`},
		{name: "unknown key with no near match lists the valid keys",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  zzz = 1"},
			line: 3, col: 3, summary: `Unknown key "zzz"`, hint: `"capacity_cores", "node_cores"`},
		{name: "unknown block suggests the nearest valid block",
			add:  "comander {\n  tick = \"60s\"\n}\n",
			line: 12, col: 1, summary: `Unknown block "comander" in the config file`, hint: `did you mean "commander"?`},
		{name: "unknown key inside a nested block",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    replicas = 3"},
			line: 10, col: 5, summary: `Unknown key "replicas" in apps "web"`},
		{name: "block written as an attribute",
			add:  "nats = \"nats://x:4222\"\n",
			line: 12, col: 1, summary: `Unknown key "nats"`, hint: "nats is a block"},
		{name: "attribute written as a block",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  node_cores {}"},
			line: 3, col: 3, summary: `Unknown block "node_cores"`, hint: "node_cores is an attribute"},

		// Blocks and labels.
		{name: "cluster block is required",
			edit: []string{"cluster \"prod\" {\n  capacity_cores = 100\n}\n", ""},
			line: 1, col: 1, summary: "Missing cluster block"},
		{name: "a second cluster block is a duplicate",
			add:  "cluster \"other\" {\n  capacity_cores = 1\n}\n",
			line: 12, col: 1, summary: "Duplicate cluster block", hint: "line 1"},
		{name: "at least one domain is required",
			edit: []string{base[strings.Index(base, "domain"):], ""},
			line: 1, col: 1, summary: "Missing domain block"},
		{name: "slo block is required",
			edit: []string{`  slo { latency_p99 = "100ms" }` + "\n", ""},
			line: 4, col: 1, summary: `Missing slo block in domain "pay"`},
		{name: "cluster needs a name label",
			edit: []string{`cluster "prod" {`, `cluster {`},
			line: 1, col: 1, summary: "Missing name of cluster block"},
		{name: "commander takes no label",
			add:  "commander \"main\" {\n}\n",
			line: 12, col: 11, summary: "Extra label on commander block"},
		{name: "names cannot contain a slash",
			edit: []string{`apps "web"`, `apps "w/eb"`},
			line: 7, col: 8, summary: `Invalid app set name "w/eb"`},
		{name: "names cannot contain a dot (they become NATS subjects)",
			edit: []string{`domain "pay"`, `domain "pay.eu"`},
			line: 4, col: 8, summary: `Invalid domain name "pay.eu"`},
		{name: "cluster names are checked too",
			edit: []string{`cluster "prod"`, `cluster "pr od"`},
			line: 1, col: 9, summary: `Invalid cluster name "pr od"`},
		{name: "a replica larger than a node never schedules",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 64"},
			line: 8, col: 23, summary: "Invalid cpu_per_replica"},

		// Types and units.
		{name: "wrong type names the expected type",
			edit: []string{"capacity_cores = 100", `capacity_cores = "100"`},
			line: 2, col: 20, summary: "Invalid capacity_cores", hint: "want a number, got the string \"100\" (write 100 without quotes)"},
		{name: "counts must be whole numbers",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    count = 1.5"},
			line: 9, col: 13, summary: "Invalid count", hint: "want a whole number, got 1.5"},
		{name: "bad duration unit gives an example",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10x"`},
			line: 9, col: 23, summary: "Invalid service_time", hint: `"10x" is not a duration (example: "30s")`},
		{name: "duration without a unit",
			edit: []string{`service_time    = "10ms"`, `service_time    = 10`},
			line: 9, col: 23, summary: "Invalid service_time", hint: `10 has no unit`},
		{name: "days are not a duration unit",
			edit: []string{`latency_p99 = "100ms"`, `latency_p99 = "1d"`},
			line: 6, col: 23, summary: "Invalid latency_p99", hint: `(example: "24h")`},
		{name: "list of strings expected",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    depends_on = \"b/db\""},
			line: 9, col: 18, summary: "Invalid depends_on", hint: "want a list of strings"},

		// Positive values.
		{name: "capacity_cores is required",
			edit: []string{"  capacity_cores = 100\n", ""},
			line: 1, col: 1, summary: "Missing capacity_cores"},
		{name: "capacity_cores must be positive",
			edit: []string{"capacity_cores = 100", "capacity_cores = 0"},
			line: 2, col: 20, summary: "Invalid capacity_cores", hint: "capacity_cores must be in (0, 10000000], got 0"},
		{name: "cpu_per_replica must be positive",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = -0.5"},
			line: 8, col: 23, summary: "Invalid cpu_per_replica", hint: "must be >= 0.001, got -0.5"},
		{name: "service_time must be positive",
			edit: []string{`service_time    = "10ms"`, `service_time    = "0s"`},
			line: 9, col: 23, summary: "Invalid service_time", hint: "must be > 0s, got 0s"},
		{name: "count must be positive",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    count = 0"},
			line: 9, col: 13, summary: "Invalid count", hint: "count must be in [1, 100000], got 0"},
		{name: "concurrency must be positive",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    concurrency = -2"},
			line: 9, col: 19, summary: "Invalid concurrency", hint: "must be in [1, 100000], got -2"},
		{name: "commander tick must be at least 100ms",
			add:  "commander {\n  tick = \"-1m\"\n}\n",
			line: 13, col: 10, summary: "Invalid tick", hint: "must be in [1ms, 24h0m0s], got -1m0s"},
		{name: "soldier tick must be at least 100ms",
			add:  "soldier {\n  tick = \"0s\"\n}\n",
			line: 13, col: 10, summary: "Invalid tick", hint: "must be in [1ms, 24h0m0s], got 0s"},
		{name: "provisioner_burst must be >= 0",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  provisioner_burst = -1"},
			line: 3, col: 23, summary: "Invalid provisioner_burst", hint: "provisioner_burst must be in [0, 1000000], got -1"},
		{name: "provisioner_burst is a whole number of nodes",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  provisioner_burst = 2.5"},
			line: 3, col: 23, summary: "Invalid provisioner_burst", hint: "want a whole number, got 2.5"},
		{name: "a zero that a default would replace is an error",
			add:  "commander {\n  dead_zone = 0\n}\n",
			line: 13, col: 15, summary: "Invalid dead_zone", hint: "replaced by the default 0.02"},

		// The calendar.
		{name: "a calendar event for a domain not in the config",
			add:  "calendar {\n  event \"sale\" {\n    domain   = \"paymnt\"\n    start    = \"2026-11-27T08:00:00Z\"\n    duration = \"4h\"\n    load     = 2\n  }\n}\n",
			line: 14, col: 16, summary: `Unknown domain "paymnt"`, hint: `the config has no domain "paymnt"`},
		{name: "a calendar event plans a rise",
			add:  "calendar {\n  event \"sale\" {\n    domain   = \"pay\"\n    start    = \"2026-11-27T08:00:00Z\"\n    duration = \"4h\"\n    load     = 1\n  }\n}\n",
			line: 17, col: 16, summary: "Invalid load", hint: "load must be in (1, 20], got 1"},
		{name: "a calendar event needs its start",
			add:  "calendar {\n  event \"sale\" {\n    domain   = \"pay\"\n    duration = \"4h\"\n    load     = 2\n  }\n}\n",
			line: 13, col: 3, summary: "Missing start", hint: `start = "2026-11-27T08:00:00Z"`},
		{name: "a calendar event's start is a time",
			add:  "calendar {\n  event \"sale\" {\n    domain   = \"pay\"\n    start    = \"friday\"\n    duration = \"4h\"\n    load     = 2\n  }\n}\n",
			line: 15, col: 16, summary: "Invalid start", hint: "not an RFC 3339 time"},
		{name: "the calendar's ramp is within its lead",
			add:  "calendar {\n  lead = \"5m\"\n  ramp = \"10m\"\n}\n",
			line: 14, col: 10, summary: "Invalid ramp", hint: "ramp must be in (0s, 5m0s], got 10m0s"},
		{name: "the calendar's lead is at most six hours",
			add:  "calendar {\n  lead = \"12h\"\n}\n",
			line: 13, col: 10, summary: "Invalid lead", hint: "lead must be in (0s, 6h0m0s], got 12h0m0s"},

		// Shares.
		{name: "floor above ceiling",
			edit: []string{"floor = 0.2", "floor = 0.7\n  ceiling = 0.5"},
			line: 5, col: 11, summary: "Invalid floor", hint: "floor 0.7 is above ceiling 0.5"},
		{name: "floor outside [0, 1]",
			edit: []string{"floor = 0.2", "floor = 1.5"},
			line: 5, col: 11, summary: "Invalid floor", hint: "floor must be in [0, 1], got 1.5"},
		{name: "ceiling outside [0, 1]",
			edit: []string{"floor = 0.2", "floor = 0.2\n  ceiling = -0.1"},
			line: 6, col: 13, summary: "Invalid ceiling", hint: "ceiling must be in [0, 1], got -0.1"},
		{name: "floors summing over 1 are reported at the floor that crosses 1",
			edit: []string{"floor = 0.2", "floor = 0.95"},
			add:  domainB,
			line: 13, col: 11, summary: "Floors sum over 1", hint: "sum to 1.05"},

		// App sets.
		{name: "min_replicas above max_replicas",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    min_replicas = 10\n    max_replicas = 5"},
			line: 9, col: 20, summary: "Invalid min_replicas", hint: "min_replicas 10 is above max_replicas 5"},
		{name: "min_replicas above the default max_replicas",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    min_replicas = 101"},
			line: 9, col: 20, summary: "Invalid min_replicas", hint: "above the default max_replicas 100"},
		{name: "call_lag must be >= 0",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    call_lag = \"-1s\""},
			line: 9, col: 16, summary: "Invalid call_lag", hint: "call_lag must be in [0s, 1h0m0s], got -1s"},
		{name: "call_lag is at most an hour",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    call_lag = \"2h\""},
			line: 9, col: 16, summary: "Invalid call_lag", hint: "call_lag must be in [0s, 1h0m0s], got 2h0m0s"},
		{name: "call_lag needs depends_on",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    call_lag = \"20s\""},
			line: 9, col: 16, summary: "Invalid call_lag", hint: "this set has none"},
		{name: "cpu_limit_ratio below 1 is a limit under the request",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    cpu_limit_ratio = 0.5"},
			line: 9, col: 23, summary: "Invalid cpu_limit_ratio", hint: "cpu_limit_ratio must be in [1, 1000], got 0.5"},
		{name: "cpu_limit_ratio 0 is not unset",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    cpu_limit_ratio = 0"},
			line: 9, col: 23, summary: "Invalid cpu_limit_ratio", hint: "cpu_limit_ratio must be in [1, 1000], got 0"},
		{name: "cpu_limit_ratio must be finite",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    cpu_limit_ratio = 1e400"},
			line: 9, col: 23, summary: "Invalid cpu_limit_ratio", hint: "the number is too large"},
		{name: "duplicate domain names",
			add:  strings.Replace(domainB, `domain "b"`, `domain "pay"`, 1),
			edit: []string{"floor = 0.2", "floor = 0.1"},
			line: 12, col: 8, summary: `Duplicate domain "pay"`, hint: "the first is at line 4"},
		{name: "duplicate app set names in a domain",
			edit: []string{"  }\n}\n", "  }\n  apps \"web\" {\n    cpu_per_replica = 1\n    service_time = \"1ms\"\n  }\n}\n"},
			line: 11, col: 8, summary: `Duplicate app set "web" in domain "pay"`, hint: "line 7"},
		{name: "dependency on a missing app set names the nearest",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    depends_on = [\"b/dbb\"]"},
			add:  domainB,
			line: 9, col: 19, summary: `Unknown dependency "b/dbb"`, hint: `the nearest is "b/db"`},
		{name: "dependency not written as domain/set",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    depends_on = [\"b/db\", \"db\"]"},
			add:  domainB,
			line: 9, col: 27, summary: `Invalid dependency "db"`, hint: `"domain/set" (nearest: "b/db")`},
		{name: "dependency cycle names its path",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    depends_on = [\"b/db\"]"},
			add:  strings.Replace(domainB, "cpu_per_replica = 1", "cpu_per_replica = 1\n    depends_on = [\"pay/web\"]", 1),
			line: 18, col: 19, summary: "Dependency cycle pay/web -> b/db -> pay/web"},
		{name: "self dependency is a cycle",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    depends_on = [\"pay/web\"]"},
			line: 9, col: 19, summary: "Dependency cycle pay/web -> pay/web"},

		// Enumerations and ranges of the control levels.
		{name: "actuation must be a known method",
			add:  "soldier {\n  actuation = \"hpa\"\n}\n",
			line: 13, col: 15, summary: "Invalid actuation", hint: `"hpa" is not one of "replicas" or "hpa-bounds"`},
		{name: "mode must be a known mode",
			add:  "soldier {\n  mode = \"shadw\"\n}\n",
			line: 13, col: 10, summary: "Invalid mode", hint: `did you mean "shadow"?`},
		{name: "error_budget must be in (0, 1)",
			edit: []string{`slo { latency_p99 = "100ms" }`, "slo {\n    latency_p99  = \"100ms\"\n    error_budget = 1\n  }"},
			line: 8, col: 20, summary: "Invalid error_budget", hint: "must be in (0, 1), got 1"},
		{name: "directive_ttl shorter than the commander tick",
			add:  "commander {\n  tick          = \"60s\"\n  directive_ttl = \"30s\"\n}\n",
			line: 14, col: 19, summary: "Invalid directive_ttl", hint: "shorter than the commander tick"},
		{name: "max_utilisation below target_utilisation",
			add:  "soldier {\n  target_utilisation = 0.8\n  max_utilisation    = 0.75\n}\n",
			line: 14, col: 24, summary: "Invalid max_utilisation", hint: "below target_utilisation 0.8"},
		{name: "capacity_plan is forecast or off",
			add:  "commander {\n  capacity_plan = \"balloons\"\n}\n",
			line: 13, col: 19, summary: "Invalid capacity_plan", hint: "forecast"},
		{name: "plan_hold must be in [0, 24h]",
			add:  "commander {\n  plan_hold = \"48h\"\n}\n",
			line: 13, col: 15, summary: "Invalid plan_hold", hint: "48h"},
		{name: "pool_spare must be in [0, 1]",
			add:  "commander {\n  pool_spare = 1.5\n}\n",
			line: 13, col: 16, summary: "Invalid pool_spare", hint: "got 1.5"},
		{name: "headroom must be in [0, 0.5]",
			add:  "commander {\n  headroom = 0.6\n}\n",
			line: 13, col: 14, summary: "Invalid headroom", hint: "must be in [0, 0.5], got 0.6"},
		{name: "a domain's headroom must be in [0, 0.5] too",
			edit: []string{"floor = 0.2", "floor = 0.2\n  headroom = -0.05"},
			line: 6, col: 14, summary: "Invalid headroom", hint: "must be in [0, 0.5], got -0.05"},
		{name: "staffing_safety must be in (0, 10]",
			add:  "soldier {\n  staffing_safety = 12\n}\n",
			line: 13, col: 21, summary: "Invalid staffing_safety", hint: "must be in (0, 10], got 12"},
		{name: "tolerance must be in (0, 0.5]",
			add:  "soldier {\n  tolerance = 0.6\n}\n",
			line: 13, col: 15, summary: "Invalid tolerance", hint: "must be in (0, 0.5], got 0.6"},
		{name: "node larger than the pool",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  node_cores = 128"},
			line: 3, col: 16, summary: "Invalid node_cores", hint: "does not fit"},
		// Bounds that keep the control loop's integers and memory sane
		// (package domains, MaxReplicas and the rest).
		{name: "max_replicas beyond int32 is out of range",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    max_replicas = 3000000000"},
			line: 9, col: 20, summary: "Invalid max_replicas", hint: "max_replicas must be in [1, 1000000], got 3000000000"},
		{name: "min_replicas is bounded too",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    min_replicas = 1000001\n    max_replicas = 1000000"},
			line: 9, col: 20, summary: "Invalid min_replicas", hint: "min_replicas must be in [1, 1000000], got 1000001"},
		{name: "count is at most 100000 apps a set",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    count = 100000000"},
			line: 9, col: 13, summary: "Invalid count", hint: "count must be in [1, 100000], got 100000000"},
		{name: "a config has at most 200000 apps",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    count = 100000"},
			add: strings.Replace(domainB, "cpu_per_replica = 1", "cpu_per_replica = 1\n    count = 100000", 1) +
				"domain \"c\" {\n  slo { latency_p99 = \"100ms\" }\n  apps \"x\" {\n    cpu_per_replica = 1\n    service_time = \"5ms\"\n  }\n}\n",
			line: 24, col: 3, summary: "Too many apps", hint: "the app sets up to \"c/x\" expand to 200001 apps; a config may have at most 200000"},
		{name: "capacity_cores must be finite and at most 10 million",
			edit: []string{"capacity_cores = 100", "capacity_cores = 1e300"},
			line: 2, col: 20, summary: "Invalid capacity_cores", hint: "capacity_cores must be in (0, 10000000], got 1e+300"},
		{name: "node_cores is bounded like capacity_cores",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  node_cores = 2e7"},
			line: 3, col: 16, summary: "Invalid node_cores", hint: "node_cores must be in (0, 10000000], got 20000000"},
		{name: "a pool of more than a million nodes",
			edit: []string{"capacity_cores = 100", "capacity_cores = 10000000\n  node_cores = 1"},
			line: 3, col: 16, summary: "Invalid node_cores", hint: "is 10000000 nodes; it may have at most 1000000"},
		{name: "cpu_per_replica is at least a millicore",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.0001"},
			line: 8, col: 23, summary: "Invalid cpu_per_replica", hint: "must be >= 0.001, got 0.0001"},
		{name: "concurrency is bounded",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    concurrency = 1000000"},
			line: 9, col: 19, summary: "Invalid concurrency", hint: "must be in [1, 100000], got 1000000"},
		{name: "startup_time is at most a day",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    startup_time = \"48h\""},
			line: 9, col: 20, summary: "Invalid startup_time", hint: "must be in [0s, 24h0m0s], got 48h0m0s"},
		{name: "a 1ns soldier tick would spin the Soldier",
			add:  "soldier {\n  tick = \"1ns\"\n}\n",
			line: 13, col: 10, summary: "Invalid tick", hint: "tick must be in [1ms, 24h0m0s], got 1ns"},
		{name: "a commander tick of over a day",
			add:  "commander {\n  tick = \"25h\"\n}\n",
			line: 13, col: 10, summary: "Invalid tick", hint: "tick must be in [1ms, 24h0m0s], got 25h0m0s"},
		{name: "node_provision_time is at most a day",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  node_provision_time = \"100000h\""},
			line: 3, col: 25, summary: "Invalid node_provision_time", hint: "must be in (0s, 24h0m0s], got 100000h0m0s"},
		{name: "provisioner_rate is bounded",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  provisioner_rate = 1e300"},
			line: 3, col: 22, summary: "Invalid provisioner_rate", hint: "must be in (0, 1000000], got 1e+300"},
		{name: "provisioner_burst is at most a million nodes",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  provisioner_burst = 2000000000"},
			line: 3, col: 23, summary: "Invalid provisioner_burst", hint: "must be in [0, 1000000], got 2000000000"},
		{name: "telemetry_lag is at most an hour",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  telemetry_lag = \"2h\""},
			line: 3, col: 19, summary: "Invalid telemetry_lag", hint: "must be in [0s, 1h0m0s], got 2h0m0s"},
		{name: "packing_loss below half the node",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  packing_loss = 0.5"},
			line: 3, col: 18, summary: "Invalid packing_loss", hint: "must be in [0, 0.5), got 0.5"},
		{name: "priority_classes is true or false",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  priority_classes = \"yes\""},
			line: 3, col: 22, summary: "Invalid priority_classes", hint: "true or false"},
		{name: "priority is at most 1000",
			edit: []string{"floor = 0.2", "floor = 0.2\n  priority = 1000000"},
			line: 6, col: 14, summary: "Invalid priority", hint: "priority must be in [0, 1000], got 1000000"},
		{name: "weight is at most a million",
			edit: []string{"floor = 0.2", "floor = 0.2\n  weight = 1e300"},
			line: 6, col: 12, summary: "Invalid weight", hint: "weight must be in (0, 1000000], got 1e+300"},
		// Power model (issue 31).
		{name: "node_idle_watts is not negative",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  node_idle_watts = -1"},
			line: 3, col: 21, summary: "Invalid node_idle_watts", hint: "must be in [0, 100000], got -1"},
		{name: "busy_core_watts is at most 100 kW",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  busy_core_watts = 2e5"},
			line: 3, col: 21, summary: "Invalid busy_core_watts", hint: "must be in [0, 100000], got 200000"},
		{name: "cost_per_core_hour is at most a million",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  cost_per_core_hour = 1e300"},
			line: 3, col: 24, summary: "Invalid cost_per_core_hour", hint: "must be in [0, 1000000], got 1e+300"},
		{name: "overage_cap is at most 1000",
			add:  "soldier {\n  overage_cap = 1e300\n}\n",
			line: 13, col: 17, summary: "Invalid overage_cap", hint: "overage_cap must be in [0, 1000], got 1e+300"},
		{name: "call_ratio is at most 1000",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    call_ratio = 1e300"},
			line: 9, col: 18, summary: "Invalid call_ratio", hint: "call_ratio must be in (0, 1000], got 1e+300"},
		{name: "cpu_limit_ratio is at most 1000",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    cpu_limit_ratio = 1e300"},
			line: 9, col: 23, summary: "Invalid cpu_limit_ratio", hint: "cpu_limit_ratio must be in [1, 1000], got 1e+300"},
		{name: "a reward weight is at most a million",
			add:  "reward {\n  commander {\n    cost = 1e300\n  }\n}\n",
			line: 14, col: 12, summary: "Invalid cost", hint: "cost must be in [0, 1000000], got 1e+300"},
		{name: "for expressions are refused before they evaluate (nested, they multiply)",
			edit: []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    depends_on = [for a in [1, 2] : [for b in [1, 2] : \"x\"]]"},
			line: 9, col: 18, summary: "Invalid depends_on", hint: "for expressions and %{for} directives are not supported"},
		{name: "template for directives are refused too",
			edit: []string{`service_time    = "10ms"`, `service_time    = "%{for a in [1, 2]}1%{endfor}0ms"`},
			line: 9, col: 24, summary: "Invalid service_time", hint: "for expressions and %{for} directives are not supported"},
		{name: "the fallback window is at most a day",
			add:  "soldier {\n  fallback {\n    window = \"48h\"\n  }\n}\n",
			line: 14, col: 14, summary: "Invalid window", hint: "window must be at most 24h0m0s"},
		{name: "nats url must be a server URL",
			add:  "nats {\n  url = \"localhost\"\n}\n",
			line: 13, col: 9, summary: "Invalid url"},
	}
	runRules(t, cases)
}

// runRules parses base with each case's edits (pairs of old, new; each must
// apply) and addition, and checks that it yields exactly the case's one
// diagnostic, at its line and column, with its summary and hint.
func runRules(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := base
			if len(tc.edit) > 0 {
				for i := 0; i < len(tc.edit); i += 2 {
					if !strings.Contains(src, tc.edit[i]) {
						t.Fatalf("edit %q does not apply", tc.edit[i])
					}
				}
				src = strings.NewReplacer(tc.edit...).Replace(src)
			}
			src += tc.add
			cfg, err := Parse([]byte(src), "cluster.hcl")
			if cfg != nil {
				t.Fatalf("got a config with an error")
			}
			ds := diagnostics(t, err)
			if len(ds) != 1 {
				t.Fatalf("want 1 diagnostic, got %d:\n%v\nsource:\n%s", len(ds), err, src)
			}
			d := ds[0]
			if d.File != "cluster.hcl" || d.Line != tc.line || d.Column != tc.col {
				t.Errorf("at %s:%d,%d, want cluster.hcl:%d,%d: %s", d.File, d.Line, d.Column, tc.line, tc.col, d)
			}
			if !strings.Contains(d.Summary, tc.summary) || !strings.Contains(d.Hint, tc.hint) {
				t.Errorf("got %q; want summary containing %q and hint containing %q", d, tc.summary, tc.hint)
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	src := `cluster "prod" {
  capacity_core = 12000
}
soldier {
  scale_down_cooldown = "5x"
  mode                = "passive"
}
domain "pay" {
  floor   = 0.7
  ceiling = 0.5
  apps "web" {
    cpu_per_replica = 0
    service_time    = "10ms"
    depends_on      = ["pay/wbe"]
  }
}
domian "b" {
}
`
	_, err := Parse([]byte(src), "cluster.hcl")
	ds := diagnostics(t, err)
	want := []string{
		`cluster.hcl:1,1-15: Missing capacity_cores; add capacity_cores = 12000.`,
		`cluster.hcl:2,3-16: Unknown key "capacity_core" in cluster "prod"; did you mean "capacity_cores"?`,
		`cluster.hcl:5,25-29: Invalid scale_down_cooldown; "5x" is not a duration (example: "30s").`,
		`cluster.hcl:6,25-34: Invalid mode; "passive" is not one of "active", "recommend", "shadow" or "off".`,
		`cluster.hcl:8,1-13: Missing slo block in domain "pay"; add one (example: slo { latency_p99 = "150ms" }).`,
		`cluster.hcl:9,13-16: Invalid floor; floor 0.7 is above ceiling 0.5.`,
		`cluster.hcl:12,23-24: Invalid cpu_per_replica; cpu_per_replica must be >= 0.001, got 0.`,
		`cluster.hcl:14,24-33: Unknown dependency "pay/wbe"; there is no app set "pay/wbe"; the nearest is "pay/web".`,
		`cluster.hcl:17,1-7: Unknown block "domian" in the config file; did you mean "domain"?`,
	}
	got := strings.Split(ds.Error(), "\n")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseTranslatesWithDefaults(t *testing.T) {
	cfg, err := LoadFile("testdata/cluster.hcl")
	if err != nil {
		t.Fatal(err)
	}
	want := &domains.Config{
		Cluster: domains.Cluster{
			Name: "prod", CapacityCores: 12000, NodeCores: 32, NodeProvisionTime: 3 * time.Minute,
			ProvisionerRate: 20, NodeIdleTimeout: 10 * time.Minute, CostPerCoreHour: 0.04, TelemetryLag: 20 * time.Second,
			NodeIdleWatts: 0.64 * 32, BusyCoreWatts: 3.80 - 0.64, // power model defaults (issue 31)
			Provisioner: domains.ProvisionerTokenBucket, LaunchRequestRate: 5, LaunchRequestBurst: 50, LaunchInstanceRate: 2, LaunchInstanceBurst: 1000,
			ScanInterval: 10 * time.Second, InitialNodeGroupBackoff: 5 * time.Minute, MaxNodeGroupBackoff: 30 * time.Minute,
			NodeGroupBackoffReset: 3 * time.Hour, MaxNodeProvisionTime: 15 * time.Minute,
			BatchIdleDuration: time.Second, BatchMaxDuration: 10 * time.Second, UnavailableOfferingsTTL: 3 * time.Minute,
		},
		Commander: domains.Commander{
			Tick: time.Minute, Policy: "forecast", DeadZone: 0.02, ReserveMin: 0.02, MaxShareChange: 0.10,
			DirectiveTTL: 3 * time.Minute, CapacityPlan: domains.PlanForecast,
		},
		Soldier: domains.Soldier{
			Tick: 10 * time.Second, Policy: "proportional", Actuation: domains.ActuateHPABounds, OverageCap: 0.10,
			ScaleDownCooldown: 5 * time.Minute, Mode: domains.ModeActive, TargetUtilisation: 0.7, MaxUtilisation: 0.85, StaffingSafety: 3, Tolerance: 0.15, ErrorRateVeto: 0.01, MaxWritesPerTick: 200,
		},
		Domains: []domains.Domain{
			{
				Name: "payment", Priority: 0, Weight: 1, Floor: 0.20, Ceiling: 0.60,
				SLO: domains.SLO{LatencyP99: 150 * time.Millisecond, ErrorBudget: 0.001},
				AppSets: []domains.AppSet{{
					Name: "checkout", Count: 120, CPUPerReplica: 0.5, MinReplicas: 2, MaxReplicas: 200,
					ServiceTime: 25 * time.Millisecond, Concurrency: 4, StartupTime: 30 * time.Second,
					Timeout: 5 * time.Second, DependsOn: []string{"fraud/scoring"}, CallRatio: 1, CPULimitRatio: 2,
					Workload: domains.Workload{Kind: domains.KindDeployment},
				}},
			},
			{
				// Only the required fields and a few others are set: the rest are defaults.
				Name: "fraud", Priority: 1, Weight: 0.5, Floor: 0.10, Ceiling: 1,
				SLO: domains.SLO{LatencyP99: 80 * time.Millisecond, ErrorBudget: 0.001},
				AppSets: []domains.AppSet{{
					Name: "scoring", Count: 4, CPUPerReplica: 1, MinReplicas: 1, MaxReplicas: 100,
					ServiceTime: 10 * time.Millisecond, Concurrency: 1, StartupTime: 30 * time.Second,
					Timeout: 5 * time.Second, CallRatio: 1, CPULimitRatio: 2,
					Workload: domains.Workload{Kind: domains.KindDeployment},
				}},
			},
		},
		NATS:  domains.NATS{Replicas: 1},
		Store: domains.Store{Path: "data/regiment.db", Retention: 168 * time.Hour},
		Kubernetes: domains.Kubernetes{Namespace: "default", LeaseNamespace: "default", LeaseDuration: 40 * time.Second, HPAHeadroom: 0.5,
			WritesPerSecond: domains.DefaultWritesPerSecond, WriteBurst: domains.DefaultWriteBurst,
			BalloonPriorityClass: domains.DefaultBalloonPriorityClass, BalloonImage: domains.DefaultBalloonImage},
		Prometheus: domains.Prometheus{MaxAge: 2 * time.Minute, Timeout: 5 * time.Second, Queries: domains.DefaultPrometheusQueries},
		Calendar:   domains.Calendar{Lead: 30 * time.Minute, Ramp: 10 * time.Minute},
	}
	for tier := range want.Soldier.Ladders { // no ladder or fallback block: every tier's defaults
		want.Soldier.Ladders[tier] = domains.DefaultLadder(tier)
	}
	want.Soldier.Fallback = domains.DefaultFallback()
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got\n%+v\nwant\n%+v", cfg, want)
	}
	if n := cfg.AppCount(); n != 124 {
		t.Errorf("AppCount = %d, want 124", n)
	}
}

func TestParseAppliesDefaultsToTheSmallestConfig(t *testing.T) {
	cfg, err := Parse([]byte(base), "cluster.hcl")
	if err != nil {
		t.Fatal(err)
	}
	want := domains.Config{
		Cluster: domains.Cluster{Name: "prod", CapacityCores: 100},
		Domains: []domains.Domain{{
			Name: "pay", Floor: 0.2, SLO: domains.SLO{LatencyP99: 100 * time.Millisecond},
			AppSets: []domains.AppSet{{Name: "web", CPUPerReplica: 0.5, ServiceTime: 10 * time.Millisecond}},
		}},
	}
	want.Defaults()
	if !reflect.DeepEqual(cfg, &want) {
		t.Errorf("got\n%+v\nwant\n%+v", cfg, &want)
	}
}

func TestCPULimitRatio(t *testing.T) {
	tests := []struct {
		name string
		attr string
		want float64
	}{
		{"unset is the default, a limit of twice the request", "", domains.DefaultCPULimitRatio},
		{"1 is a limit at the request (Guaranteed)", "cpu_limit_ratio = 1", 1},
		{"a fraction above 1 is kept as written", "cpu_limit_ratio = 1.5", 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(base, "cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    "+tt.attr, 1)
			cfg, err := Parse([]byte(src), "cluster.hcl")
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Domains[0].AppSets[0].CPULimitRatio; got != tt.want {
				t.Fatalf("CPULimitRatio = %g, want %g", got, tt.want)
			}
		})
	}
}

func TestDiagnosticString(t *testing.T) {
	src := strings.Replace(base, "capacity_cores = 100", "capacity_cores = 100\n}\nsoldier {\n  scale_down_cooldown = \"5x\"", 1)
	_, err := Parse([]byte(src), "cluster.hcl")
	want := `cluster.hcl:5,25-29: Invalid scale_down_cooldown; "5x" is not a duration (example: "30s").`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	d := Diagnostic{File: "a.hcl", Line: 2, Column: 3, EndLine: 4, EndColumn: 5, Summary: "S", Hint: "did you mean x?"}
	if got, want := d.String(), "a.hcl:2,3-4,5: S; did you mean x?"; got != want {
		t.Errorf("multi-line range: got %q, want %q", got, want)
	}
}

func TestLoadFileReportsMissingFile(t *testing.T) {
	_, err := LoadFile("testdata/nope.hcl")
	var ds Diagnostics
	if err == nil || errors.As(err, &ds) || !strings.Contains(err.Error(), "load config") {
		t.Errorf("got %v, want a wrapped I/O error", err)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"tick", "tick", 0}, {"tik", "tick", 1}, {"kitten", "sitting", 3}, {"", "abc", 3}, {"héllo", "hello", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// FuzzParse feeds arbitrary text to Parse. It must not panic (nor exhaust
// the stack), and returns either a config that keeps the domains invariants
// and bounds or a non-empty, bounded Diagnostics whose entries have positions.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte(base + domainB))
	f.Add([]byte(`cluster "x" { capacity_cores = 1e400 }`))
	f.Add([]byte("domain \"a\" {\n  apps \"b\" {\n    depends_on = [\"a/b\", 1, null]\n  }\n}\n"))
	f.Add([]byte("commander {\n  tick = upper(\"1s\")\n  dead_zone = [for x in [1] : x][0]\n}\n"))
	f.Add([]byte("x = \"${y}\"\n"))
	f.Add([]byte(base + "soldier {\n  tick = \"7s\"\n  ladder \"p0\" {\n    alert = 1.6\n  }\n  ladder \"p10\" {\n  }\n  fallback {\n    window = \"0s\"\n    hold   = \"-1s\"\n  }\n}\n"))
	f.Add([]byte("cluster \"\" {\n  capacity_cores = -9223372036854775809\n}\n"))
	if src, err := os.ReadFile("testdata/cluster.hcl"); err == nil {
		f.Add(src)
	}
	// Hostile files: nesting past the limit in every form the parser or the
	// evaluator recurses on, numbers that overflow the loop, a 1ns tick,
	// binary garbage and wrong types.
	for _, expr := range []string{deep(1000), strings.Repeat("-", 1000) + "1", strings.Repeat("1+", 1000) + "1",
		strings.Repeat("true ? 1 : ", 200) + "1", `"` + strings.Repeat(`${"`, 200) + `"`, "<<EOT\n${[[[[\nEOT\n",
		"1e300", "-1e300", "1e400", "9223372036854775808", `"100"`, "[1]", "{a = 1}", "null", "true"} {
		f.Add([]byte(strings.Replace(base, "capacity_cores = 100", "capacity_cores = "+expr, 1)))
	}
	for _, edit := range []string{"max_replicas = 3000000000", "count = 100000000", "min_replicas = -1", "concurrency = 1e9",
		`startup_time = "1000000h"`, `call_lag = "1ns"`, "count = 1.5"} {
		f.Add([]byte(strings.Replace(base, "cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    "+edit, 1)))
	}
	f.Add([]byte(base + "soldier {\n  tick = \"1ns\"\n}\ncommander {\n  tick = \"1ns\"\n  directive_ttl = \"1ns\"\n}\n"))
	f.Add([]byte(base + "soldier {\n  tick = 1\n  fallback {\n    window = \"100000h\"\n  }\n}\n"))
	f.Add([]byte("\x00\xff\xfe" + base + "\x1b[31m\xc3\x28"))
	f.Add([]byte("/* unterminated " + base))
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, err := Parse(src, "fuzz.hcl")
		if (cfg == nil) == (err == nil) {
			t.Fatalf("config %v and error %v: want exactly one", cfg, err)
		}
		if err != nil {
			var ds Diagnostics
			if !errors.As(err, &ds) || len(ds) == 0 {
				t.Fatalf("error %v is not a non-empty Diagnostics", err)
			}
			if len(ds) > maxDiagnostics+1 {
				t.Fatalf("%d diagnostics, want at most %d", len(ds), maxDiagnostics+1)
			}
			for _, d := range ds {
				if d.File != "fuzz.hcl" || d.Line < 1 || d.Column < 1 || d.Summary == "" {
					t.Fatalf("diagnostic without a position or summary: %#v", d)
				}
				if len(d.Summary) > maxSummary || len(d.Hint) > maxHint {
					t.Fatalf("diagnostic of %d+%d bytes: %.200s", len(d.Summary), len(d.Hint), d)
				}
			}
			return
		}
		if err := invariants(cfg); err != nil {
			t.Fatalf("valid config breaks an invariant: %v\n%s", err, src)
		}
	})
}

// invariants checks what package domains promises of a validated config.
func invariants(cfg *domains.Config) error {
	if cfg.Cluster.CapacityCores <= 0 || len(cfg.Domains) == 0 {
		return fmt.Errorf("capacity %g, %d domains", cfg.Cluster.CapacityCores, len(cfg.Domains))
	}
	floors := 0.0
	for _, d := range cfg.Domains {
		if d.Floor < 0 || d.Floor > d.Ceiling || d.Ceiling > 1 {
			return fmt.Errorf("domain %q: floor %g, ceiling %g", d.Name, d.Floor, d.Ceiling)
		}
		floors += d.Floor
		if d.SLO.LatencyP99 <= 0 {
			return fmt.Errorf("domain %q: latency_p99 %v", d.Name, d.SLO.LatencyP99)
		}
		for _, a := range d.AppSets {
			if a.Count < 1 || a.MinReplicas < 1 || a.MinReplicas > a.MaxReplicas || a.CPUPerReplica <= 0 || a.ServiceTime <= 0 || a.Concurrency < 1 || !(a.CPULimitRatio >= 1) || math.IsInf(a.CPULimitRatio, 1) {
				return fmt.Errorf("app set %q: %+v", a.Name, a)
			}
		}
	}
	if floors > 1+1e-9 {
		return fmt.Errorf("floors sum to %g", floors)
	}
	// The bounds of package domains.
	cl, cm, s := cfg.Cluster, cfg.Commander, cfg.Soldier
	if cl.CapacityCores > domains.MaxCores || cl.NodeCores <= 0 || cl.CapacityCores/cl.NodeCores > domains.MaxNodes {
		return fmt.Errorf("cluster %+v", cl)
	}
	if cm.Tick < domains.MinTick || cm.Tick > domains.MaxTick || s.Tick < domains.MinTick || s.Tick > domains.MaxTick {
		return fmt.Errorf("ticks %v, %v", cm.Tick, s.Tick)
	}
	if n := cfg.AppCount(); n > domains.MaxApps {
		return fmt.Errorf("%d apps", n)
	}
	for _, d := range cfg.Domains {
		for _, a := range d.AppSets {
			if a.Count > domains.MaxAppsPerSet || a.MaxReplicas > domains.MaxReplicas || a.Concurrency > domains.MaxConcurrency || a.CPUPerReplica < domains.MinCPUPerReplica {
				return fmt.Errorf("app set %q out of bounds: %+v", a.Name, a)
			}
		}
	}
	return nil
}

func TestRewardBlockSetsWeights(t *testing.T) {
	src := base + `reward {
  commander {
    cost = 0.8
  }
  soldier {
    utilisation_target = 0.9
  }
}
`
	cfg, err := Parse([]byte(src), "c.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Reward.Commander["cost"] != 0.8 || cfg.Reward.Soldier["utilisation_target"] != 0.9 || cfg.Reward.Service != nil {
		t.Fatalf("reward %+v", cfg.Reward)
	}
	bad := base + `reward {
  commander {
    cots = 1
  }
  soldier {
    utilisation_target = 1.5
  }
  service {
    sla = -1
  }
}
`
	_, err = Parse([]byte(bad), "c.hcl")
	var ds Diagnostics
	if !errors.As(err, &ds) || len(ds) != 3 {
		t.Fatalf("want 3 diagnostics, got %v", err)
	}
	want := []struct{ line, col int }{{14, 5}, {16, 3}, {20, 11}}
	for i, w := range want {
		if ds[i].Line != w.line || ds[i].Column != w.col {
			t.Errorf("diagnostic %d at %d:%d, want %d:%d: %s", i, ds[i].Line, ds[i].Column, w.line, w.col, ds[i])
		}
	}
}

// TestParseProvisionerBurstAndCallLag pins the translation of
// provisioner_burst and call_lag, 0 included: both default to 0.
func TestParseProvisionerBurstAndCallLag(t *testing.T) {
	cases := []struct {
		name    string
		edit    []string
		burst   int
		callLag time.Duration
	}{
		{name: "unset, the burst is one tick's refill and calls do not lag"},
		{name: "provisioner_burst = 0 is the default, not an error",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  provisioner_burst = 0"}},
		{name: "provisioner_burst is a number of nodes",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  provisioner_burst = 40"}, burst: 40},
		{name: "call_lag delays the calls of a set with depends_on",
			edit:    []string{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    depends_on = [\"b/db\"]\n    call_lag = \"20s\""},
			callLag: 20 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.NewReplacer(tc.edit...).Replace(base) + domainB
			cfg, err := Parse([]byte(src), "cluster.hcl")
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Cluster.ProvisionerBurst; got != tc.burst {
				t.Errorf("provisioner burst %d, want %d", got, tc.burst)
			}
			if got := cfg.Domains[0].AppSets[0].CallLag; got != tc.callLag {
				t.Errorf("call lag %s, want %s", got, tc.callLag)
			}
		})
	}
}

// TestParseProvisioner pins the node provisioner's keys (issue 31): their
// translation and defaults, and that a key of one provisioner model with
// another chosen is an error at its line, not a silent no-op.
func TestParseProvisioner(t *testing.T) {
	cases := []struct {
		name  string
		edit  string // added to the cluster block
		check func(t *testing.T, c domains.Cluster)
		diags []string // the diagnostics' summaries, in order; nil: valid
	}{
		{name: "unset is the token bucket, with the cloud's documented defaults",
			check: func(t *testing.T, c domains.Cluster) {
				if c.Provisioner != domains.ProvisionerTokenBucket || c.LaunchInstanceRate != 2 || c.LaunchInstanceBurst != 1000 ||
					c.LaunchRequestRate != 5 || c.LaunchRequestBurst != 50 || c.SpareCapacity != 0 ||
					c.ScanInterval != 10*time.Second || c.InitialNodeGroupBackoff != 5*time.Minute || c.MaxNodeGroupBackoff != 30*time.Minute ||
					c.NodeGroupBackoffReset != 3*time.Hour || c.MaxNodeProvisionTime != 15*time.Minute ||
					c.BatchIdleDuration != time.Second || c.BatchMaxDuration != 10*time.Second || c.UnavailableOfferingsTTL != 3*time.Minute {
					t.Fatalf("defaults %+v", c)
				}
			}},
		{name: "karpenter with the region's spare capacity",
			edit: "provisioner = \"karpenter\"\n  spare_capacity = 600\n  spare_capacity_rate = 120\n  unavailable_offerings_ttl = \"2m\"",
			check: func(t *testing.T, c domains.Cluster) {
				if c.Provisioner != domains.ProvisionerKarpenter || c.SpareCapacity != 600 || c.SpareCapacityRate != 120 || c.UnavailableOfferingsTTL != 2*time.Minute {
					t.Fatalf("cluster %+v", c)
				}
			}},
		{name: "cluster-autoscaler with its backoff",
			edit: "provisioner = \"cluster-autoscaler\"\n  initial_node_group_backoff = \"1m\"\n  max_node_group_backoff = \"10m\"",
			check: func(t *testing.T, c domains.Cluster) {
				if c.Provisioner != domains.ProvisionerClusterAutoscaler || c.InitialNodeGroupBackoff != time.Minute || c.MaxNodeGroupBackoff != 10*time.Minute {
					t.Fatalf("cluster %+v", c)
				}
			}},
		{name: "an unknown provisioner", edit: "provisioner = \"karpentr\"", diags: []string{"Invalid provisioner"}},
		{name: "the token bucket's keys with karpenter", edit: "provisioner = \"karpenter\"\n  provisioner_rate = 30",
			diags: []string{"Invalid provisioner_rate"}},
		{name: "the cloud's keys with the token bucket", edit: "spare_capacity = 10", diags: []string{"Invalid spare_capacity"}},
		{name: "karpenter's keys with cluster-autoscaler", edit: "provisioner = \"cluster-autoscaler\"\n  batch_max_duration = \"20s\"",
			diags: []string{"Invalid batch_max_duration"}},
		{name: "a max backoff below the initial", edit: "provisioner = \"cluster-autoscaler\"\n  max_node_group_backoff = \"1m\"",
			diags: []string{"Invalid max_node_group_backoff"}},
		{name: "a negative spare capacity", edit: "provisioner = \"karpenter\"\n  spare_capacity = -1", diags: []string{"Invalid spare_capacity"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(base, "capacity_cores = 100", "capacity_cores = 100\n  "+tc.edit, 1)
			cfg, err := Parse([]byte(src), "cluster.hcl")
			if tc.diags == nil {
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, cfg.Cluster)
				return
			}
			var ds Diagnostics
			if !errors.As(err, &ds) || len(ds) != len(tc.diags) {
				t.Fatalf("want %d diagnostics %v, got %v", len(tc.diags), tc.diags, err)
			}
			line := 3 + strings.Count(tc.edit, "\n") // the edit's last line, where its offending key is
			for i, d := range ds {
				if d.Summary != tc.diags[i] || d.Line != line {
					t.Errorf("diagnostic %d: %s at line %d, want %q at line %d", i, d.Summary, d.Line, tc.diags[i], line)
				}
			}
		})
	}
}

func TestParseSchedulingKnobs(t *testing.T) {
	cases := []struct {
		name            string
		edit            []string
		priorityClasses bool
		packingLoss     float64
	}{
		{name: "unset, pods carry no PriorityClass and packing is ideal"},
		{name: "priority_classes = true orders by tier and preempts",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  priority_classes = true"}, priorityClasses: true},
		{name: "packing_loss is a share of each node",
			edit: []string{"capacity_cores = 100", "capacity_cores = 100\n  packing_loss = 0.05"}, packingLoss: 0.05},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.NewReplacer(tc.edit...).Replace(base) + domainB
			cfg, err := Parse([]byte(src), "cluster.hcl")
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Cluster.PriorityClasses; got != tc.priorityClasses {
				t.Errorf("priority classes %v, want %v", got, tc.priorityClasses)
			}
			if got := cfg.Cluster.PackingLoss; got != tc.packingLoss {
				t.Errorf("packing loss %v, want %v", got, tc.packingLoss)
			}
		})
	}
}

func TestParseCalendar(t *testing.T) {
	src := base + `calendar {
  lead = "45m"
  event "black-friday" {
    domain   = "pay"
    start    = "2026-11-27T08:00:00Z"
    duration = "12h"
    load     = 2.5
  }
  event "settlement" {
    domain   = "pay"
    start    = "2026-11-27T22:00:00Z"
    duration = "2h"
    load     = 3
    lead     = "10m"
  }
}
`
	cfg, err := Parse([]byte(src), "cluster.hcl")
	if err != nil {
		t.Fatal(err)
	}
	want := domains.Calendar{Lead: 45 * time.Minute, Ramp: 10 * time.Minute, Events: []domains.Planned{{Name: "black-friday",
		Domain: "pay", Start: time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC), Duration: 12 * time.Hour, Load: 2.5},
		{Name: "settlement", Domain: "pay", Start: time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC), Duration: 2 * time.Hour, Load: 3, Lead: 10 * time.Minute}}}
	if !reflect.DeepEqual(cfg.Calendar, want) {
		t.Fatalf("calendar %+v, want %+v", cfg.Calendar, want)
	}
	none, err := Parse([]byte(base), "cluster.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if c := none.Calendar; c.Lead != 30*time.Minute || c.Ramp != 10*time.Minute || len(c.Events) != 0 {
		t.Fatalf("without a calendar block: %+v, want no events, lead 30m, ramp 10m", c)
	}
}
