# Evaluation, seed scale (six hours of a tournament day, extending diurnal.hcl). A P0 double spike: payment 2.2x for 15 minutes, then again 45 minutes later.
scenario "seed-double-p0-spike" {
  extends  = "diurnal.hcl"
  start    = "1998-06-15T10:00:00Z"
  duration = "6h"

  event "flash-sale" {
    domain     = "payment"
    at         = "2h0m"
    multiplier = 2.2
    ramp       = "1m"
    hold       = "15m"
  }

  event "flash-sale" {
    domain     = "payment"
    at         = "2h45m"
    multiplier = 2.2
    ramp       = "1m"
    hold       = "15m"
  }
}
