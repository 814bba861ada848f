# The diurnal day with the nightly settlement batch: the data domain runs at
# 6x from 01:00 for two hours, and merchant reconciliation doubles at 02:00.
scenario "settlement-batch" {
  extends = "diurnal.hcl"

  event "batch-window" {
    domain     = "data"
    at         = "1h"
    multiplier = 6.0
    ramp       = "5m"
    hold       = "2h"
    every      = "24h"
  }
  event "batch-window" {
    domain     = "merchant"
    at         = "2h"
    multiplier = 2.0
    ramp       = "5m"
    hold       = "30m"
  }
}
