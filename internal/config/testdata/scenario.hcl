scenario "worldcup-group-stage" {
  start    = "1998-06-10T00:00:00Z"
  duration = "72h"
  seed     = 7
  noise    = 0.05

  traffic "payment" {
    trace    = "traces/timeseries.csv"
    format   = "timeseries"
    peak_rps = 20000
  }

  traffic "fraud" {
    trace           = "traces/functions.csv"
    format          = "azure-functions"
    peak_rps        = 8000
    function_offset = 1
    function_stride = 2
  }

  event "flash-sale" {
    domain     = "payment"
    at         = "14h"
    multiplier = 2.0
    ramp       = "1m"
    hold       = "20m"
  }

  event "batch-window" {
    domain     = "fraud"
    at         = "1h"
    multiplier = 3
    hold       = "2h"
    every      = "24h"
  }

  event "slow-dependency" {
    app                 = "fraud/scoring"
    at                  = "30h"
    service_time_factor = 3
    hold                = "10m"
  }
}
