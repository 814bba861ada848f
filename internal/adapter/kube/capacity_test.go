package kube

import "testing"

func TestCapacity(t *testing.T) {
	ready := func(name string, cores float64) PoolNode {
		return PoolNode{Name: name, AllocatableCores: cores, Ready: true}
	}
	tests := []struct {
		name  string
		nodes []PoolNode
		pods  []PoolPod
		max   float64
		want  PoolCapacity
	}{
		{"no nodes, no capacity", nil, nil, 0, PoolCapacity{}},
		{"ready nodes' allocatable cores add up",
			[]PoolNode{ready("a", 16), ready("b", 15.5)}, nil, 0,
			PoolCapacity{Cores: 31.5, ReadyCores: 31.5, Nodes: 2}},
		{"a node not ready yet is coming and counts",
			[]PoolNode{ready("a", 16), {Name: "b", AllocatableCores: 16}}, nil, 0,
			PoolCapacity{Cores: 32, ReadyCores: 16, PendingCores: 16, Nodes: 1, PendingNodes: 1}},
		{"a cordoned node and its pods count for nothing",
			[]PoolNode{ready("a", 16), {Name: "b", AllocatableCores: 16, Ready: true, Unschedulable: true}},
			[]PoolPod{{Node: "b", RequestCores: 4}}, 0,
			PoolCapacity{Cores: 16, ReadyCores: 16, Nodes: 1}},
		{"DaemonSet pods and pods not Regiment's are reserved; Regiment's are not",
			[]PoolNode{ready("a", 16), ready("b", 16)},
			[]PoolPod{{Node: "a", RequestCores: 0.5, DaemonSet: true, Managed: true}, {Node: "b", RequestCores: 0.5, DaemonSet: true},
				{Node: "a", RequestCores: 2}, {Node: "b", RequestCores: 3, Managed: true}}, 0,
			PoolCapacity{Cores: 29, ReadyCores: 32, ReservedCores: 3, ManagedCores: 3, Nodes: 2}},
		{"balloon pods are neither reserved nor Regiment's apps",
			[]PoolNode{ready("a", 16)},
			[]PoolPod{{Node: "a", RequestCores: 4, Balloon: true}, {Node: "a", RequestCores: 2, Balloon: true, Managed: true},
				{Node: "a", RequestCores: 1, Managed: true}}, 0,
			PoolCapacity{Cores: 16, ReadyCores: 16, ManagedCores: 1, Nodes: 1}},
		{"pods on nodes outside the pool are ignored",
			[]PoolNode{ready("a", 16)}, []PoolPod{{Node: "elsewhere", RequestCores: 8}}, 0,
			PoolCapacity{Cores: 16, ReadyCores: 16, Nodes: 1}},
		{"the pool's max caps it, less what is reserved",
			[]PoolNode{ready("a", 32), ready("b", 32)}, []PoolPod{{Node: "a", RequestCores: 2, DaemonSet: true}}, 40,
			PoolCapacity{Cores: 38, ReadyCores: 64, ReservedCores: 2, Nodes: 2, MaxCores: 40, Capped: true}},
		{"a max above the nodes cuts nothing",
			[]PoolNode{ready("a", 32)}, nil, 100,
			PoolCapacity{Cores: 32, ReadyCores: 32, Nodes: 1, MaxCores: 100}},
		{"reserved beyond the nodes is no capacity, not negative",
			[]PoolNode{ready("a", 1)}, []PoolPod{{Node: "a", RequestCores: 3}}, 0,
			PoolCapacity{Cores: 0, ReadyCores: 1, ReservedCores: 3, Nodes: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Capacity(tt.nodes, tt.pods, tt.max); got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
