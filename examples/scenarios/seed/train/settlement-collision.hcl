# Training, seed scale (six hours of a tournament day, extending diurnal.hcl): the same kind of
# disturbance as the evaluation's, on another day, at another time. A settlement batch window (data 5x for two hours) collides with a payment peak (1.5x) 30
# minutes into it. The batch window is on the operator's calendar (announced;
# configuration.md#calendar); the payment peak is not.
scenario "seed-train-settlement-collision" {
  extends  = "diurnal.hcl"
  start    = "1998-06-18T11:00:00Z"
  duration = "6h"

  event "batch-window" {
    domain     = "data"
    at         = "2h0m"
    multiplier = 5
    ramp       = "5m"
    hold       = "2h"
    announced  = "2h0m"
  }

  event "flash-sale" {
    domain     = "payment"
    at         = "2h30m"
    multiplier = 1.5
    ramp       = "2m"
    hold       = "30m"
  }
}
