package rl

import "math"

// halfLog2Pi is log(2 pi) / 2.
var halfLog2Pi = 0.5 * math.Log(2*math.Pi)

// GaussianLogProb returns the log density of x under independent normals
// with means mean and standard deviations exp(logStd), summed over
// dimensions:
//
//	log p(x) = sum_k -(x_k - mu_k)^2 / (2 sigma_k^2) - log sigma_k - log(2 pi) / 2
func GaussianLogProb(x, mean, logStd []float64) float64 {
	var lp float64
	for k, xk := range x {
		u := (xk - mean[k]) * math.Exp(-logStd[k])
		lp += -0.5 * u * u // -(x - mu)^2 / (2 sigma^2)
		lp -= logStd[k]    // -log sigma
		lp -= halfLog2Pi   // -log(2 pi) / 2
	}
	return lp
}

// GaussianLogProbGrad returns GaussianLogProb(x, mean, logStd) and adds
// scale times its gradient to dMean and dLogStd (either may be nil):
//
//	d log p / d mu_k        = (x_k - mu_k) / sigma_k^2
//	d log p / d log sigma_k = (x_k - mu_k)^2 / sigma_k^2 - 1
func GaussianLogProbGrad(x, mean, logStd []float64, scale float64, dMean, dLogStd []float64) float64 {
	var lp float64
	for k, xk := range x {
		inv := math.Exp(-logStd[k]) // 1 / sigma
		u := (xk - mean[k]) * inv   // standardised residual
		lp += -0.5 * u * u          // same terms, same order as GaussianLogProb
		lp -= logStd[k]
		lp -= halfLog2Pi
		if dMean != nil {
			dMean[k] += scale * u * inv
		}
		if dLogStd != nil {
			dLogStd[k] += scale * (u*u - 1)
		}
	}
	return lp
}

// GaussianEntropy returns the differential entropy of independent normals
// with standard deviations exp(logStd) (Cover and Thomas, "Elements of
// Information Theory", 2nd ed., theorem 8.4.1, diagonal case):
//
//	H = sum_k log sigma_k + (1 + log(2 pi)) / 2
//
// Its derivative with respect to each log sigma_k is 1.
func GaussianEntropy(logStd []float64) float64 {
	var h float64
	for _, ls := range logStd {
		h += ls               // log sigma
		h += 0.5 + halfLog2Pi // (1 + log(2 pi)) / 2
	}
	return h
}

// Squash maps K-1 logits z onto the open K-simplex by the additive logistic
// transform s = softmax([z, 0]) (Aitchison 1986, "The Statistical Analysis
// of Compositional Data", section 6.2), writing the K shares to s, and
// returns sum_k log s_k (for the density's Jacobian term). It panics unless
// len(s) == len(z)+1.
//
//	m     = max(0, max_k z_k)
//	lse   = m + log(exp(-m) + sum_k exp(z_k - m))   (log sum_k exp([z, 0])_k)
//	s_k   = exp(z_k - lse), k < K
//	s_K   = exp(-lse)
func Squash(z, s []float64) (sumLogS float64) {
	if len(s) != len(z)+1 {
		panic("rl: Squash needs len(s) == len(z)+1")
	}
	lse := logSumExp0(z)
	for k, zk := range z {
		s[k] = math.Exp(zk - lse)
		sumLogS += zk - lse
	}
	s[len(z)] = math.Exp(-lse)
	sumLogS -= lse
	return sumLogS
}

// Unsquash is Squash's inverse, the additive log-ratio transform
// z_k = log(s_k / s_K), k < K. Shares must be positive.
func Unsquash(s, z []float64) {
	if len(s) != len(z)+1 {
		panic("rl: Unsquash needs len(s) == len(z)+1")
	}
	last := math.Log(s[len(z)])
	for k := range z {
		z[k] = math.Log(s[k]) - last
	}
}

// logSumExp0 returns log(1 + sum_k exp(z_k)), the log-normaliser of
// softmax([z, 0]), without overflow.
func logSumExp0(z []float64) float64 {
	m := 0.0
	for _, v := range z {
		m = max(m, v)
	}
	s := math.Exp(-m)
	for _, v := range z {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// jacobian0 returns sum_{k=1..K} log s_k for s = softmax([z, 0]):
//
//	sum_k log s_k = sum_{k<K} z_k - K lse
func jacobian0(z []float64) float64 {
	lse := logSumExp0(z)
	var s float64
	for _, v := range z {
		s += v
	}
	return s - float64(len(z)+1)*lse
}

// LogisticNormalLogProb returns the log density of shares s (K values,
// positive, summing to 1) under the logistic normal whose K-1 logits
// z = Unsquash(s) are independent normals with means mean and standard
// deviations exp(logStd) (Aitchison and Shen 1980, "Logistic-normal
// distributions: some properties and uses", Biometrika 67(2), eq. 2.2):
//
//	log p(s) = log N(z; mu, sigma) - sum_{k=1..K} log s_k
//
// The second term is log |d z / d s_{1..K-1}|, the Jacobian of the additive
// log-ratio transform; the density is with respect to Lebesgue measure on
// the first K-1 shares. z must have room for K-1 values (scratch).
func LogisticNormalLogProb(s, mean, logStd, z []float64) float64 {
	return LogisticNormalLogProbGrad(s, mean, logStd, z, 0, nil, nil)
}

// LogisticNormalLogProbGrad returns LogisticNormalLogProb and adds scale
// times its gradient to dMean and dLogStd (either may be nil). The Jacobian
// term does not depend on mu or sigma, so the gradient is the Gaussian's at
// z = Unsquash(s):
//
//	d log p / d mu_k        = (z_k - mu_k) / sigma_k^2
//	d log p / d log sigma_k = (z_k - mu_k)^2 / sigma_k^2 - 1
func LogisticNormalLogProbGrad(s, mean, logStd, z []float64, scale float64, dMean, dLogStd []float64) float64 {
	z = z[:len(s)-1]
	Unsquash(s, z)
	lp := GaussianLogProbGrad(z, mean, logStd, scale, dMean, dLogStd) // log N(z; mu, sigma)
	for _, sk := range s {
		lp -= math.Log(sk) // - log s_k
	}
	return lp
}
