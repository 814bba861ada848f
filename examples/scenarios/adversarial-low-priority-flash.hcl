# Adversarial: a flash event on the lowest-priority domain while a P0 domain
# is near its threshold. At 15:50, on the World Cup afternoon peak, platform
# (P3) demand jumps 12x within a minute and holds for 30 minutes: its pods
# take the free cores and queue node requests at the provisioner. Two minutes
# later payment (P0), already at its busiest, surges 1.4x for 20 minutes and
# must wait behind platform's nodes: whoever schedules first wins unless
# capacity is budgeted by priority.
scenario "adversarial-low-priority-flash" {
  extends = "diurnal.hcl"

  event "flash-sale" {
    domain     = "platform"
    at         = "15h50m"
    multiplier = 12
    ramp       = "1m"
    hold       = "30m"
  }
  event "flash-sale" {
    domain     = "payment"
    at         = "15h52m"
    multiplier = 1.4
    ramp       = "2m"
    hold       = "20m"
  }
}
