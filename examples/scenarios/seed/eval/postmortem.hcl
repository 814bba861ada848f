# Evaluation, seed scale (six hours of a tournament day, extending diurnal.hcl). The postmortem: a merchant flash sale starts 20 minutes before the plan, doubling payment
# authorisation in under a minute; every checkout service (150) and its fraud scoring scale at
# once and the node provisioner stalls. The sale was on the operator's calendar for 20 minutes later
# (announced; configuration.md#calendar): planned ahead, but not from when it came.
scenario "seed-postmortem" {
  extends  = "diurnal.hcl"
  start    = "1998-06-25T11:00:00Z"
  duration = "6h"

  event "flash-sale" {
    domain     = "payment"
    at         = "4h45m"  # where the window's demand first stands at 3/4 of its peak (same rule in both sets)
    multiplier = 2.0
    ramp       = "45s"
    hold       = "40m"
    announced  = "5h5m"
  }

  event "flash-sale" {
    domain     = "merchant"
    at         = "4h45m"
    multiplier = 1.5
    ramp       = "1m"
    hold       = "40m"
    announced  = "5h5m"
  }
}
