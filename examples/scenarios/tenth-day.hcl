# A day on a tenth of the seed-scale world (examples/tenth.hcl), the scenario
# `make run` replays: the 1998 World Cup site's traffic on a match day (24 June,
# one of the evaluation days; see examples/scenarios/seed) drives every domain,
# fraud through payment's calls, with a payment flash sale at 14:00 that
# doubles authorisation in under a minute. Demand is the seed world's divided
# by ten, as its apps are.
scenario "tenth-day" {
  start    = "1998-06-24T00:00:00Z"
  duration = "24h"
  seed     = 1
  noise    = 0.05

  traffic "payment" {
    trace       = "../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format      = "timeseries"
    peak_rps    = 173000
    peak_rps_of = "window"
    app_skew    = 1.6
  }
  traffic "data" {
    trace       = "../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format      = "timeseries"
    peak_rps    = 21200
    peak_rps_of = "window"
    app_skew    = 1.6
  }
  traffic "merchant" {
    trace       = "../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format      = "timeseries"
    peak_rps    = 145600
    peak_rps_of = "window"
    app_skew    = 1.6
  }
  traffic "platform" {
    trace       = "../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format      = "timeseries"
    peak_rps    = 33400
    peak_rps_of = "window"
    app_skew    = 1.6
  }

  event "flash-sale" {
    domain     = "payment"
    at         = "14h"
    multiplier = 2.0
    ramp       = "45s"
    hold       = "20m"
  }
}
