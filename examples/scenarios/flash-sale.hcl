# The diurnal day with a flash sale: payment demand triples at 14:00 for 20
# minutes after a 2-minute ramp, on top of the World Cup evening peak.
scenario "flash-sale" {
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

  event "flash-sale" {
    domain     = "payment"
    at         = "14h"
    multiplier = 3.0
    ramp       = "2m"
    hold       = "20m"
  }
}
