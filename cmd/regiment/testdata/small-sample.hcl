# The small example driven by the trace samples shipped in sim/trace/testdata,
# so that tests need nothing outside the repository.
scenario "small-sample" {
  start    = "1998-05-17T05:10:00Z"
  duration = "4h"
  seed     = 3
  traffic "payment" {
    trace    = "../../../internal/offline/sim/trace/testdata/worldcup98_sample.csv"
    format   = "timeseries"
    peak_rps = 9000
  }
  traffic "merchant" {
    trace           = "../../../internal/offline/sim/trace/testdata/azure_functions_sample.csv"
    format          = "azure-functions"
    peak_rps        = 3000
    function_stride = 2
  }
  event "flash-sale" {
    domain     = "payment"
    at         = "1h"
    multiplier = 2
    ramp       = "1m"
    hold       = "10m"
  }
}
