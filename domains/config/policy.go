package config

import (
	"os"
	"path/filepath"

	"github.com/regimentd/regiment/domains"
)

// Built-in policy names; any other commander.policy or soldier.policy is a
// checkpoint path.
const (
	forecastPolicy     = "forecast"
	proportionalPolicy = "proportional"
)

// resolvePolicies makes a checkpoint path in commander.policy or
// soldier.policy relative to the directory of the config file (filename)
// unless it is absolute, and reports a path that names no readable regular
// file at the attribute, with the built-in names as the alternative.
func resolvePolicies(cfg *domains.Config, h *configHCL, filename string, ds *Diagnostics) {
	dir := filepath.Dir(filename)
	check := func(p *string, a *stringAttr, builtin, level string) {
		if !a.ok() || *p == builtin || *p == "" {
			return
		}
		path := *p
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			ds.add(a.Range, "Missing checkpoint", "%s policy %q is neither %q nor a checkpoint file: %v (a relative path is relative to the config file's directory)", level, *p, builtin, err)
			return
		case !fi.Mode().IsRegular():
			ds.add(a.Range, "Invalid checkpoint", "%s policy %q is %s, not a checkpoint file", level, *p, fi.Mode().Type())
			return
		}
		*p = path
	}
	check(&cfg.Commander.Policy, &h.Commander.Policy, forecastPolicy, "commander")
	check(&cfg.Soldier.Policy, &h.Soldier.Policy, proportionalPolicy, "soldier")
}
