# The diurnal day with a slow dependency: fraud scoring's service time quadruples
# at 15:00, the busiest hour, for 20 minutes; checkout, which calls it, feels the cascade.
scenario "slow-dependency" {
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

  event "slow-dependency" {
    app                 = "fraud/scoring"
    at                  = "15h"
    service_time_factor = 4
    ramp                = "1m"
    hold                = "20m"
  }
}
