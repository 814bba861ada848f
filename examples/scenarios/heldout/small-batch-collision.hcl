# Held-out adversarial: a settlement batch colliding with peak checkout on
# the held-out day. From 15:30 data (P2) runs at 6x for two hours and
# merchant (P1) reconciliation doubles for 45 minutes; at 16:00 a checkout
# promotion adds 1.5x to payment (P0) for 20 minutes.
scenario "heldout-batch-collision" {
  extends = "small-diurnal.hcl"

  event "batch-window" {
    domain     = "data"
    at         = "15h30m"
    multiplier = 6
    ramp       = "5m"
    hold       = "2h"
  }
  event "batch-window" {
    domain     = "merchant"
    at         = "15h30m"
    multiplier = 2
    ramp       = "5m"
    hold       = "45m"
  }
  event "flash-sale" {
    domain     = "payment"
    at         = "16h"
    multiplier = 1.5
    ramp       = "2m"
    hold       = "20m"
  }
}
