# Training: the small-train window under recurring adversarial events:
# fraud gets its own World Cup traffic (scaled as small-base.hcl explains)
# and a flash sale together with
# payment's (every 6 h), fraud/scoring slows down (every 5 h), and the
# lowest-priority domain floods (every 7 h).
scenario "small-train-adversarial" {
  extends = "small-base.hcl"

  traffic "fraud" {
    trace    = "../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format   = "timeseries"
    peak_rps = 11000
  }

  event "flash-sale" {
    domain     = "payment"
    at         = "3h"
    multiplier = 2.5
    ramp       = "2m"
    hold       = "15m"
    every      = "6h"
  }
  event "flash-sale" {
    domain     = "fraud"
    at         = "3h"
    multiplier = 3
    ramp       = "2m"
    hold       = "15m"
    every      = "6h"
  }
  event "slow-dependency" {
    app                 = "fraud/scoring"
    at                  = "1h"
    service_time_factor = 3
    ramp                = "1m"
    hold                = "15m"
    every               = "5h"
  }
  event "flash-sale" {
    domain     = "platform"
    at         = "2h"
    multiplier = 4
    ramp       = "5m"
    hold       = "30m"
    every      = "7h"
  }
}
