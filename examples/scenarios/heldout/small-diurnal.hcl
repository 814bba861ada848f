# Held-out evaluation (issue 5's train/eval split) for the small example
# (examples/small.hcl): a World Cup 98 match day from the held-out days
# 41-60 (1998-06-25, day 57; day 1 is 1998-04-30) drives payment and data,
# and the odd-ranked Azure Functions (ranks 1, 3, 5, ... by busiest; the
# training scenarios in ../train use the even ranks) drive merchant (ranks
# 1, 5, 9, ...) and platform (ranks 3, 7, 11, ...). Nothing here was seen in
# training. The other held-out scenarios extend this day.
scenario "heldout-diurnal" {
  start    = "1998-06-25T00:00:00Z"
  duration = "24h"
  seed     = 101
  noise    = 0.05

  traffic "payment" {
    trace    = "../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format   = "timeseries"
    peak_rps = 9000
  }
  traffic "data" {
    trace    = "../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format   = "timeseries"
    peak_rps = 400
  }
  traffic "merchant" {
    trace           = "../../../traces/azure-functions-2019/sampleA_1350fn_invocations.csv.gz"
    format          = "azure-functions"
    peak_rps        = 3000
    function_offset = 1
    function_stride = 4
  }
  traffic "platform" {
    trace           = "../../../traces/azure-functions-2019/sampleA_1350fn_invocations.csv.gz"
    format          = "azure-functions"
    peak_rps        = 300
    function_offset = 3
    function_stride = 4
  }
}
