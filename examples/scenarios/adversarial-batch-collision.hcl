# Adversarial: a settlement batch window colliding with peak checkout. The
# nightly settlement slipped into the afternoon: from 15:30 data (P2) runs at
# 6x for two hours and merchant (P1) reconciliation doubles for 45 minutes,
# over the World Cup afternoon peak, and at 16:00 a checkout promotion adds
# 1.5x to payment (P0) for 20 minutes. Batch pods are big (2 cores each) and
# patient; checkout is neither.
scenario "adversarial-batch-collision" {
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
