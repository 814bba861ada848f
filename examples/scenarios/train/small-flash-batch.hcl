# Training: the small-train window with recurring flash sales on payment
# (every 6 h) and batch windows on data (every 8 h) and merchant (every
# 11 h), so that most few-hour episodes meet one.
scenario "small-train-flash-batch" {
  extends = "small-base.hcl"

  event "flash-sale" {
    domain     = "payment"
    at         = "2h"
    multiplier = 2.5
    ramp       = "2m"
    hold       = "20m"
    every      = "6h"
  }
  event "batch-window" {
    domain     = "data"
    at         = "1h"
    multiplier = 4.0
    ramp       = "5m"
    hold       = "1h"
    every      = "8h"
  }
  event "batch-window" {
    domain     = "merchant"
    at         = "4h"
    multiplier = 2.0
    ramp       = "5m"
    hold       = "30m"
    every      = "11h"
  }
}
