# Training, seed scale: a diurnal day before the tournament (27 May 1998). The World Cup site's
# traffic drives every domain (fraud through payment's calls), each domain's apps sharing it by
# their own log-normal weights.
#
# Training set: WorldCup98 days 1-40 (to 1998-06-09 21:30); no evaluation scenario replays any
# of it (examples/scenarios/seed/eval uses days 41-60).
# Demand is the seed-scale world's (examples/seedscale.hcl): each trace's
# peak over the replayed window maps to peak_rps (peak_rps_of = "window"), so
# that quiet and busy days carry the same peak load; a timeseries shape is
# split between a domain's apps by log-normal weights of sigma app_skew (1.6:
# the top 5% of apps carry about half the traffic). Fraud's demand is
# payment's calls, 20 s later (call_lag in the config).
scenario "seed-train-diurnal" {
  start    = "1998-05-27T00:00:00Z"
  duration = "24h"
  seed     = 1
  noise    = 0.05

  traffic "payment" {
    trace       = "../../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format      = "timeseries"
    peak_rps    = 1730000  # ~25,000 payment pods at the peak under hpa (~33% of the pool)
    peak_rps_of = "window"
    app_skew    = 1.6
  }
  traffic "data" {
    trace       = "../../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format      = "timeseries"
    peak_rps    = 212000   # ~7,500 pods (~10%)
    peak_rps_of = "window"
    app_skew    = 1.6
  }
  traffic "merchant" {
    trace       = "../../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format      = "timeseries"
    peak_rps    = 1456000  # ~22,000 pods (~30%)
    peak_rps_of = "window"
    app_skew    = 1.6
  }
  traffic "platform" {
    trace       = "../../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format      = "timeseries"
    peak_rps    = 334000   # ~8,000 pods (~11%)
    peak_rps_of = "window"
    app_skew    = 1.6
  }
}
