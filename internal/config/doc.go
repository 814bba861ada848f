// Package config reads Regiment's HCL files, the cluster config and the
// scenario, into the plain types of package domains.
//
// Reading a file has three steps. The HCL native syntax is decoded into
// structs that mirror the file and keep the source range of every attribute,
// block and label (config.go, scenario.go; decode.go walks a body against
// their field and block lists). Those are translated into domains values,
// Defaults is applied, and the result is validated, each problem reported at
// the range it came from (validate.go).
//
// Invariants:
//   - Parse and ParseScenario return either a value or a Diagnostics error,
//     never both. A returned Config satisfies every invariant listed in package
//     domains; a returned Scenario has a positive duration longer than its
//     warm-up, known trace formats, event kinds and arrival noise, trace
//     files that exist and, when a config was given, references only to its
//     domains and app sets.
//   - Diagnostics lists every problem at once, sorted by file and position,
//     each with file:line,col-col, a summary and a hint, formatted like HCL and
//     nats-server do:
//     cluster.hcl:14,15-19: Invalid scale_down_cooldown; "5x" is not a duration (example: "30s").
//     Syntax errors are the exception: after one, nothing else is checked.
//   - Durations are strings with a unit ("150ms", "3m", "168h"); a number or a
//     string without a unit is an error. Shares and rates are fractions.
//   - A value of 0 written in the file for a field that package domains
//     defaults when zero is an error: Defaults would silently replace it. The
//     one exception is soldier { fallback { window = "0s" } }, which turns the
//     automatic fallback off (domains.Fallback.Off).
//   - Several attributes on one line are not HCL: a one-line block holds at
//     most one attribute.
//   - No file can hang the caller: LoadFile, LoadScenarioFile, ReadFile and
//     ReadPortable open only regular files (package infile), and a FIFO, a
//     device or a directory is refused at once with its path; a trace path
//     naming one is an "Invalid trace" diagnostic at its attribute.
//   - No file can crash the caller: a file over MaxFileSize or nested deeper
//     than MaxNesting is one diagnostic before the HCL parser (which would
//     exhaust the stack) runs (limits.go); numbers whose extremes would break
//     the control loop are bounded by the Max and Min constants of package
//     domains; and diagnostics are bounded (80 characters of a quoted value,
//     200 diagnostics a file).
//
// The kubernetes and prometheus blocks and the workload block of an app set
// map the config onto a cluster (kubernetes.go documents them); only daemons
// run with a kubeconfig read them.
//
// Adding a block (say reward { ... }) takes one entry in configHCL.children,
// a struct with fields and children methods, a line in translate, and its
// rules in validateConfig.
//
// The functions are safe for concurrent use. ParseScenario reads the file
// system to check that trace files exist; nothing else does I/O beyond
// LoadFile and LoadScenarioFile reading their file. This package imports
// domains, HCL, go-cty and Prometheus's PromQL parser (every query is
// rendered on sample values and parsed, prometheus.go), and must not import
// the daemons' packages.
package config
