# Training, small world: small-day (a training day at the evaluation days'
# load) with the spikes of small-flash-batch's kind at other hours: a payment
# flash sale in the evening, then a data and merchant batch window over it.
scenario "small-train-day-spikes" {
  extends = "small-day.hcl"
  seed    = 12

  event "flash-sale" {
    domain     = "payment"
    at         = "19h"
    multiplier = 2.5
    ramp       = "2m"
    hold       = "20m"
  }
  event "batch-window" {
    domain     = "data"
    at         = "19h10m"
    multiplier = 4
    ramp       = "5m"
    hold       = "1h30m"
  }
  event "batch-window" {
    domain     = "merchant"
    at         = "9h"
    multiplier = 2
    ramp       = "5m"
    hold       = "1h"
  }
}
