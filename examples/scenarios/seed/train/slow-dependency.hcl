# Training, seed scale (six hours of a quiet day, extending quiet.hcl): the same kind of
# disturbance as the evaluation's, on another day, at another time. A slow dependency: fraud scoring serves 2.5x slower for 40 minutes; every payment app that
# calls it feels it.
scenario "seed-train-slow-dependency" {
  extends  = "quiet.hcl"
  start    = "1998-05-20T13:00:00Z"
  duration = "6h"

  event "slow-dependency" {
    app        = "fraud/scoring"
    at         = "2h0m"
    service_time_factor = 2.5
    ramp       = "2m"
    hold       = "40m"
  }
}
