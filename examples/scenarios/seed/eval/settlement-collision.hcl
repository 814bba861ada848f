# Evaluation, seed scale (six hours of a tournament day, extending diurnal.hcl). A settlement batch window (data 5x for two hours) collides with a payment peak (1.5x) 30
# minutes into it. The batch window is on the operator's calendar (announced;
# configuration.md#calendar); the payment peak is not.
scenario "seed-settlement-collision" {
  extends  = "diurnal.hcl"
  start    = "1998-06-23T13:00:00Z"
  duration = "6h"

  event "batch-window" {
    domain     = "data"
    at         = "2h30m"
    multiplier = 5
    ramp       = "5m"
    hold       = "2h"
    announced  = "2h30m"
  }

  event "flash-sale" {
    domain     = "payment"
    at         = "3h0m"
    multiplier = 1.5
    ramp       = "2m"
    hold       = "30m"
  }
}
