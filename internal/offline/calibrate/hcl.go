package calibrate

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// PatchHCL returns src, a cluster config in HCL, with the applied estimates
// of sets that differ from the configured values written into its
// `domain "<d>" { apps "<set>" { ... } }` blocks: service_time and
// startup_time as durations, call_ratio as a number. Comments and other
// attributes are kept; the layout is normalised as hclfmt would. filename names src
// in syntax errors. It fails when a set of sets has no block in src (for
// example a config assembled from several files).
func PatchHCL(src []byte, filename string, sets []SetFit) ([]byte, error) {
	f, diags := hclwrite.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, errf("parse %s: %s", filename, diags.Error())
	}
	for _, s := range sets {
		b := findSet(f.Body(), s.Domain, s.Set)
		if b == nil {
			return nil, errf("%s: no apps %q block in domain %q", filename, s.Set, s.Domain)
		}
		body := b.Body()
		if changed(s.ServiceTime) {
			body.SetAttributeValue("service_time", cty.StringVal(dur(s.ServiceTime.New)))
		}
		if changed(s.StartupTime) {
			body.SetAttributeValue("startup_time", cty.StringVal(dur(s.StartupTime.New)))
		}
		if s.CallRatio != nil && s.CallRatio.Applied && roundRatio(s.CallRatio.New) != s.CallRatio.Old {
			body.SetAttributeValue("call_ratio", cty.NumberFloatVal(roundRatio(s.CallRatio.New)))
		}
	}
	return f.Bytes(), nil
}

// changed reports whether a time estimate is applied and differs from the
// configured value at the microsecond the writer prints.
func changed(e Estimate) bool { return e.Applied && seconds(e.New) != seconds(e.Old) }

func findSet(root *hclwrite.Body, domain, set string) *hclwrite.Block {
	for _, d := range root.Blocks() {
		if d.Type() != "domain" || len(d.Labels()) != 1 || d.Labels()[0] != domain {
			continue
		}
		for _, a := range d.Body().Blocks() {
			if a.Type() == "apps" && len(a.Labels()) == 1 && a.Labels()[0] == set {
				return a
			}
		}
	}
	return nil
}
