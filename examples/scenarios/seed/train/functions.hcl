# Training, seed scale: a day of per-function traffic (Azure Functions 2019, the even rows).
#
# The split (docs/seed-scale.md): training and evaluation each hold quiet
# days (WorldCup98 before the tournament), tournament days (from 10 June
# 1998) and a per-function day (Azure Functions 2019), on disjoint days and
# functions: training replays the trace's even rows, evaluation its odd rows
# (function_rows), so no function is in both.
#
# Merchant and platform are per-function: each app replays a function of
# its own, from the busiest down (merchant ranks 0-399, platform 400-549 of
# the even rows: disjoint), scaled so that the functions' summed maxima
# map to peak_rps. Most functions are small and sparse (many sit at their
# min_replicas); many are timer-triggered, with bursts on the clock's
# minutes and hours. Payment and data replay the same rows summed (a smooth
# day with the timers' bursts on the clock), split by app_skew without
# components of their own (app_own would shift the timers' bursts off the
# clock), so without burst_sigma either: the burst restores only what
# app_own averages out. Arrivals are Poisson. peak_rps puts merchant at about the
# seed-scale pods of the other days under hpa (docs/seed-scale.md), with
# the floors well under a third of hpa's cost. The first 15 minutes are a
# warm-up no metric counts.
scenario "seed-train-functions" {
  start         = "2019-07-15T00:00:00Z"
  duration      = "24h"
  seed          = 1
  arrival_noise = "poisson"
  warmup        = "15m"

  traffic "payment" {
    trace         = "../../../../traces/azure-functions-2019/sampleA_1350fn_invocations.csv.gz"
    format        = "azure-functions"
    function_rows = "even"
    functions     = "summed"
    peak_rps      = 2600000
    peak_rps_of   = "window"
    app_skew      = 1.6
  }
  traffic "data" {
    trace         = "../../../../traces/azure-functions-2019/sampleA_1350fn_invocations.csv.gz"
    format        = "azure-functions"
    function_rows = "even"
    functions     = "summed"
    peak_rps      = 320000
    peak_rps_of   = "window"
    app_skew      = 1.6
  }
  traffic "merchant" {
    trace           = "../../../../traces/azure-functions-2019/sampleA_1350fn_invocations.csv.gz"
    format          = "azure-functions"
    function_rows   = "even"
    function_offset = 0
    peak_rps        = 3600000
  }
  traffic "platform" {
    trace           = "../../../../traces/azure-functions-2019/sampleA_1350fn_invocations.csv.gz"
    format          = "azure-functions"
    function_rows   = "even"
    function_offset = 400
    peak_rps        = 830000
  }
}
