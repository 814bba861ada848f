# A day on the small example (examples/small.hcl): the 1998 World Cup site's traffic on a match day drives the
# payment and data domains; a day of Azure Functions drives merchant and
# platform (different functions for each). Fraud sees only payment's calls.
scenario "small-day" {
  start    = "1998-06-24T00:00:00Z"
  duration = "24h"
  seed     = 1
  noise    = 0.05

  traffic "payment" {
    trace    = "../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format   = "timeseries"
    peak_rps = 9000
  }
  traffic "data" {
    trace    = "../../traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz"
    format   = "timeseries"
    peak_rps = 400
  }
  traffic "merchant" {
    trace           = "../../traces/azure-functions-2019/sampleA_1350fn_invocations.csv.gz"
    format          = "azure-functions"
    peak_rps        = 3000
    function_offset = 0
    function_stride = 2
  }
  traffic "platform" {
    trace           = "../../traces/azure-functions-2019/sampleA_1350fn_invocations.csv.gz"
    format          = "azure-functions"
    peak_rps        = 300
    function_offset = 1
    function_stride = 2
  }

  event "flash-sale" {
    domain     = "payment"
    at         = "14h"
    multiplier = 2.5
    ramp       = "2m"
    hold       = "15m"
  }
}
