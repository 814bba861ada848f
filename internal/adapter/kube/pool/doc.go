// Package pool is the Commander's contested pool on Kubernetes: how big it
// is, and the balloon pods that hold the capacity plan on it.
//
// Size (SizeOf, Watcher): the contested pool's cores are its ready and
// coming schedulable nodes' allocatable cores less the CPU requests of
// DaemonSet pods and pods Regiment does not manage on them (ManagedPods, and
// the pods of workloads a domain's discover block selects), capped by the
// pool's max (pool_max_cores, Karpenter NodePool cpu limits read with the
// dynamic client). SizeOf is the pure computation; Watcher the Node and Pod
// informers around it, a commander.Capacity (CapacityCores: the most the
// pool may grow to less what others request on it).
//
// Balloons (Balloons, BalloonReplicas): a Deployment of pause pods of a
// negative priority class that request the planned cores Regiment's apps do
// not use yet, so the node autoscaler provisions their nodes early and any
// real pod preempts them; a commander.Pool. It is applied whole every tick
// (server-side apply, field manager "regiment"), owned by the Commander's
// own controller (ControllerOf) when it runs in the cluster, tolerating the
// pool's taints (Tolerations) on its nodes (SelectorMap).
//
// The Commander's leader election is package internal/adapter/kube/leader
// (leader.Elect), the Soldier lock's too.
//
// Concurrency: Watcher (once Run) and Balloons are safe for concurrent use.
//
// Package pool imports internal/adapter/kube (Discoverer, DropManagedFields,
// ApplyOptions, PodRequestCores), internal/core/domains and client-go; kube
// never imports it. Its tests run against a real etcd and kube-apiserver
// (with kube-scheduler and kwok for the balloons) started by
// internal/adapter/kube/testenv.
package pool
