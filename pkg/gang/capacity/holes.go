package capacity

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// HoleChart is the free accelerator capacity of the schedulable nodes by
// hole size: for each accelerator resource and each topology domain, how
// many nodes have 8, 7, ... 1 (or none) free (docs/design.md#the-hole-chart).
type HoleChart struct {
	// TopologyKey is the node label the domains are values of; empty
	// when no node has it (the whole cluster is one domain).
	TopologyKey string
	Resources   []HoleResource
	// Unschedulable counts the nodes left out: cordoned, or not Ready.
	Unschedulable int
}

// HoleResource is one resource's holes: an extended resource the nodes
// advertise (nvidia.com/gpu), or the devices of one DRA driver published
// in node-local ResourceSlices ("gpu.example.com devices").
type HoleResource struct {
	Resource string
	// Devices: counted from ResourceSlices (DRA), not allocatable.
	Devices bool
	// Largest is the most any schedulable node has (the chart's top row).
	Largest int64
	Domains []HoleDomain
}

// HoleDomain is one domain's nodes that have the resource.
type HoleDomain struct {
	Value string
	Nodes int
	Free  int64
	// Holes[k] counts the nodes with exactly k free (k from 0 to Largest).
	Holes []int
}

// holeSkipped are the resources every node has: not accelerators.
func holeSkipped(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods:
		return true
	}
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) || strings.HasPrefix(string(name), "attachable-volumes-")
}

// Schedulable reports whether new pods may go to the node at all: not
// cordoned (spec.unschedulable), and Ready. A node with no Ready condition
// (a hand-made snapshot) counts: the pipeline places pods there too.
// Taints are not looked at: they keep some pods off, not all.
func Schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return true
}

// Holes charts, on the state nodes hold (a scheduler's NodeInfos, so pods
// reserved on it count), the free amount per schedulable node of every
// extended resource some node advertises, and of the devices of every DRA
// driver that publishes node-local ResourceSlices in snap (devices
// allocated by a claim are taken), grouped by the node label key (every
// node in one domain "" when no node has it; a node without it in the
// domain "<none>"). only, when not empty, keeps just those resources.
func Holes(snap *schedule.Snapshot, nodes []*framework.NodeInfo, key string, only []string) *HoleChart {
	out := &HoleChart{TopologyKey: key}
	if !slices.ContainsFunc(nodes, func(n *framework.NodeInfo) bool { _, ok := n.Node().Labels[key]; return ok }) {
		out.TopologyKey = ""
	}
	free := map[string]map[string]int64{} // resource -> node -> free
	devices := map[string]bool{}
	var usable []*corev1.Node
	for _, ni := range nodes {
		n := ni.Node()
		if !Schedulable(n) {
			out.Unschedulable++
			continue
		}
		usable = append(usable, n)
		for name, v := range ni.Allocatable.ScalarResources {
			if holeSkipped(name) || v <= 0 {
				continue
			}
			r := string(name)
			if free[r] == nil {
				free[r] = map[string]int64{}
			}
			free[r][n.Name] = max(v-ni.Requested.ScalarResources[name], 0)
		}
	}
	for r, byNode := range freeDevices(snap) {
		devices[r] = true
		for node, v := range byNode {
			if free[r] == nil {
				free[r] = map[string]int64{}
			}
			free[r][node] = v
		}
	}
	var names []string
	for r := range free {
		if len(only) == 0 || slices.Contains(only, r) {
			names = append(names, r)
		}
	}
	slices.Sort(names)
	for _, r := range names {
		hr := HoleResource{Resource: r, Devices: devices[r]}
		domains := map[string]*HoleDomain{}
		for _, n := range usable {
			v, ok := free[r][n.Name]
			if !ok {
				continue
			}
			value := ""
			if out.TopologyKey != "" {
				value = cmp.Or(n.Labels[out.TopologyKey], "<none>")
			}
			d := domains[value]
			if d == nil {
				d = &HoleDomain{Value: value}
				domains[value] = d
			}
			d.Nodes++
			d.Free += v
			for int64(len(d.Holes)) <= v {
				d.Holes = append(d.Holes, 0)
			}
			d.Holes[v]++
			hr.Largest = max(hr.Largest, v)
		}
		if len(domains) == 0 {
			continue
		}
		for _, d := range domains {
			for int64(len(d.Holes)) <= hr.Largest {
				d.Holes = append(d.Holes, 0)
			}
			hr.Domains = append(hr.Domains, *d)
		}
		slices.SortFunc(hr.Domains, func(a, b HoleDomain) int { return cmp.Compare(a.Value, b.Value) })
		out.Resources = append(out.Resources, hr)
	}
	return out
}

// DeviceResource names a DRA driver's devices in the chart.
func DeviceResource(driver string) string { return driver + " devices" }

// freeDevices counts, per DRA driver and node, the devices of node-local
// ResourceSlices (spec.nodeName) that no ResourceClaim has allocated.
// Slices for node selectors or all nodes, shared counters and devices
// shared by several claims (consumable capacity) are not charted.
func freeDevices(snap *schedule.Snapshot) map[string]map[string]int64 {
	if snap == nil || len(snap.ResourceSlices) == 0 {
		return nil
	}
	taken := map[[3]string]bool{}
	for _, c := range snap.ResourceClaims {
		if a := c.Status.Allocation; a != nil {
			for _, r := range a.Devices.Results {
				taken[[3]string{r.Driver, r.Pool, r.Device}] = true
			}
		}
	}
	out := map[string]map[string]int64{}
	for _, s := range snap.ResourceSlices {
		if s.Spec.NodeName == nil || *s.Spec.NodeName == "" {
			continue
		}
		r := DeviceResource(s.Spec.Driver)
		if out[r] == nil {
			out[r] = map[string]int64{}
		}
		node := *s.Spec.NodeName
		out[r][node] += 0
		for _, d := range s.Spec.Devices {
			if !taken[[3]string{s.Spec.Driver, s.Spec.Pool.Name, d.Name}] {
				out[r][node]++
			}
		}
	}
	return out
}

// RequestedResources are the chart's resources a gang asks for: its
// members' extended resources, and, when a member has ResourceClaims, the
// devices of every DRA driver in snap (which driver a claim's DeviceClass
// selects is a CEL expression the chart does not evaluate).
func RequestedResources(snap *schedule.Snapshot, g *gang.Gang) []string {
	var out []string
	claims := false
	for _, m := range g.Members {
		for name := range framework.ComputePodResource(m).Resource.ScalarResources {
			if !holeSkipped(name) && !slices.Contains(out, string(name)) {
				out = append(out, string(name))
			}
		}
		claims = claims || len(m.Spec.ResourceClaims) > 0
	}
	if claims {
		for _, s := range snap.ResourceSlices {
			if r := DeviceResource(s.Spec.Driver); !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}
