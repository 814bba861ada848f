# Training, seed scale (six hours of a tournament day, extending diurnal.hcl): the same kind of
# disturbance as the evaluation's, on another day, at another time. A P0 double spike: payment 2.2x for 15 minutes, then again 45 minutes later.
scenario "seed-train-double-p0-spike" {
  extends  = "diurnal.hcl"
  start    = "1998-06-14T08:00:00Z"
  duration = "6h"

  event "flash-sale" {
    domain     = "payment"
    at         = "2h30m"
    multiplier = 2.2
    ramp       = "1m"
    hold       = "15m"
  }

  event "flash-sale" {
    domain     = "payment"
    at         = "3h15m"
    multiplier = 2.2
    ramp       = "1m"
    hold       = "15m"
  }
}
