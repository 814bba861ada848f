# The diurnal day with the nightly settlement batch: the data domain runs at
# 6x from 01:00 for two hours, and merchant reconciliation doubles at 02:00.
scenario "settlement-batch" {
  start    = "1998-06-24T00:00:00Z"
  duration = "24h"
  seed     = 1
  noise    = 0.05

  traffic "payment" {
    trace    = "../../../shared/traces/worldcup98/worldcup98_days01-60_per_minute.csv"
    format   = "timeseries"
    peak_rps = 120000
  }
  traffic "data" {
    trace    = "../../../shared/traces/worldcup98/worldcup98_days01-60_per_minute.csv"
    format   = "timeseries"
    peak_rps = 5000
  }
  traffic "merchant" {
    trace           = "../../../shared/traces/azure-functions-2019/sampleA_1350fn_invocations.csv"
    format          = "azure-functions"
    peak_rps        = 40000
    function_offset = 0
    function_stride = 2
  }
  traffic "platform" {
    trace           = "../../../shared/traces/azure-functions-2019/sampleA_1350fn_invocations.csv"
    format          = "azure-functions"
    peak_rps        = 3000
    function_offset = 1
    function_stride = 2
  }

  event "batch-window" {
    domain     = "data"
    at         = "1h"
    multiplier = 6.0
    ramp       = "5m"
    hold       = "2h"
    every      = "24h"
  }
  event "batch-window" {
    domain     = "merchant"
    at         = "2h"
    multiplier = 2.0
    ramp       = "5m"
    hold       = "30m"
  }
}
