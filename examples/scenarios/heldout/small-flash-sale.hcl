# Held-out: the held-out day with a flash sale: payment demand triples at
# 14:00 for 20 minutes after a 2-minute ramp, on top of the evening peak.
scenario "heldout-flash-sale" {
  extends = "small-diurnal.hcl"

  event "flash-sale" {
    domain     = "payment"
    at         = "14h"
    multiplier = 3.0
    ramp       = "2m"
    hold       = "20m"
  }
}
