// Package episodes reads the episode store (package store) for an operator:
// the tables and explanations behind `regiment episodes list, show, why,
// export, stats and prune`. Each function writes plain text (tab-aligned
// tables) to the writer it is given and returns errors worded for an
// operator; the command only parses flags and picks the store file.
// ReadRuns reads recorded Soldier episodes, from the stores Sources
// resolves, into calibration runs for `regiment calibrate` and `regiment
// train --episodes`.
//
// Times print in UTC, RFC 3339; values with four significant digits.
// ParseTime and ParseDuration take what the flags take: RFC 3339, relative
// to now ("-5m", "-1d") or "now".
//
// WhyApp restricts Why to one app (its keys are "<metric>/<domain>/<app>")
// and warns when the step it answers from is more than max(window,
// FarStep) before T. A domain or app close to a recorded one but not it
// is an error wrapping ErrUnknown, naming the closest (cli.Suggest): the
// command makes it a usage error.
//
// Use opens the store a subcommand names (a file, or a daemon's URL read
// through its snapshot) and runs the query on it; InDomain, ParseRange,
// Cutoff and Repair are the checks, flag values and output of list,
// export, show, prune and repair.
//
// Sources resolves the stores to read: files, directories of *.db files,
// and running daemons' URLs, whose store snapshot (their /store) Download
// fetches into a temporary file, with the bearer token of Token.
//
// It imports store, recording (the step keys), wire (CleanText, for the
// operator text it prints), cli (Suggest), domains and calibrate (the
// run type it fills); it opens stores read-only except for Prune, and never
// writes elsewhere but Export's file and Download's temporary one.
package episodes
