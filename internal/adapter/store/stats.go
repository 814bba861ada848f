package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Stats summarises a store. Computing it decodes every step.
type Stats struct {
	Episodes      int
	Steps         int
	GuardedSteps  int            // steps where at least one guard changed its target
	StepsByLevel  map[string]int // by Episode.Level
	StepsByDomain map[string]int // by Episode.Domain; episodes without a domain are not counted
	First, Last   time.Time      // first and last step; zero without steps
	LedgerEntries int
	FileBytes     int64   // size of the file on disk
	RewardMean    float64 // mean of Reward["total"] over RewardSteps steps
	RewardSteps   int     // steps that carry a "total" reward
	PerEpisode    []EpisodeStats
}

// EpisodeStats summarises one episode, in Episodes order.
type EpisodeStats struct {
	ID, Level, Domain string
	Steps             int
	GuardedSteps      int
	First, Last       time.Time
	RewardMean        float64 // mean of Reward["total"]; 0 when RewardSteps is 0
	RewardSteps       int
}

// stepSummary is the part of a Step that Stats needs.
type stepSummary struct {
	Guards []Guard            `json:"guards"`
	Reward map[string]float64 `json:"reward"`
}

// Stats scans the whole store in one read transaction.
func (s *Store) Stats() (Stats, error) {
	st := Stats{StepsByLevel: map[string]int{}, StepsByDomain: map[string]int{}}
	err := s.view(func(tx *bolt.Tx) error {
		eps, err := allEpisodes(tx)
		if err != nil {
			return err
		}
		st.Episodes = len(eps)
		var rewardSum float64
		for _, e := range eps {
			es := EpisodeStats{ID: e.ID, Level: e.Level, Domain: e.Domain}
			var sum float64
			if b := stepBucket(tx, e.ID); b != nil {
				err := scan(b, time.Time{}, time.Time{}, func(k, v []byte) error {
					var sm stepSummary
					if err := json.Unmarshal(v, &sm); err != nil {
						return fmt.Errorf("decode step %x of %q: %w", k, e.ID, err)
					}
					at := keyTime(k)
					if es.Steps == 0 {
						es.First = at
					}
					es.Last = at
					es.Steps++
					for _, g := range sm.Guards {
						if g.Changed() {
							es.GuardedSteps++
							break
						}
					}
					if r, ok := sm.Reward["total"]; ok {
						sum += r
						es.RewardSteps++
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			if es.RewardSteps > 0 {
				es.RewardMean = sum / float64(es.RewardSteps)
			}
			rewardSum += sum
			st.RewardSteps += es.RewardSteps
			st.Steps += es.Steps
			st.GuardedSteps += es.GuardedSteps
			st.StepsByLevel[e.Level] += es.Steps
			if e.Domain != "" {
				st.StepsByDomain[e.Domain] += es.Steps
			}
			if es.Steps > 0 {
				if st.First.IsZero() || es.First.Before(st.First) {
					st.First = es.First
				}
				if es.Last.After(st.Last) {
					st.Last = es.Last
				}
			}
			st.PerEpisode = append(st.PerEpisode, es)
		}
		if st.RewardSteps > 0 {
			st.RewardMean = rewardSum / float64(st.RewardSteps)
		}
		if b := tx.Bucket(bucketLedger); b != nil {
			st.LedgerEntries = b.Stats().KeyN
		}
		return nil
	})
	if err != nil {
		return Stats{}, fmt.Errorf("stats of %q: %w", s.path, err)
	}
	if fi, err := os.Stat(s.path); err == nil {
		st.FileBytes = fi.Size()
	}
	return st, nil
}

// keyTime decodes the time half of a step or ledger key.
func keyTime(k []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(k[:8]))).UTC()
}
