package train

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/regimentd/regiment/internal/core/rl"
)

// Phase is one step of a curriculum: its environments and how long to train
// on them.
type Phase struct {
	Name string
	// NewEnv builds worker w's environment; every worker's Env must have the
	// same Spec, whose Obs and Act match the policy's.
	NewEnv func(worker int) (Env, error)
	// Steps is the environment steps (decision steps x agents, summed over
	// workers) to train on this phase, > 0.
	Steps int64
}

// Config is a training run's configuration.
type Config struct {
	Workers int    // parallel environments, >= 1; default 2
	Horizon int    // decision steps per worker per update, >= 1; default 128
	Seed    uint64 // seeds every worker's randomness and PPO's shuffles
	PPO     rl.Config
	// Progress, when not nil, gets one line per update (see Progress.String).
	Progress io.Writer
	// CSV, when not nil, gets a header and one row per update.
	CSV io.Writer
}

// Progress is one update's report.
type Progress struct {
	Phase        string
	Update       int
	Steps        int64   // environment steps so far, all phases
	StepsPerSec  float64 // environment steps per wall-clock second, this update
	Episodes     int     // episodes finished this update
	EpisodeTotal float64 // mean return per agent of the episodes finished this update; NaN if none
	Compliance   float64 // mean compliance of those episodes; NaN if none
	Stats        rl.Stats
}

// String is the progress line; an update that finished no episode shows
// "-" for their reward and compliance.
func (p Progress) String() string {
	reward, compliance := "       -", "     -"
	if p.Episodes > 0 {
		reward, compliance = fmt.Sprintf("%8.3f", p.EpisodeTotal), fmt.Sprintf("%.4f", p.Compliance)
	}
	return fmt.Sprintf("%-10s upd %4d  steps %9d  %7.0f steps/s  ep %3d  reward %s  compliance %s  entropy %6.3f  kl %.4f  ev %6.3f",
		p.Phase, p.Update, p.Steps, p.StepsPerSec, p.Episodes, reward, compliance, p.Stats.Entropy, p.Stats.ApproxKL, p.Stats.ExplainedVariance)
}

const csvHeader = "phase,update,steps,steps_per_sec,episodes,episode_reward,compliance,entropy,approx_kl,explained_variance,policy_loss,value_loss,clip_fraction,early_stop\n"

func (p Progress) csv() string {
	return fmt.Sprintf("%s,%d,%d,%.1f,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%t\n",
		p.Phase, p.Update, p.Steps, p.StepsPerSec, p.Episodes, p.EpisodeTotal, p.Compliance,
		p.Stats.Entropy, p.Stats.ApproxKL, p.Stats.ExplainedVariance, p.Stats.PolicyLoss, p.Stats.ValueLoss, p.Stats.ClipFraction, p.Stats.EarlyStop)
}

// Episode is one finished episode's totals.
type Episode struct {
	Steps int
	// Return is the episode's reward per agent: the sum over steps of the
	// mean over agents.
	Return float64
	// Terms are the reward terms' means over the episode's steps, in
	// Spec.Terms order.
	Terms         []float64
	Compliance    float64 // mean over steps, [0, 1]
	CostCoreHours float64 // summed over steps
	Actions       int     // replica writes, summed over steps
}

// episodeAcc accumulates one running episode.
type episodeAcc struct {
	ep Episode
}

func (a *episodeAcc) reset(terms int) {
	a.ep = Episode{Terms: make([]float64, terms)}
}

func (a *episodeAcc) add(rew []float64, out Outcome) {
	m := 0.0
	for _, r := range rew {
		m += r
	}
	a.ep.Steps++
	a.ep.Return += m / float64(len(rew))
	for k, v := range out.Terms {
		a.ep.Terms[k] += v
	}
	a.ep.Compliance += out.Compliance
	a.ep.CostCoreHours += out.CostCoreHours
	a.ep.Actions += out.Actions
}

func (a *episodeAcc) finish() Episode {
	e := a.ep
	if e.Steps > 0 {
		for k := range e.Terms {
			e.Terms[k] /= float64(e.Steps)
		}
		e.Compliance /= float64(e.Steps)
	}
	return e
}

// worker runs one environment with its own policy clone.
type worker struct {
	env     Env
	spec    Spec
	pol     *rl.Policy
	r       *rand.Rand
	obs     [][]float64 // per agent, current observation
	raw     []float64   // raw observations of this rollout, for the normaliser (step-major, agent-minor)
	acts    []*rl.Action
	envAct  [][]float64
	rew     []float64
	rolls   []*rl.Rollout // per agent
	acc     episodeAcc
	done    []Episode // finished this rollout
	started bool
}

func newWorker(env Env, pol *rl.Policy, horizon int, r *rand.Rand) (*worker, error) {
	s := env.Spec()
	if err := rl.CheckLayout(pol.Spec.Obs, s.Obs); err != nil {
		return nil, fmt.Errorf("env observation layout: %w", err)
	}
	if !pol.Spec.Action.Equal(s.Act) {
		return nil, fmt.Errorf("env action layout %v differs from the policy's %v", s.Act.Segments, pol.Spec.Action.Segments)
	}
	if s.Agents < 1 {
		return nil, fmt.Errorf("env has %d agents", s.Agents)
	}
	w := &worker{env: env, spec: s, pol: pol.Clone(), r: r}
	w.obs, w.envAct = make([][]float64, s.Agents), make([][]float64, s.Agents)
	w.acts, w.rolls = make([]*rl.Action, s.Agents), make([]*rl.Rollout, s.Agents)
	for a := range s.Agents {
		w.obs[a] = make([]float64, s.Obs.Dim())
		w.acts[a] = w.pol.NewAction()
		w.envAct[a] = w.acts[a].Env
		w.rolls[a] = w.pol.NewRollout(horizon)
	}
	w.rew = make([]float64, s.Agents)
	w.raw = make([]float64, 0, horizon*s.Agents*s.Obs.Dim())
	return w, nil
}

// sync takes the learner's parameters and normaliser statistics.
func (w *worker) sync(p *rl.Policy) {
	copy(w.pol.Params(), p.Params())
	w.pol.Norm = p.Norm.Clone()
	w.pol.Norm.Frozen = true
}

// collect fills every agent's rollout with horizon steps (sampling actions
// when explore, else the mean action), cutting and bootstrapping at episode
// ends and at the rollout's end.
func (w *worker) collect(horizon int, gamma float64, explore bool) {
	w.raw, w.done = w.raw[:0], w.done[:0]
	for _, r := range w.rolls {
		r.Reset()
	}
	if !w.started {
		w.env.Reset(w.r, w.obs)
		w.acc.reset(len(w.spec.Terms))
		w.started = true
	}
	for range horizon {
		for a, o := range w.obs {
			w.raw = append(w.raw, o...)
			if explore {
				w.pol.Act(o, w.r, w.acts[a])
			} else {
				w.pol.Mean(o, w.acts[a])
			}
		}
		done, out := w.env.Step(w.envAct, w.obs, w.rew)
		w.acc.add(w.rew, out)
		for a, r := range w.rolls {
			w.rolls[a].Add(w.acts[a], w.rew[a], false)
			if done {
				bootstrap(r, gamma*w.pol.Value(w.obs[a]))
			}
		}
		if done {
			w.done = append(w.done, w.acc.finish())
			w.env.Reset(w.r, w.obs)
			w.acc.reset(len(w.spec.Terms))
		}
	}
	for a, r := range w.rolls {
		if !r.Done[r.Len()-1] {
			bootstrap(r, gamma*w.pol.Value(w.obs[a]))
		}
	}
}

// bootstrap cuts r's trajectory after its last step, folding the discounted
// value of the next state into the last reward (see the package doc).
func bootstrap(r *rl.Rollout, discounted float64) {
	n := r.Len() - 1
	r.Reward[n] += discounted
	r.Done[n] = true
}

// appendRollout appends src's steps to dst.
func appendRollout(dst, src *rl.Rollout, tmp *rl.Action) {
	for i := range src.Len() {
		tmp.Input = src.Obs[i*src.ObsDim : (i+1)*src.ObsDim]
		tmp.Latent = src.Latent[i*src.LatentDim : (i+1)*src.LatentDim]
		tmp.LogProb, tmp.Value = src.LogProb[i], src.Value[i]
		dst.Add(tmp, src.Reward[i], src.Done[i])
	}
}

// Result is a training run's outcome.
type Result struct {
	Steps    int64
	Updates  int
	Elapsed  time.Duration
	Episodes []Episode // the last phase's finished episodes (of its last updates)
}

// StepsPerSec is the run's environment steps per wall-clock second.
func (r Result) StepsPerSec() float64 { return float64(r.Steps) / r.Elapsed.Seconds() }

// Run trains pol through the phases in order with PPO and returns when every
// phase has had its steps or ctx ends (then with ctx's error and the
// policy as trained so far). pol's normaliser is unfrozen and updated with
// every collected observation.
func Run(ctx context.Context, cfg Config, pol *rl.Policy, phases []Phase) (Result, error) {
	if cfg.Workers < 1 {
		cfg.Workers = 2
	}
	if cfg.Horizon < 1 {
		cfg.Horizon = 128
	}
	ppo, err := rl.NewPPO(cfg.PPO)
	if err != nil {
		return Result{}, err
	}
	if cfg.CSV != nil {
		io.WriteString(cfg.CSV, csvHeader)
	}
	pol.Norm.Frozen = false
	master := rand.New(rand.NewPCG(cfg.Seed, 0x747261696e))
	var res Result
	start := time.Now()
	for pi, ph := range phases {
		workers := make([]*worker, cfg.Workers)
		for w := range workers {
			env, err := ph.NewEnv(w)
			if err != nil {
				return res, fmt.Errorf("phase %s: worker %d env: %w", ph.Name, w, err)
			}
			seed := cfg.Seed*1_000_003 + uint64(pi)*1_009 + uint64(w)
			if workers[w], err = newWorker(env, pol, cfg.Horizon, rand.New(rand.NewPCG(seed, 0x776f726b))); err != nil {
				return res, fmt.Errorf("phase %s: %w", ph.Name, err)
			}
		}
		agents := workers[0].spec.Agents
		for _, w := range workers {
			if w.spec.Agents != agents {
				return res, fmt.Errorf("phase %s: workers' envs have %d and %d agents", ph.Name, agents, w.spec.Agents)
			}
		}
		merged := pol.NewRollout(cfg.Workers * agents * cfg.Horizon)
		tmp := &rl.Action{}
		var phaseSteps int64
		res.Episodes = res.Episodes[:0]
		for phaseSteps < ph.Steps {
			if err := ctx.Err(); err != nil {
				res.Elapsed = time.Since(start)
				return res, err
			}
			t0 := time.Now()
			var wg sync.WaitGroup
			for _, w := range workers {
				w.sync(pol)
				wg.Add(1)
				go func() {
					defer wg.Done()
					w.collect(cfg.Horizon, cfg.PPO.Gamma, true)
				}()
			}
			wg.Wait()
			merged.Reset()
			var eps []Episode
			for _, w := range workers {
				for a := range w.rolls {
					appendRollout(merged, w.rolls[a], tmp)
				}
				d := w.spec.Obs.Dim()
				for i := 0; i+d <= len(w.raw); i += d {
					pol.Norm.Observe(w.raw[i : i+d])
				}
				eps = append(eps, w.done...)
			}
			stats := ppo.Update(pol, merged, master)
			n := int64(merged.Len())
			phaseSteps += n
			res.Steps += n
			res.Updates++
			res.Episodes = append(res.Episodes, eps...)
			if len(res.Episodes) > 64 {
				res.Episodes = res.Episodes[len(res.Episodes)-64:]
			}
			p := Progress{Phase: ph.Name, Update: res.Updates, Steps: res.Steps, StepsPerSec: float64(n) / time.Since(t0).Seconds(),
				Episodes: len(eps), EpisodeTotal: math.NaN(), Compliance: math.NaN(), Stats: stats}
			if len(eps) > 0 {
				p.EpisodeTotal, p.Compliance = 0, 0
				for _, e := range eps {
					p.EpisodeTotal += e.Return
					p.Compliance += e.Compliance
				}
				p.EpisodeTotal /= float64(len(eps))
				p.Compliance /= float64(len(eps))
			}
			if cfg.Progress != nil {
				fmt.Fprintln(cfg.Progress, p)
			}
			if cfg.CSV != nil {
				io.WriteString(cfg.CSV, p.csv())
			}
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// Evaluate runs episodes episodes of the policy's mean action, spread over
// workers environments built by newEnv (in parallel), and returns them in
// worker order. pol is not changed.
func Evaluate(ctx context.Context, pol *rl.Policy, newEnv func(worker int) (Env, error), workers, episodes int, seed uint64) ([]Episode, error) {
	workers = max(1, min(workers, episodes))
	ws := make([]*worker, workers)
	for w := range ws {
		env, err := newEnv(w)
		if err != nil {
			return nil, fmt.Errorf("evaluation worker %d env: %w", w, err)
		}
		if ws[w], err = newWorker(env, pol, 1, rand.New(rand.NewPCG(seed, uint64(w)))); err != nil {
			return nil, err
		}
		ws[w].sync(pol)
	}
	out := make([][]Episode, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range ws {
		want := episodes / workers
		if w < episodes%workers {
			want++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for len(out[w]) < want {
				if err := ctx.Err(); err != nil {
					errs[w] = err
					return
				}
				ws[w].collect(1, 0, false)
				out[w] = append(out[w], ws[w].done...)
			}
		}()
	}
	wg.Wait()
	var all []Episode
	for w := range ws {
		if errs[w] != nil {
			return nil, errs[w]
		}
		all = append(all, out[w]...)
	}
	return all, nil
}
