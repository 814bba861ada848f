package pool

import "math"

// Node is a node of the contested pool as SizeOf sees it.
type Node struct {
	Name             string
	AllocatableCores float64
	// Ready says the node's Ready condition is true; a node not ready yet
	// is coming (a node the autoscaler just started), and counts as such.
	Ready bool
	// Unschedulable says the node is cordoned (draining): it counts for
	// nothing.
	Unschedulable bool
}

// Pod is a pod bound to a node, as SizeOf sees it.
type Pod struct {
	Node         string
	RequestCores float64 // sum of its containers' CPU requests
	// DaemonSet says a DaemonSet owns the pod; Managed that it is a pod of
	// an app Regiment sizes. Either a DaemonSet's or not Regiment's, its
	// request is taken from the pool. Balloon says it is one of Regiment's
	// balloon pods (Balloons): neither taken nor Regiment's app.
	DaemonSet, Managed, Balloon bool
}

// Size is the contested pool's size now, in cores, and its parts.
type Size struct {
	// Cores is what the Commander shares out: ReadyCores + PendingCores -
	// ReservedCores, at most MaxCores - ReservedCores when MaxCores > 0,
	// and never below 0.
	Cores float64
	// ReadyCores is the allocatable cores of ready, schedulable nodes;
	// PendingCores those of schedulable nodes not ready yet.
	ReadyCores, PendingCores float64
	// ReservedCores is the CPU requests of DaemonSet pods and of pods
	// Regiment does not manage, on the nodes counted.
	ReservedCores float64
	// ManagedCores is the CPU requests of the pods of Regiment's apps on
	// the nodes counted: the part of the pool in use, which balloons need
	// not hold.
	ManagedCores float64
	// Nodes counts ready, schedulable nodes; PendingNodes schedulable
	// nodes not ready yet.
	Nodes, PendingNodes int
	// MaxCores is the most node cores the pool may grow to (a Karpenter
	// NodePool's limit, or pool_max_cores); 0: no cap known. Capped says
	// it cut Cores.
	MaxCores float64
	Capped   bool
}

// SizeOf is the contested pool's size: the allocatable cores of its
// ready and coming (not yet ready) schedulable nodes, less the CPU that
// DaemonSet pods and pods Regiment does not manage request on them,
// capped by maxCores (its most node cores; <= 0: none) less that same
// reserved CPU. Regiment's balloon pods count for neither. Cordoned nodes and their pods count for nothing; pods on
// nodes not in nodes are ignored. Pure.
func SizeOf(nodes []Node, pods []Pod, maxCores float64) Size {
	var c Size
	counted := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if n.Unschedulable || !(n.AllocatableCores > 0) {
			continue
		}
		counted[n.Name] = true
		if n.Ready {
			c.ReadyCores += n.AllocatableCores
			c.Nodes++
		} else {
			c.PendingCores += n.AllocatableCores
			c.PendingNodes++
		}
	}
	for _, p := range pods {
		if !counted[p.Node] || p.Balloon || !(p.RequestCores > 0) {
			continue
		}
		if p.DaemonSet || !p.Managed {
			c.ReservedCores += p.RequestCores
		} else {
			c.ManagedCores += p.RequestCores
		}
	}
	c.Cores = c.ReadyCores + c.PendingCores - c.ReservedCores
	if maxCores > 0 && !math.IsInf(maxCores, 0) {
		c.MaxCores = maxCores
		if limit := maxCores - c.ReservedCores; limit < c.Cores {
			c.Cores, c.Capped = limit, true
		}
	}
	c.Cores = max(c.Cores, 0)
	return c
}
