package eval

import (
	"bufio"
	"io"
	"strconv"
)

// WriteSeries writes series.csv: the per-minute sample of every run with one
// (seed index 0), one row per scenario, policy, domain and minute, in report
// order. Columns: scenario, policy, seed, domain, minute (from the scenario
// start), rps, replicas, ready, breached_apps, pending (see DomainSeries).
func (r *Report) WriteSeries(w io.Writer) error {
	b := bufio.NewWriter(w)
	b.WriteString("scenario,policy,seed,domain,minute,rps,replicas,ready,breached_apps,pending\n")
	var line []byte
	num := func(v float64) { line = strconv.AppendFloat(append(line, ','), v, 'g', 8, 64) }
	for i := range r.Runs {
		x := &r.Runs[i]
		if x.series == nil {
			continue
		}
		for _, d := range x.series.Domains {
			for k := range x.series.Minutes {
				line = append(line[:0], x.Scenario...)
				line = append(append(line, ','), x.Policy...)
				line = strconv.AppendUint(append(line, ','), x.Seed, 10)
				line = append(append(line, ','), d.Name...)
				line = strconv.AppendInt(append(line, ','), int64(k), 10)
				num(d.RPS[k])
				num(d.Replicas[k])
				num(d.Ready[k])
				num(d.BreachedApps[k])
				num(d.Pending[k])
				line = append(line, '\n')
				if _, err := b.Write(line); err != nil {
					return err
				}
			}
		}
	}
	return b.Flush()
}
