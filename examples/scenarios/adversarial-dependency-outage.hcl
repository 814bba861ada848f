# Adversarial: a dependency outage that cascades. At 15:00, on the afternoon
# peak, payment/ledger slows 20x within a minute for 10 minutes: ledger's
# p99 alone exceeds payment's SLO, checkout (which calls ledger and
# fraud/scoring) breaches through its callee, and a utilisation-driven
# autoscaler sees ledger saturated and requests replicas by the thousand that
# cannot help. Fraud scoring slows 3x over the same window, as a shared
# datastore would.
scenario "adversarial-dependency-outage" {
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
    app                 = "payment/ledger"
    at                  = "15h"
    service_time_factor = 20
    ramp                = "1m"
    hold                = "10m"
  }
  event "slow-dependency" {
    app                 = "fraud/scoring"
    at                  = "15h"
    service_time_factor = 3
    ramp                = "1m"
    hold                = "10m"
  }
}
