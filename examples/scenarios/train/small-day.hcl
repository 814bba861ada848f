# Training, small world (examples/small.hcl): one whole day of the training
# days at the load of the evaluation days, for measuring a change where
# autoscaling matters. small-base replays all of days 1-40 at the whole
# trace's scale, so that most of its minutes sit at the apps' floors (its
# replicas are about 15% busy under hpa, the held-out days' about 38%); it
# is for the learned policies' random episodes, which scale it 1-10x.
#
# A pre-tournament day (4 June 1998, day 36) drives payment and data with its
# own peak mapped to peak_rps (peak_rps_of = "window"): 95% of the held-out
# scenarios' 9,000 and 400 rps, as the held-out match day peaks at 0.95 of the
# trace's maximum. The even-ranked Azure Functions drive merchant and
# platform, as in small-base. Nothing of days 41-60 or of the odd-ranked
# functions is replayed.
scenario "small-train-day" {
  extends  = "small-base.hcl" # merchant and platform: the even-ranked Azure Functions
  start    = "1998-06-04T00:00:00Z"
  duration = "24h"
  seed     = 11

  traffic "payment" {
    trace       = "../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format      = "timeseries"
    peak_rps    = 8500
    peak_rps_of = "window"
  }
  traffic "data" {
    trace       = "../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format      = "timeseries"
    peak_rps    = 380
    peak_rps_of = "window"
  }
}
