package recording

import (
	"encoding/json"
	"strings"

	"github.com/regimentd/regiment/internal/core/domains"
)

// MetaApp prefixes the keys of a Soldier episode's Meta that describe its
// apps: "app/<domain>/<app>" holds the app's AppMeta as JSON. A Soldier
// daemon writes them when the episode begins and again for each app that
// is discovered or changes (store.Store.SetEpisodeMeta), so an episode
// keeps every app it decided for, including apps found by label that no
// config lists; an app that left keeps its last description.
const MetaApp = "app/"

// AppMeta is what an episode keeps of one app: where it runs and the
// attributes that the report's estimates take.
type AppMeta struct {
	// Kind, Namespace and Workload name the app's workload on Kubernetes
	// (empty on a simulated cluster), HPA its HorizontalPodAutoscaler.
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Workload  string `json:"workload,omitempty"`
	HPA       string `json:"hpa,omitempty"`
	// Discovered is true for an app found by its domain's discover block.
	Discovered bool `json:"discovered,omitempty"`
	// CPUPerReplica is cores per replica (a discovered app's pods' CPU
	// request); ServiceTimeSeconds the mean service time of one request.
	CPUPerReplica      float64 `json:"cpu_per_replica"`
	ServiceTimeSeconds float64 `json:"service_time_seconds"`
	Concurrency        int     `json:"concurrency"`
	MinReplicas        int     `json:"min_replicas"`
	MaxReplicas        int     `json:"max_replicas"`
}

// AppsMeta describes the apps of domain in cfg as a Soldier episode's Meta
// keeps them (MetaApp): with their workloads when onKube. cfg carries the
// discovered apps (domains.Config.WithDiscovered). An unknown domain has
// none.
func AppsMeta(cfg *domains.Config, domain string, onKube bool) map[string]string {
	di := cfg.Domain(domain)
	out := map[string]string{}
	if di < 0 {
		return out
	}
	for _, a := range cfg.Apps() {
		if a.Domain != di {
			continue
		}
		m := AppMeta{Discovered: a.AppSet.Discovered, CPUPerReplica: a.CPUPerReplica,
			ServiceTimeSeconds: a.ServiceTime.Seconds(), Concurrency: max(1, a.Concurrency),
			MinReplicas: a.MinReplicas, MaxReplicas: a.MaxReplicas}
		if onKube {
			w := cfg.Workload(a)
			m.Kind, m.Namespace, m.Workload, m.HPA = string(w.Kind), w.Namespace, w.Name, w.HPA
		}
		raw, err := json.Marshal(m)
		if err != nil {
			continue // plain numbers and strings always marshal
		}
		out[MetaApp+a.Name] = string(raw)
	}
	return out
}

// AppsOf reads the apps described in an episode's Meta, by "domain/app"
// name; entries that do not decode are left out.
func AppsOf(meta map[string]string) map[string]AppMeta {
	out := map[string]AppMeta{}
	for k, v := range meta {
		name, ok := strings.CutPrefix(k, MetaApp)
		if !ok {
			continue
		}
		var m AppMeta
		if json.Unmarshal([]byte(v), &m) == nil {
			out[name] = m
		}
	}
	return out
}
