# Adversarial: a dependency outage that cascades. At 15:00, on the afternoon
# peak, payment/ledger slows 20x within a minute for 10 minutes: ledger's
# p99 alone exceeds payment's SLO, checkout (which calls ledger and
# fraud/scoring) breaches through its callee, and a utilisation-driven
# autoscaler sees ledger saturated and requests replicas by the thousand that
# cannot help. Fraud scoring slows 3x over the same window, as a shared
# datastore would.
scenario "adversarial-dependency-outage" {
  extends = "diurnal.hcl"

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
