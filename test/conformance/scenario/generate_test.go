package scenario

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestGenerateIsDeterministic(t *testing.T) {
	for _, seed := range []uint64{1, 2, 42, 1 << 40} {
		if diff := cmp.Diff(Generate(seed), Generate(seed)); diff != "" {
			t.Errorf("seed %d: two scenarios differ (-first +second):\n%s", seed, diff)
		}
	}
	if cmp.Equal(Generate(1), Generate(2)) {
		t.Error("seeds 1 and 2 give the same scenario")
	}
}

// TestGenerateShape checks what the suite relies on over many seeds: sizes,
// unique names, running pods bound to the scenario's nodes within their pod
// room, the pending pod never outranking a running pod, and some of every
// feature showing up.
func TestGenerateShape(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 300; seed++ {
		sc := Generate(seed)
		if n := len(sc.Nodes); n < MinNodes || n > MaxNodes {
			t.Fatalf("seed %d: %d nodes", seed, n)
		}
		nodes := map[string]*corev1.Node{}
		for _, n := range sc.Nodes {
			if nodes[n.Name] != nil {
				t.Fatalf("seed %d: node %s twice", seed, n.Name)
			}
			nodes[n.Name] = n
			if n.Spec.Unschedulable {
				seen["cordoned node"]++
			}
			if len(n.Spec.Taints) > 0 {
				seen["tainted node"]++
			}
		}
		ports := map[string]bool{} // node/proto/port
		for _, p := range append(slices.Clone(sc.Running), sc.Finished...) {
			for _, c := range p.Spec.Containers {
				for _, port := range c.Ports {
					key := p.Spec.NodeName + "/" + portKey(port)
					if ports[key] {
						t.Fatalf("seed %d: two pods use host port %s", seed, key)
					}
					ports[key] = true
				}
			}
		}
		perNode := map[string]int64{}
		names := map[string]bool{}
		for _, p := range sc.Running {
			if names[p.Name] {
				t.Fatalf("seed %d: pod %s twice", seed, p.Name)
			}
			names[p.Name] = true
			n := nodes[p.Spec.NodeName]
			if n == nil {
				t.Fatalf("seed %d: pod %s on unknown node %q", seed, p.Name, p.Spec.NodeName)
			}
			perNode[n.Name]++
			if perNode[n.Name] > n.Status.Allocatable.Pods().Value() {
				t.Fatalf("seed %d: node %s holds more pods than it has room for", seed, n.Name)
			}
			if p.Spec.PriorityClassName != HighPriority && p.Spec.PriorityClassName != MidPriority {
				t.Fatalf("seed %d: running pod %s has priority class %q", seed, p.Name, p.Spec.PriorityClassName)
			}
		}
		p := sc.Pending
		if p.Namespace != sc.Namespace() || p.Spec.NodeName != "" {
			t.Fatalf("seed %d: pending pod %s/%s on %q", seed, p.Namespace, p.Name, p.Spec.NodeName)
		}
		switch p.Spec.PriorityClassName {
		case "", MidPriority, NeverPreemptPriority:
		default:
			t.Fatalf("seed %d: pending pod has priority class %q", seed, p.Spec.PriorityClassName)
		}
		if p.Spec.PreemptionPolicy != nil {
			t.Fatalf("seed %d: pending pod sets preemptionPolicy (only its class may)", seed)
		}
		if len(p.Spec.TopologySpreadConstraints) > 0 {
			seen["spread"]++
		}
		if a := p.Spec.Affinity; a != nil {
			if a.NodeAffinity != nil {
				seen["node affinity"]++
			}
			if a.PodAffinity != nil {
				seen["pod affinity"]++
			}
			if a.PodAntiAffinity != nil {
				seen["pod anti-affinity"]++
			}
		}
		if len(p.Spec.Tolerations) > 0 {
			seen["tolerations"]++
		}
		if len(p.Spec.Containers[0].Ports) > 0 {
			seen["host ports"]++
		}
		if len(p.Spec.NodeSelector) > 0 {
			seen["node selector"]++
		}
	}
	for _, f := range []string{"cordoned node", "tainted node", "spread", "node affinity", "pod affinity", "pod anti-affinity", "tolerations", "host ports", "node selector"} {
		if seen[f] == 0 {
			t.Errorf("no scenario of 300 has a %s", f)
		}
	}
	t.Logf("features over 300 seeds: %v", seen)
}
