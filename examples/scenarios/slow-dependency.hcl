# The diurnal day with a slow dependency: fraud scoring's service time quadruples
# at 15:00, the busiest hour, for 20 minutes; checkout, which calls it, feels the cascade.
scenario "slow-dependency" {
  extends = "diurnal.hcl"

  event "slow-dependency" {
    app                 = "fraud/scoring"
    at                  = "15h"
    service_time_factor = 4
    ramp                = "1m"
    hold                = "20m"
  }
}
