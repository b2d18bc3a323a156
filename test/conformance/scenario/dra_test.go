package scenario

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
)

func TestGenerateDRAIsDeterministic(t *testing.T) {
	for _, seed := range []uint64{1, 2, 42, 1 << 40} {
		if diff := cmp.Diff(GenerateDRA(seed), GenerateDRA(seed)); diff != "" {
			t.Errorf("seed %d: two scenarios differ (-first +second):\n%s", seed, diff)
		}
	}
	if cmp.Equal(GenerateDRA(1), GenerateDRA(2)) {
		t.Error("seeds 1 and 2 give the same scenario")
	}
}

// TestGenerateDRAShape checks what the suite relies on over many seeds:
// allocated devices exist on the node the allocation names and no two
// claims hold one device, reservations name running pods on that node in
// the claim's namespace, the pending pod's claims and templates exist, and
// every feature the generator promises shows up.
func TestGenerateDRAShape(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 300; seed++ {
		sc := GenerateDRA(seed)
		if n := len(sc.Nodes); n < MinDRANodes || n > MaxDRANodes {
			t.Fatalf("seed %d: %d nodes", seed, n)
		}
		devices := map[string]bool{} // node/device
		for _, s := range sc.ResourceSlices {
			if s.Spec.NodeName == nil || s.Spec.Pool.Name != *s.Spec.NodeName {
				t.Fatalf("seed %d: slice %s is not one pool on its node", seed, s.Name)
			}
			for _, d := range s.Spec.Devices {
				devices[*s.Spec.NodeName+"/"+d.Name] = true
			}
			if len(s.Spec.Devices) == 0 {
				seen["empty slice"]++
			}
		}
		running := map[string]*corev1.Pod{}
		for _, p := range sc.Running {
			running[p.Namespace+"/"+p.Name] = p
		}
		claims := map[string]*resourcev1.ResourceClaim{}
		held := map[string]string{}
		for _, c := range sc.ResourceClaims {
			claims[c.Namespace+"/"+c.Name] = c
			a := c.Status.Allocation
			if a == nil {
				continue
			}
			node := a.NodeSelector.NodeSelectorTerms[0].MatchFields[0].Values[0]
			for _, r := range a.Devices.Results {
				key := r.Pool + "/" + r.Device
				if r.Pool != node || !devices[key] {
					t.Fatalf("seed %d: claim %s holds %s, not a device on %s", seed, c.Name, key, node)
				}
				if other, ok := held[key]; ok {
					t.Fatalf("seed %d: claims %s and %s both hold %s", seed, other, c.Name, key)
				}
				held[key] = c.Name
				if r.Request != c.Spec.Devices.Requests[0].Name {
					t.Fatalf("seed %d: claim %s: result for request %q", seed, c.Name, r.Request)
				}
			}
			if len(c.Status.ReservedFor) == 0 {
				seen["claim reserved for nobody"]++
			}
			for _, ref := range c.Status.ReservedFor {
				p := running[c.Namespace+"/"+ref.Name]
				if p == nil || p.Spec.NodeName != node {
					t.Fatalf("seed %d: claim %s reserved for %s, not a running pod on %s", seed, c.Name, ref.Name, node)
				}
				seen["claim reserved for a pod"]++
			}
		}
		templates := map[string]*resourcev1.ResourceClaimTemplate{}
		for _, tm := range sc.ResourceClaimTemplates {
			templates[tm.Namespace+"/"+tm.Name] = tm
		}
		p := sc.Pending
		if n := len(p.Spec.ResourceClaims); n < 1 && len(sc.ExtendedResources) == 0 || n > 2 {
			t.Fatalf("seed %d: pending pod has %d claims", seed, n)
		}
		checkExtendedResources(t, sc, seen)
		for _, pc := range p.Spec.ResourceClaims {
			var spec resourcev1.ResourceClaimSpec
			switch {
			case pc.ResourceClaimTemplateName != nil:
				tm := templates[p.Namespace+"/"+*pc.ResourceClaimTemplateName]
				if tm == nil {
					t.Fatalf("seed %d: template %s missing", seed, *pc.ResourceClaimTemplateName)
				}
				spec = tm.Spec.Spec
				seen["template"]++
			case pc.ResourceClaimName != nil:
				c := claims[p.Namespace+"/"+*pc.ResourceClaimName]
				if c == nil {
					t.Fatalf("seed %d: claim %s missing", seed, *pc.ResourceClaimName)
				}
				spec = c.Spec
				if c.Status.Allocation != nil {
					seen["shared allocated claim"]++
				} else {
					seen["new claim"]++
				}
			}
			if len(spec.Devices.Constraints) > 0 {
				seen["matchAttribute"]++
			}
			for _, r := range spec.Devices.Requests {
				var exact []*resourcev1.ExactDeviceRequest
				if r.Exactly != nil {
					exact = append(exact, r.Exactly)
				} else {
					seen["firstAvailable"]++
					for _, s := range r.FirstAvailable {
						exact = append(exact, &resourcev1.ExactDeviceRequest{DeviceClassName: s.DeviceClassName, AllocationMode: s.AllocationMode, Count: s.Count, Selectors: s.Selectors})
					}
				}
				for _, e := range exact {
					if e.AllocationMode == resourcev1.DeviceAllocationModeAll {
						seen["all"]++
					}
					if len(e.Selectors) > 0 {
						seen["request selector"]++
					}
					if e.DeviceClassName == sc.Name+"-tpu" {
						seen["missing class"]++
					}
				}
			}
		}
	}
	for _, f := range []string{"empty slice", "claim reserved for nobody", "claim reserved for a pod", "template", "shared allocated claim", "new claim", "matchAttribute", "firstAvailable", "all", "request selector", "missing class",
		"extended resource", "extended resource by implicit name", "two extended resources", "extended resource in an init container",
		"extended resource in a sidecar", "extended resource without claims", "device plugin node", "device plugin node used", "zero allocatable node"} {
		if seen[f] == 0 {
			t.Errorf("no scenario of 300 has a %s", f)
		}
	}
	t.Logf("features over 300 seeds: %v", seen)
}

// checkExtendedResources checks a scenario of extended resources backed by
// DRA: exactly one class names ExtendedResourceName, the pending pod
// requests each of sc.ExtendedResources with an equal limit, and nodes that
// advertise the resource have it as capacity and allocatable alike.
func checkExtendedResources(t *testing.T, sc *Scenario, seen map[string]int) {
	t.Helper()
	name := ExtendedResourceName(sc.Name)
	var backing []string
	for _, c := range sc.DeviceClasses {
		if c.Spec.ExtendedResourceName != nil {
			if corev1.ResourceName(*c.Spec.ExtendedResourceName) != name {
				t.Fatalf("seed %d: class %s backs %s, not the scenario's %s", sc.Seed, c.Name, *c.Spec.ExtendedResourceName, name)
			}
			backing = append(backing, c.Name)
		}
	}
	if len(sc.ExtendedResources) == 0 {
		if len(backing) > 0 {
			t.Fatalf("seed %d: classes %v back %s, but the pending pod requests no extended resource", sc.Seed, backing, name)
		}
		return
	}
	if len(backing) != 1 {
		t.Fatalf("seed %d: classes %v back %s", sc.Seed, backing, name)
	}
	seen["extended resource"]++
	p := sc.Pending
	for _, r := range sc.ExtendedResources {
		if r != name {
			seen["extended resource by implicit name"]++
		}
		found := false
		for i, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
			q, ok := c.Resources.Requests[r]
			if !ok {
				continue
			}
			found = true
			if l := c.Resources.Limits[r]; !q.Equal(l) {
				t.Fatalf("seed %d: container %d requests %s of %s with limit %s", sc.Seed, i, q.String(), r, l.String())
			}
			if i < len(p.Spec.InitContainers) {
				if c.RestartPolicy != nil {
					seen["extended resource in a sidecar"]++
				} else {
					seen["extended resource in an init container"]++
				}
			}
		}
		if !found {
			t.Fatalf("seed %d: the pending pod does not request %s", sc.Seed, r)
		}
	}
	if len(sc.ExtendedResources) > 1 {
		seen["two extended resources"]++
	}
	if len(p.Spec.ResourceClaims) == 0 {
		seen["extended resource without claims"]++
	}
	nodes := map[string]bool{}
	for _, n := range sc.Nodes {
		c, a := n.Status.Capacity[name], n.Status.Allocatable[name]
		if !c.Equal(a) {
			t.Fatalf("seed %d: node %s: capacity %s, allocatable %s of %s", sc.Seed, n.Name, c.String(), a.String(), name)
		}
		if _, ok := n.Status.Allocatable[name]; ok {
			if a.IsZero() {
				seen["zero allocatable node"]++
			} else {
				seen["device plugin node"]++
				nodes[n.Name] = true
			}
		}
	}
	for _, rp := range sc.Running {
		if _, ok := rp.Spec.Containers[0].Resources.Requests[name]; ok {
			if !nodes[rp.Spec.NodeName] {
				t.Fatalf("seed %d: running pod %s requests %s on %s, which has no device plugin for it", sc.Seed, rp.Name, name, rp.Spec.NodeName)
			}
			seen["device plugin node used"]++
		}
	}
}
