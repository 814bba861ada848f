// Package cli is what the command lines of Regiment's binaries share: the
// --version text (Version), the root logger of --log-level and
// --log-format (NewLogger), and the suggestion for a misspelt flag or name
// (Suggest, FlagError), so that every binary answers them alike; and what
// the offline commands share: the progress line of a long command
// (Progress: live on a terminal, a periodic log line in a pipe), the
// split of a comma-separated flag (SplitList) and an indented JSON file
// (WriteJSON).
//
// Invariants: Version never fails (a binary built without build info says
// "(devel)" and "revision unknown"); Suggest proposes only a candidate
// within max(2, len/3) edits of the input, ignoring case, so a word unlike
// every candidate gets no suggestion, and config files' hints follow the
// same rule (internal/config uses it); FlagError rewrites only the
// flag package's "not defined" error and keeps every other as it was.
//
// Concurrency: every function is safe for concurrent use.
//
// Package cli imports wire (for the contract's version) and go-hclog; it
// must not import the daemons, the store or Kubernetes.
package cli
