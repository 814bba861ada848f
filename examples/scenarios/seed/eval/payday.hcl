# Evaluation, seed scale (six hours of a quiet day, extending quiet.hcl). Payday: payment and merchant run 1.5x and 1.3x for three hours. Paydays are on the
# operator's calendar (announced; configuration.md#calendar).
scenario "seed-payday" {
  extends  = "quiet.hcl"
  start    = "1998-05-22T08:00:00Z"
  duration = "6h"

  event "flash-sale" {
    domain     = "payment"
    at         = "1h0m"
    multiplier = 1.5
    ramp       = "20m"
    hold       = "3h"
    announced  = "1h0m"
  }

  event "flash-sale" {
    domain     = "merchant"
    at         = "1h0m"
    multiplier = 1.3
    ramp       = "20m"
    hold       = "3h"
    announced  = "1h0m"
  }
}
