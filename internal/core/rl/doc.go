// Package rl holds Regiment's learned policies: small multilayer perceptrons
// with hand-written backpropagation, a Gaussian action head with an optional
// logistic-normal (softmax-squashed) simplex block for shares, a value head,
// observation normalisation with running statistics, Adam, and PPO with
// GAE(lambda). It also reads and writes versioned checkpoints whose header is
// human-readable JSON.
//
// The package imports the standard library and golang.org/x/sys/cpu (to
// find AVX) only. The dependency table allows gonum, but nothing here needs
// it: the networks have some ten thousand parameters and plain loops over
// float64 slices serve, but for one kernel: Network.ForwardBatch (and
// Policy.LatentMeans, which deployment uses to act for many agents at once)
// multiplies each layer with 256-bit AVX vectors on amd64 (rows4_amd64.s),
// bit-identical to Forward's loops, which are its portable fallback.
//
// The Tanh activation is rl's own tanh (tanh.go: a 641-point table and the
// addition theorem), within 1e-15 relative of math.Tanh and some three times
// faster, in training and inference alike.
//
// # Shapes
//
// A Network is a fully connected MLP. Its parameters are one flat []float64,
// layer by layer, each layer its weight matrix W (out x in, row-major) then
// its bias b (out). A Policy keeps all its trainable parameters in one flat
// vector (Params): actor, then critic (absent with a shared trunk), then the
// state-independent log standard deviations; the networks' parameters and
// LogStd are views into it, so Adam, gradient clipping and checkpoints see
// one vector.
//
// # Actions
//
// An ActionLayout is a list of segments. A Gaussian segment of size n is n
// independent normal dimensions (mean from the actor, log-std a parameter
// per dimension); bounds are the environment's business (clip or squash
// where the action is applied). A Simplex segment of size K (the
// Commander's shares over domains and the reserve) is a logistic-normal
// distribution (Aitchison and Shen 1980): a Gaussian over K-1 logits z,
// mapped onto the open simplex by the additive logistic transform
// s = softmax([z, 0]). Fixing the last logit at 0 makes the map a bijection
// from R^(K-1) to the open simplex, so the shares have a proper density:
//
//	log p(s) = log N(z; mu, sigma) - sum_{k=1..K} log s_k
//
// The Jacobian term does not depend on the parameters, so PPO's probability
// ratios are those of the Gaussian over the latent z; Action.Latent keeps z
// and is what a Rollout stores. The entropy bonus is the entropy of the
// latent Gaussian (the logistic-normal's has no closed form). Mean (for
// deployment) squashes the mean logits: the shares at the latent mode.
//
// # Training
//
// One level (Commander or Soldier) trains with one PPO, whose Config holds
// that level's hyperparameters, KL coefficient and target included. A loop
// (see the package example):
//
//	p.Norm.Observe(obs)              // running statistics (Welford), not when frozen
//	p.Act(obs, r, act)               // sample; act.Input is the normalised obs
//	roll.Add(act, reward, done)      // until roll.Full()
//	roll.LastValue = p.Value(next)   // bootstrap the unfinished episode
//	stats := ppo.Update(p, roll, r)  // GAE, epochs of minibatches, Adam
//
// Update (Schulman et al. 2017) computes GAE(lambda) advantages and returns
// (GAE), standardises the advantages, then runs Epochs passes over shuffled
// minibatches of the clipped surrogate loss plus a squared-error value loss,
// an optional KL penalty and an entropy bonus (the formula is on
// PPO.Update), clipping the gradient's global norm before each Adam step.
// With KL.EarlyStop it stops at the first minibatch whose approximate KL
// exceeds KL.Target; with KL.Adaptive it halves or doubles the penalty
// coefficient after the update. A Rollout holds one environment's
// consecutive steps; a done step is a true terminal (GAE does not bootstrap
// through it). Gradients are hand-written and checked against finite
// differences in the tests.
//
// # Checkpoints
//
// Save writes a text header and binary weights:
//
//	regiment-policy-checkpoint
//	{ JSON: format, observation layout (name, version, features), action
//	  layout, actor and critic architectures, normaliser count and clip,
//	  provenance (stage, steps, updates, seed, date, commit, scenarios,
//	  metrics), tensor names and shapes; one feature, segment or tensor a
//	  line }
//	weights <n> float64le crc32 <hex>
//	<n little-endian float64: the tensors in header order>
//
// The tensors are each layer's weight (out x in, row-major) and bias, actor
// then critic, then log_std, normalizer/mean and normalizer/m2. Load checks
// the format version, the observation layout (CheckLayout), that the tensor
// list is the one the header's architecture implies, the count, the CRC and
// that nothing follows. The action layout is in the header (Policy.Spec
// after Load); a caller that needs a particular one compares it
// (ActionLayout.Equal).
//
// # Invariants
//
//   - Log-probabilities are natural-log densities of Action.Env, Gaussian
//     and logistic-normal terms summed over segments.
//   - Observations are normalised by the Policy's Normalizer before the
//     networks see them; Action.Input is the normalised vector. The
//     normaliser changes only through Observe and never when Frozen. Load
//     returns a frozen normaliser (evaluation); a trainer unfreezes it.
//   - Randomness is a parameter (*rand.Rand from math/rand/v2); nothing reads
//     the clock or global random state. A Policy, Rollout and PPO are
//     deterministic for a seed.
//   - Forward, Backward, Act, Mean, Value, Rollout.Add and PPO.Update (after
//     its first call for a given policy and rollout size) do not allocate.
//   - Checkpoints record the observation Layout; Load refuses a checkpoint
//     whose layout differs from the caller's (ErrLayoutMismatch), naming both
//     versions and the first differing feature.
//
// # Concurrency
//
// A Policy, Network tape, Rollout, Normalizer and PPO are not safe for
// concurrent use: Act, Mean and Value use the Policy's scratch buffers. Give
// each goroutine its own Policy.Clone. Pure functions (GAE, GaussianLogProb,
// LogisticNormalLogProb, ...) are safe.
//
// # Imports
//
// rl is a pure core: it must not import NATS, bbolt, client-go, HCL or any
// other Regiment package.
package rl
