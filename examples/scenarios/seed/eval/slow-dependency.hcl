# Evaluation, seed scale (six hours of a day of WorldCup98 days 41-60). A slow dependency: fraud scoring serves 2.5x slower for 40 minutes; every payment app that
# calls it feels it.
scenario "seed-slow-dependency" {
  extends  = "diurnal.hcl"
  start    = "1998-06-22T12:00:00Z"
  duration = "6h"

  event "slow-dependency" {
    app        = "fraud/scoring"
    at         = "2h0m"
    service_time_factor = 2.5
    ramp       = "2m"
    hold       = "40m"
  }
}
