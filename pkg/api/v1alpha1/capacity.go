package v1alpha1

import (
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/capacity"
)

// KindCapacity is what capacity prints with -o json|yaml.
const KindCapacity = "Capacity"

// Capacity is what capacity prints with -o json|yaml (kind Capacity): one
// item per shape, and the hole chart (docs/design.md#capacity).
type Capacity struct {
	Items []CapacityItem `json:"items"`
	Holes *HoleChart     `json:"holes,omitempty"`
}

// CapacityItem is how many copies of one shape fit at once.
type CapacityItem struct {
	// Name is the shape as given: podgroup/X, job/train (-f).
	Name    string   `json:"name"`
	Gang    *GangRef `json:"gang"`
	Members int64    `json:"members"`
	// Copies fit one after another, each on what the ones before left.
	Copies int64 `json:"copies"`
	// AtLeast: --max copies fit and no more were tried.
	AtLeast bool `json:"atLeast,omitempty"`
	// Verified: at least one copy fits, and nothing the count depends on
	// was left not evaluated.
	Verified bool `json:"verified"`
	// StoppedBy is why the next copy does not fit, in one line; Message
	// is its placement's whole message, Verdict its verdict.
	StoppedBy    string   `json:"stoppedBy,omitempty"`
	Message      string   `json:"message,omitempty"`
	Verdict      string   `json:"verdict,omitempty"`
	Domains      []string `json:"domains,omitempty"`
	NotEvaluated []string `json:"notEvaluated,omitempty"`
}

// HoleChart is the free accelerator capacity by hole size.
type HoleChart struct {
	// TopologyKey is the node label of the domains; empty: the whole cluster.
	TopologyKey string `json:"topologyKey,omitempty"`
	// Unschedulable counts the nodes left out: cordoned or not Ready.
	Unschedulable int64          `json:"unschedulable"`
	Resources     []HoleResource `json:"resources"`
}

// HoleResource is one resource's holes.
type HoleResource struct {
	Resource string `json:"resource"`
	// Devices: DRA devices of node-local ResourceSlices, not allocatable.
	Devices bool         `json:"devices,omitempty"`
	Largest int64        `json:"largest"`
	Domains []HoleDomain `json:"domains"`
}

// HoleDomain is one domain's nodes with the resource.
type HoleDomain struct {
	Value string `json:"value,omitempty"`
	Nodes int64  `json:"nodes"`
	Free  int64  `json:"free"`
	// Holes counts the nodes by free amount, largest first.
	Holes []HoleCount `json:"holes"`
}

// HoleCount is how many nodes have exactly Free free.
type HoleCount struct {
	Free  int64 `json:"free"`
	Nodes int64 `json:"nodes"`
}

// FromCapacity converts capacity's counts, each shape named as given
// (names[i] names results[i]), and its chart (nil: none).
func FromCapacity(names []string, results []*capacity.Result, chart *capacity.HoleChart) *Capacity {
	out := &Capacity{Items: []CapacityItem{}}
	for i, c := range results {
		item := CapacityItem{Name: names[i], Gang: refOf(c.Gang), Members: int64(len(c.Gang.Members)), Copies: int64(c.Copies),
			AtLeast: c.AtLeast, Verified: c.Verified(), StoppedBy: c.Reason, Domains: c.Domains, NotEvaluated: c.NotEvaluated}
		if c.Stop != nil {
			item.Message, item.Verdict = c.Stop.Message, string(c.Stop.Verdict)
		}
		out.Items = append(out.Items, item)
	}
	if chart != nil {
		h := &HoleChart{TopologyKey: chart.TopologyKey, Unschedulable: int64(chart.Unschedulable), Resources: []HoleResource{}}
		for _, r := range chart.Resources {
			hr := HoleResource{Resource: r.Resource, Devices: r.Devices, Largest: r.Largest, Domains: []HoleDomain{}}
			for _, d := range r.Domains {
				hd := HoleDomain{Value: d.Value, Nodes: int64(d.Nodes), Free: d.Free, Holes: []HoleCount{}}
				for k := len(d.Holes) - 1; k >= 0; k-- {
					hd.Holes = append(hd.Holes, HoleCount{Free: int64(k), Nodes: int64(d.Holes[k])})
				}
				hr.Domains = append(hr.Domains, hd)
			}
			h.Resources = append(h.Resources, hr)
		}
		out.Holes = h
	}
	return out
}
