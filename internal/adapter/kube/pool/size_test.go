package pool

import "testing"

func TestSizeOf(t *testing.T) {
	ready := func(name string, cores float64) Node {
		return Node{Name: name, AllocatableCores: cores, Ready: true}
	}
	tests := []struct {
		name  string
		nodes []Node
		pods  []Pod
		max   float64
		want  Size
	}{
		{"no nodes, no capacity", nil, nil, 0, Size{}},
		{"ready nodes' allocatable cores add up",
			[]Node{ready("a", 16), ready("b", 15.5)}, nil, 0,
			Size{Cores: 31.5, ReadyCores: 31.5, Nodes: 2}},
		{"a node not ready yet is coming and counts",
			[]Node{ready("a", 16), {Name: "b", AllocatableCores: 16}}, nil, 0,
			Size{Cores: 32, ReadyCores: 16, PendingCores: 16, Nodes: 1, PendingNodes: 1}},
		{"a cordoned node and its pods count for nothing",
			[]Node{ready("a", 16), {Name: "b", AllocatableCores: 16, Ready: true, Unschedulable: true}},
			[]Pod{{Node: "b", RequestCores: 4}}, 0,
			Size{Cores: 16, ReadyCores: 16, Nodes: 1}},
		{"DaemonSet pods and pods not Regiment's are reserved; Regiment's are not",
			[]Node{ready("a", 16), ready("b", 16)},
			[]Pod{{Node: "a", RequestCores: 0.5, DaemonSet: true, Managed: true}, {Node: "b", RequestCores: 0.5, DaemonSet: true},
				{Node: "a", RequestCores: 2}, {Node: "b", RequestCores: 3, Managed: true}}, 0,
			Size{Cores: 29, ReadyCores: 32, ReservedCores: 3, ManagedCores: 3, Nodes: 2}},
		{"balloon pods are neither reserved nor Regiment's apps",
			[]Node{ready("a", 16)},
			[]Pod{{Node: "a", RequestCores: 4, Balloon: true}, {Node: "a", RequestCores: 2, Balloon: true, Managed: true},
				{Node: "a", RequestCores: 1, Managed: true}}, 0,
			Size{Cores: 16, ReadyCores: 16, ManagedCores: 1, Nodes: 1}},
		{"pods on nodes outside the pool are ignored",
			[]Node{ready("a", 16)}, []Pod{{Node: "elsewhere", RequestCores: 8}}, 0,
			Size{Cores: 16, ReadyCores: 16, Nodes: 1}},
		{"the pool's max caps it, less what is reserved",
			[]Node{ready("a", 32), ready("b", 32)}, []Pod{{Node: "a", RequestCores: 2, DaemonSet: true}}, 40,
			Size{Cores: 38, ReadyCores: 64, ReservedCores: 2, Nodes: 2, MaxCores: 40, Capped: true}},
		{"a max above the nodes cuts nothing",
			[]Node{ready("a", 32)}, nil, 100,
			Size{Cores: 32, ReadyCores: 32, Nodes: 1, MaxCores: 100}},
		{"reserved beyond the nodes is no capacity, not negative",
			[]Node{ready("a", 1)}, []Pod{{Node: "a", RequestCores: 3}}, 0,
			Size{Cores: 0, ReadyCores: 1, ReservedCores: 3, Nodes: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SizeOf(tt.nodes, tt.pods, tt.max); got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
