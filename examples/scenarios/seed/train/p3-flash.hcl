# Training, seed scale (six hours of a quiet day, extending quiet.hcl): the same kind of
# disturbance as the evaluation's, on another day, at another time. A P3 flash that must not starve P0: platform 4x for 30 minutes, and payment 1.5x ten
# minutes into it.
scenario "seed-train-p3-flash" {
  extends  = "quiet.hcl"
  start    = "1998-05-28T14:00:00Z"
  duration = "6h"

  event "flash-sale" {
    domain     = "platform"
    at         = "1h40m"
    multiplier = 4
    ramp       = "1m"
    hold       = "30m"
  }

  event "flash-sale" {
    domain     = "payment"
    at         = "1h50m"
    multiplier = 1.5
    ramp       = "1m"
    hold       = "20m"
  }
}
