package store

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Filter selects the steps an export covers. Zero fields select everything.
type Filter struct {
	Episode string    // one episode id
	Level   string    // "commander" or "soldier"
	Domain  string    // one domain
	From    time.Time // inclusive
	To      time.Time // exclusive
}

func (f Filter) match(e Episode) bool {
	return (f.Episode == "" || e.ID == f.Episode) &&
		(f.Level == "" || e.Level == f.Level) &&
		(f.Domain == "" || e.Domain == f.Domain)
}

// exportRecord is one JSONL line: a step with its episode's identity.
type exportRecord struct {
	Episode    string             `json:"episode"`
	Level      string             `json:"level"`
	Domain     string             `json:"domain,omitempty"`
	ObsVersion int                `json:"obs_version,omitempty"`
	Seq        uint64             `json:"seq"`
	At         time.Time          `json:"at"`
	Obs        []float64          `json:"obs"`
	Action     map[string]float64 `json:"action,omitempty"`
	Guards     []Guard            `json:"guards,omitempty"`
	Reward     map[string]float64 `json:"reward,omitempty"`
	Outcome    map[string]float64 `json:"outcome,omitempty"`
}

// eachFiltered calls fn for every step the filter selects, episode by
// episode in Episodes order and in time order within an episode, all in one
// read transaction (a consistent snapshot).
func eachFiltered(tx *bolt.Tx, f Filter, fn func(Episode, Step) error) error {
	eps, err := allEpisodes(tx)
	if err != nil {
		return err
	}
	found := false
	for _, e := range eps {
		if !f.match(e) {
			continue
		}
		found = true
		b := stepBucket(tx, e.ID)
		if b == nil {
			continue
		}
		if err := eachStep(b, e.ID, f.From, f.To, func(st Step) error { return fn(e, st) }); err != nil {
			return err
		}
	}
	if f.Episode != "" && !found {
		return fmt.Errorf("episode %q: %w", f.Episode, ErrNotFound)
	}
	return nil
}

// ExportJSONL writes one JSON object per selected step and line: the step's
// fields plus its episode's level, domain and obs_version. Obs is in the
// order of the episode's ObsLayout (see Episodes).
func (s *Store) ExportJSONL(w io.Writer, f Filter) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	err := s.view(func(tx *bolt.Tx) error {
		return eachFiltered(tx, f, func(e Episode, st Step) error {
			return enc.Encode(exportRecord{
				Episode: e.ID, Level: e.Level, Domain: e.Domain, ObsVersion: e.ObsVersion,
				Seq: st.Seq, At: st.At, Obs: st.Obs, Action: st.Action, Guards: st.Guards,
				Reward: st.Reward, Outcome: st.Outcome,
			})
		})
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("export jsonl: %w", err)
	}
	return nil
}

// ExportCSV writes the selected steps as CSV with one flattened column per
// value:
//
//	episode,level,domain,seq,at,obs.<name>...,action.<k>...,reward.<k>...,outcome.<k>...,guards
//
// The column set is the union over the selected steps. obs columns follow
// the episodes' ObsLayout in order of first appearance (episodes in
// Episodes order; an unnamed feature i is "obs.<i>"); action, reward and
// outcome columns are sorted by key. A value a step lacks is an empty cell.
// guards is "name:target:before->after" joined with ";". Times are
// RFC 3339 UTC with nanoseconds. It reads the selection twice (columns,
// then rows) in one read transaction.
func (s *Store) ExportCSV(w io.Writer, f Filter) error {
	err := s.view(func(tx *bolt.Tx) error {
		cols := newColumns()
		err := eachFiltered(tx, f, func(e Episode, st Step) error {
			cols.add(e, st)
			return nil
		})
		if err != nil {
			return err
		}
		cw := csv.NewWriter(w)
		header, index := cols.layout()
		if err := cw.Write(header); err != nil {
			return err
		}
		row := make([]string, len(header))
		err = eachFiltered(tx, f, func(e Episode, st Step) error {
			clear(row)
			row[0], row[1], row[2] = e.ID, e.Level, e.Domain
			row[3] = strconv.FormatUint(st.Seq, 10)
			row[4] = st.At.UTC().Format(time.RFC3339Nano)
			for i, v := range st.Obs {
				row[index["obs."+obsName(e, i)]] = formatFloat(v)
			}
			for _, g := range []struct {
				prefix string
				m      map[string]float64
			}{{"action.", st.Action}, {"reward.", st.Reward}, {"outcome.", st.Outcome}} {
				for k, v := range g.m {
					row[index[g.prefix+k]] = formatFloat(v)
				}
			}
			row[len(row)-1] = formatGuards(st.Guards)
			return cw.Write(row)
		})
		if err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return fmt.Errorf("export csv: %w", err)
	}
	return nil
}

// columns collects the union of value names for ExportCSV.
type columns struct {
	obs     []string // first-appearance order
	seenObs map[string]bool
	action  map[string]bool
	reward  map[string]bool
	outcome map[string]bool
}

func newColumns() *columns {
	return &columns{seenObs: map[string]bool{}, action: map[string]bool{}, reward: map[string]bool{}, outcome: map[string]bool{}}
}

func (c *columns) add(e Episode, st Step) {
	for i := range st.Obs {
		if n := obsName(e, i); !c.seenObs[n] {
			c.seenObs[n] = true
			c.obs = append(c.obs, n)
		}
	}
	for k := range st.Action {
		c.action[k] = true
	}
	for k := range st.Reward {
		c.reward[k] = true
	}
	for k := range st.Outcome {
		c.outcome[k] = true
	}
}

// layout returns the header and each column's index by name.
func (c *columns) layout() ([]string, map[string]int) {
	header := []string{"episode", "level", "domain", "seq", "at"}
	for _, n := range c.obs {
		header = append(header, "obs."+n)
	}
	for _, g := range []struct {
		prefix string
		keys   map[string]bool
	}{{"action.", c.action}, {"reward.", c.reward}, {"outcome.", c.outcome}} {
		keys := make([]string, 0, len(g.keys))
		for k := range g.keys {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			header = append(header, g.prefix+k)
		}
	}
	header = append(header, "guards")
	index := make(map[string]int, len(header))
	for i, h := range header {
		index[h] = i
	}
	return header, index
}

func obsName(e Episode, i int) string {
	if i < len(e.ObsLayout) && e.ObsLayout[i] != "" {
		return e.ObsLayout[i]
	}
	return strconv.Itoa(i)
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func formatGuards(gs []Guard) string {
	var b strings.Builder
	for i, g := range gs {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, "%s:%s:%s->%s", g.Name, g.Target, formatFloat(g.Before), formatFloat(g.After))
	}
	return b.String()
}
