package simcluster

import (
	"context"
	"fmt"
	"time"

	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/wire"
)

// Policy is Regiment itself, the Commander and one Soldier per domain, as a
// sim.Policy: the same cores as the daemons, with directives and reports
// handed over in memory instead of over NATS. Evaluation and training use it
// to run Regiment on the same traffic as the baselines, fast and
// deterministically.
type Policy struct {
	cfg      *domains.Config
	cmd      *commander.Commander
	soldiers []*soldier.Soldier
	views    []*View
	ratio    int // Soldier ticks per Commander tick
	tick     int
	err      error
	// hpa is the cluster's own HPAs on the apps of recommend-mode domains,
	// whose Soldiers write nothing; nil when there are none.
	hpa *baseline.ClusterHPA
	// independent is the ablation without a Commander (NewIndependent):
	// cmd is nil and each Commander tick hands every Soldier the whole pool.
	independent *independent
}

// NewPolicy builds Regiment's hierarchy for cfg with its configured policies.
// rec and srec, when not nil, record the Commander's and each domain's
// Soldier's steps.
// opts replace the configured policies (WithCommander, WithSoldiers) or
// edit the Soldiers' configs (WithSoldierConfig).
func NewPolicy(cfg *domains.Config, rec commander.Recorder, srec func(domain string) soldier.Recorder, opts ...Option) (*Policy, error) {
	pol, err := resolve(cfg, opts)
	if err != nil {
		return nil, err
	}
	p := &Policy{cfg: cfg, ratio: max(1, int(cfg.Commander.Tick/cfg.Soldier.Tick)), hpa: baseline.NewClusterHPA(cfg)}
	pub := &handover{p: p}
	p.cmd = commander.New(cfg, pol.commander, cfg.Commander.Policy, pub, rec, 1, 0)
	if pol.pool != nil {
		p.cmd.SetPool(pol.pool)
	}
	for i, d := range cfg.Domains {
		scfg, err := soldier.NewConfig(cfg, d.Name)
		if err != nil {
			return nil, err
		}
		v := NewView(cfg, i, p.hpa)
		var r soldier.Recorder
		if srec != nil {
			r = srec(d.Name)
		}
		p.views = append(p.views, v)
		if pol.edit != nil {
			pol.edit(&scfg)
		}
		sp, err := pol.soldier(scfg)
		if err != nil {
			return nil, err
		}
		p.soldiers = append(p.soldiers, soldier.New(scfg, sp, v, v, pub, r))
	}
	return p, nil
}

// Err is the first error a tick met; a policy that erred stops acting.
func (p *Policy) Err() error { return p.err }

// tickSoldiers ticks every Soldier on telemetry t, their writes going into
// targets.
func (p *Policy) tickSoldiers(ctx context.Context, now time.Time, t *sim.Telemetry, targets []int32) error {
	for i, s := range p.soldiers {
		p.views[i].Set(t, targets)
		if _, err := s.Tick(ctx, now); err != nil {
			return fmt.Errorf("soldier %s tick: %w", p.cfg.Domains[i].Name, err)
		}
	}
	return nil
}

// Decide implements sim.Policy: the Commander ticks when due, then every
// Soldier observes t, writes its domain's targets and reports; the cluster's
// own HPAs then scale the apps of recommend-mode domains, whose Soldiers
// write nothing. At the first call the Soldiers go first, in their
// fallback, and the Commander ticks on their reports, as commander.Run's
// first tick waits for every domain's report.
func (p *Policy) Decide(now time.Time, t *sim.Telemetry, targets []int32) {
	if p.err != nil {
		return
	}
	ctx := context.Background()
	first := p.tick == 0
	if p.independent != nil {
		p.decideIndependent(ctx, now, t, targets)
		return
	}
	if !first && p.tick%p.ratio == 0 {
		if _, err := p.cmd.Tick(ctx, now); err != nil {
			p.err = fmt.Errorf("commander tick: %w", err)
			return
		}
	}
	p.tick++
	if p.err = p.tickSoldiers(ctx, now, t, targets); p.err != nil {
		return
	}
	if first { // once every domain has reported, as commander.Run's first tick
		if _, err := p.cmd.Tick(ctx, now); err != nil {
			p.err = fmt.Errorf("commander tick: %w", err)
			return
		}
	}
	p.hpa.Act(now, t, targets)
}

// handover delivers directives to the Soldiers and reports to the Commander.
type handover struct{ p *Policy }

func (h *handover) PublishDirective(_ context.Context, d wire.Directive) error {
	di := h.p.cfg.Domain(d.Domain)
	if di < 0 {
		return fmt.Errorf("directive for unknown domain %q", d.Domain)
	}
	if ok, why := h.p.soldiers[di].OnDirective(d, d.IssuedAt); !ok {
		if err := d.Validate(nil); err != nil {
			return fmt.Errorf("directive %d for %s rejected: %w", d.Seq, d.Domain, err)
		}
		return fmt.Errorf("directive %d for %s rejected: %s", d.Seq, d.Domain, why)
	}
	return nil
}

func (h *handover) PublishAllocation(context.Context, wire.Allocation) error { return nil }

func (h *handover) PublishReport(_ context.Context, r wire.DomainReport) error {
	if h.p.cmd == nil { // no Commander (NewIndependent): nobody reads reports
		return nil
	}
	if !h.p.cmd.OnReport(r) {
		return fmt.Errorf("report for unknown domain %q", r.Domain)
	}
	return nil
}

// View is one domain's Observer and Actuator over a simulation: the
// telemetry and targets of the step it was last Set to. simcluster.Policy's
// Soldiers and the trainer's (train.SoldierEnv) observe and act through it,
// so that both read the simulator as one.
type View struct {
	di, first, n int
	t            *sim.Telemetry
	targets      []int32
	bounds       [][2]int32 // per app, its HPA's min and max replicas where the cluster's HPAs scale the domain
	callers      [][]soldier.Caller
}

// NewView is domain di's View in cfg; hpa, when not nil, is the cluster's
// own HPAs, whose bounds it reports for the apps they scale.
func NewView(cfg *domains.Config, di int, hpa *baseline.ClusterHPA) *View {
	v := &View{di: di, first: -1, callers: soldier.Callers(cfg, di)}
	for _, a := range cfg.Apps() {
		if a.Domain != di {
			continue
		}
		if v.first < 0 {
			v.first = a.ID
		}
		v.n++
		if hpa != nil && hpa.Scales(a.ID) {
			v.bounds = append(v.bounds, [2]int32{int32(a.MinReplicas), int32(a.MaxReplicas)})
		}
	}
	return v
}

// Set points the view at telemetry t and the simulator's targets (written
// in place by Apply).
func (v *View) Set(t *sim.Telemetry, targets []int32) { v.t, v.targets = t, targets }

// First is the id of the domain's first app in the simulation; its apps are
// ids First() to First()+len(apps)-1.
func (v *View) First() int { return v.first }

// Observe writes the fields of obs's apps that the simulator has, field by
// field: memory, restarts, Blind, Missing and ForeignOwner it never reports,
// and it leaves them as the Soldier made them (zero), so that a tick does
// not clear each app's whole observation, string header included.
func (v *View) Observe(_ context.Context, obs *soldier.Observation) error {
	apps, targets := v.t.Apps[v.first:v.first+v.n], v.targets[v.first:v.first+v.n]
	out := obs.Apps[:len(apps)]
	for i := range apps {
		a, o := &apps[i], &out[i]
		o.RPS, o.P99, o.ErrorRate, o.CPUUtil = a.RPS, a.P99, a.ErrorRate, a.CPURequestUtil
		o.CallerRPS = soldier.CallerRPS(v.callers[i], v.rps)
		o.Ready, o.Starting, o.Pending, o.Replicas = a.Ready, a.Starting, a.Pending, targets[i]
		o.HPAMin, o.HPAMax = 0, 0
		if i < len(v.bounds) {
			o.HPAMin, o.HPAMax = v.bounds[i][0], v.bounds[i][1]
		}
	}
	obs.P99, obs.ErrorRate = v.t.DomainP99(v.di), v.t.Domains[v.di].ErrorRate
	return nil
}

// rps is app id's request rate in the telemetry.
func (v *View) rps(id int) float64 { return v.t.Apps[id].RPS }

// Apply writes changes into the targets.
func (v *View) Apply(_ context.Context, changes []soldier.Change) error {
	for _, c := range changes {
		v.targets[v.first+c.App] = c.Replicas
	}
	return nil
}
