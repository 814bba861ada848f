package daemon

import (
	"bytes"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// TestSummaryShowsTheProvisionersStalls pins the summary's provisioner
// rows: with a provisioner that can fail a launch (Karpenter, cluster-
// autoscaler) each policy's stalls, longest stall and largest burst of node
// requests; with the default token bucket, which never fails, none.
func TestSummaryShowsTheProvisionersStalls(t *testing.T) {
	run := SystemRun{Metrics: sim.Metrics{SimSeconds: 3600, ProvisionerStalls: 3, LongestStallMinutes: 7.3, MaxNodeRequests2m: 1268}}
	hpa := sim.Metrics{SimSeconds: 3600, ProvisionerStalls: 0, MaxNodeRequests2m: 703}
	for _, tc := range []struct {
		provisioner string
		rows        bool
	}{{domains.ProvisionerKarpenter, true}, {domains.ProvisionerClusterAutoscaler, true}, {domains.ProvisionerTokenBucket, false}} {
		cfg := &domains.Config{Cluster: domains.Cluster{Name: "c", Provisioner: tc.provisioner}}
		var out bytes.Buffer
		run.WriteSummary(&out, cfg, "s", []string{"hpa"}, []sim.Metrics{hpa})
		var stalls, requests string
		for _, line := range strings.Split(out.String(), "\n") {
			switch f := strings.Fields(line); {
			case strings.HasPrefix(strings.TrimSpace(line), "provisioner stalls"):
				stalls = strings.Join(f[2:], " ")
			case strings.HasPrefix(strings.TrimSpace(line), "node requests in 2 min"):
				requests = strings.Join(f[5:], " ")
			}
		}
		if !tc.rows {
			if stalls != "" || requests != "" {
				t.Errorf("%s: provisioner rows %q, %q; want none", tc.provisioner, stalls, requests)
			}
			continue
		}
		if stalls != "3 (7.3 min) 0" || requests != "1268 703" {
			t.Errorf("%s: stalls %q, node requests %q; want %q, %q\n%s", tc.provisioner, stalls, requests,
				"3 (7.3 min) 0", "1268 703", out.String())
		}
	}
}
