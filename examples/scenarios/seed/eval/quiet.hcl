# Evaluation, seed scale: a quiet day before the tournament (2 June 1998). The World Cup site's
# traffic drives every domain (fraud through payment's calls).
#
# The split (docs/seed-scale.md): training and evaluation each hold quiet
# days (WorldCup98 before the tournament), tournament days (from 10 June
# 1998) and a per-function day (Azure Functions 2019), on disjoint days and
# functions. Training: quiet 05-20, 05-27, 05-28, 05-29; tournament 06-12,
# 06-14, 06-18, 06-20; the even rows of the Azure trace. Evaluation: quiet
# 05-22, 05-26, 06-02, 06-05; tournament 06-15, 06-23, 06-24, 06-25; the odd
# rows.
# Demand is the seed-scale world's (examples/seedscale.hcl): each trace's
# peak over the replayed window maps to peak_rps (peak_rps_of = "window"), so
# that quiet and busy days carry the same peak load; a timeseries shape is
# split between a domain's apps by log-normal weights of sigma app_skew (1.6:
# the top 5% of apps carry about half the traffic), and each app mixes the
# domain's shape with a component of its own, the same trace up to app_shift
# (15 minutes) away (app_own = 0.5). Each tick's arrivals are Poisson at the
# app's rate, and a burst shared by the domain's apps (burst_sigma,
# burst_correlation) restores the residual the own components average out:
# both sized from the training windows' residuals by hack/regimes
# (docs/simulator.md, "Traffic"). The first 15 minutes are a warm-up no
# metric counts (docs/evaluation.md). Fraud's demand is payment's calls, 20 s
# later (call_lag in the config).
scenario "seed-quiet" {
  start         = "1998-06-02T00:00:00Z"
  duration      = "24h"
  seed          = 1
  arrival_noise = "poisson"
  warmup        = "15m"

  traffic "payment" {
    trace             = "../../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format            = "timeseries"
    peak_rps          = 1730000   # ~25,000 payment pods at the peak under hpa (~33% of the pool)
    peak_rps_of       = "window"
    app_skew          = 1.6
    app_own           = 0.5
    app_shift         = "15m"
    burst_sigma       = 0.065
    burst_correlation = 0.27
  }
  traffic "data" {
    trace             = "../../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format            = "timeseries"
    peak_rps          = 212000    # ~7,500 pods (~10%)
    peak_rps_of       = "window"
    app_skew          = 1.6
    app_own           = 0.5
    app_shift         = "15m"
    burst_sigma       = 0.065
    burst_correlation = 0.27
  }
  traffic "merchant" {
    trace             = "../../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format            = "timeseries"
    peak_rps          = 1456000   # ~22,000 pods (~30%)
    peak_rps_of       = "window"
    app_skew          = 1.6
    app_own           = 0.5
    app_shift         = "15m"
    burst_sigma       = 0.065
    burst_correlation = 0.27
  }
  traffic "platform" {
    trace             = "../../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format            = "timeseries"
    peak_rps          = 334000    # ~8,000 pods (~11%)
    peak_rps_of       = "window"
    app_skew          = 1.6
    app_own           = 0.5
    app_shift         = "15m"
    burst_sigma       = 0.065
    burst_correlation = 0.27
  }
}
