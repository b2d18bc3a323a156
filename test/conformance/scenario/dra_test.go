package scenario

import (
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
		if n := len(p.Spec.ResourceClaims); n < 1 || n > 2 {
			t.Fatalf("seed %d: pending pod has %d claims", seed, n)
		}
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
	for _, f := range []string{"empty slice", "claim reserved for nobody", "claim reserved for a pod", "template", "shared allocated claim", "new claim", "matchAttribute", "firstAvailable", "all", "request selector", "missing class"} {
		if seen[f] == 0 {
			t.Errorf("no scenario of 300 has a %s", f)
		}
	}
	t.Logf("features over 300 seeds: %v", seen)
}
