# Held-out adversarial: simultaneous spikes on both P0 domains on the
# held-out day. Fraud gets World Cup traffic of its own (merchant-facing
# scoring, on top of checkout's calls); at 15:00 payment surges 2.5x and
# fraud's own traffic 3x within two minutes, for 15 minutes, and both want
# the same fresh nodes.
scenario "heldout-double-p0-spike" {
  extends = "small-diurnal.hcl"

  traffic "fraud" {
    trace    = "../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format   = "timeseries"
    peak_rps = 2500
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
