# Training traffic for the small example (examples/small.hcl), issue 5's
# train/eval split: the World Cup 98 site's days 1-40 (1998-04-30 21:30 to
# 1998-06-09 00:00) drive payment and data, and the even-ranked Azure
# Functions (ranks 0, 2, 4, ... by busiest) drive merchant (ranks 0, 4, 8,
# ...) and platform (ranks 2, 6, 10, ...). Days 41-60 and the odd-ranked
# functions are held out for evaluation. Training episodes are random
# windows of a few hours inside this scenario.
#
# peak_rps maps the trace's maximum, which falls in the held-out days: the
# tournament starts on day 42 (1998-06-10), days 1-40 peak at a quarter of
# the maximum and their median minute is 1/11 of days 41-60's. payment and
# data get 4.4x the evaluation scenarios' peak_rps so that the training
# window's load spans the range the evaluation meets (payment: median
# ~300 rps, busiest minute ~10k rps).
scenario "small-train" {
  start    = "1998-04-30T21:30:00Z"
  duration = "914h30m"
  seed     = 1
  noise    = 0.05

  traffic "payment" {
    trace    = "../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format   = "timeseries"
    peak_rps = 40000
  }
  traffic "data" {
    trace    = "../../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format   = "timeseries"
    peak_rps = 1800
  }
  traffic "merchant" {
    trace           = "../../../traces/azure-functions-2019/sampleA_1350fn_invocations.csv.gz"
    format          = "azure-functions"
    peak_rps        = 3000
    function_offset = 0
    function_stride = 4
  }
  traffic "platform" {
    trace           = "../../../traces/azure-functions-2019/sampleA_1350fn_invocations.csv.gz"
    format          = "azure-functions"
    peak_rps        = 300
    function_offset = 2
    function_stride = 4
  }
}
