# Adversarial: simultaneous spikes on both P0 domains. Fraud gets traffic of
# its own here (merchant-facing scoring calls, shaped like the World Cup day,
# on top of checkout's calls), and at 15:00 payment surges 2.5x and fraud's
# own traffic 3x within two minutes, for 15 minutes: checkout's calls and
# fraud's own flash land on fraud/scoring at once, and both P0 domains want
# the same fresh nodes.
scenario "adversarial-double-p0-spike" {
  extends = "diurnal.hcl"

  traffic "fraud" {
    trace    = "../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format   = "timeseries"
    peak_rps = 30000
  }

  event "flash-sale" {
    domain     = "payment"
    at         = "15h"
    multiplier = 2.5
    ramp       = "2m"
    hold       = "15m"
  }
  event "flash-sale" {
    domain     = "fraud"
    at         = "15h"
    multiplier = 3
    ramp       = "2m"
    hold       = "15m"
  }
}
