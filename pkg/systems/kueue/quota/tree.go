package quota

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// FlavorResource is one resource in one flavor: the unit Kueue keeps
// quota and usage in (resources.FlavorResource).
type FlavorResource struct {
	Flavor   string
	Resource corev1.ResourceName
}

// value is a quantity as Kueue counts it: milli-units for cpu, units for
// everything else (resources.ResourceValue).
func value(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// Quantity is v of resource name as Kueue prints it
// (resources.ResourceQuantity): cpu from milli-units, memory, storage and
// huge pages in binary units where they round-trip.
func Quantity(name corev1.ResourceName, v int64) resource.Quantity {
	switch {
	case name == corev1.ResourceCPU:
		return *resource.NewMilliQuantity(v, resource.DecimalSI)
	case name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage ||
		len(name) > len(corev1.ResourceHugePagesPrefix) && string(name[:len(corev1.ResourceHugePagesPrefix)]) == corev1.ResourceHugePagesPrefix:
		q := *resource.NewQuantity(v, resource.BinarySI)
		if back, err := resource.ParseQuantity(q.String()); err == nil {
			return back
		}
		return q
	}
	return *resource.NewQuantity(v, resource.DecimalSI)
}

// quotaOf is one flavor-resource's quota at a node.
type quotaOf struct {
	nominal            int64
	borrowing, lending *int64
}

// node is a ClusterQueue's or Cohort's place in the quota tree
// (pkg/cache/scheduler resourceNode): its own quotas, its subtree's quota
// (its own plus what its children lend it) and the usage that counts
// against that.
type node struct {
	name    string
	quotas  map[FlavorResource]quotaOf
	subtree map[FlavorResource]int64
	usage   map[FlavorResource]int64
	parent  *node
	// children are the child nodes (Cohorts first, then ClusterQueues, as
	// updateCohortResourceNode adds them); none for a ClusterQueue.
	children []*node
	isCohort bool
}

func newNode(name string, cohort bool) *node {
	return &node{name: name, isCohort: cohort, quotas: map[FlavorResource]quotaOf{},
		subtree: map[FlavorResource]int64{}, usage: map[FlavorResource]int64{}}
}

// setQuotas takes a node's resource groups' quotas (createResourceQuotas).
func (n *node) setQuotas(groups []ResourceGroup) {
	for _, rg := range groups {
		for _, f := range rg.Flavors {
			for _, r := range f.Resources {
				q := quotaOf{nominal: value(r.Name, r.NominalQuota)}
				if r.BorrowingLimit != nil {
					v := value(r.Name, *r.BorrowingLimit)
					q.borrowing = &v
				}
				if r.LendingLimit != nil {
					v := value(r.Name, *r.LendingLimit)
					q.lending = &v
				}
				n.quotas[FlavorResource{f.Name, r.Name}] = q
			}
		}
	}
}

// localQuota is the part of the node's subtree quota its lending limit
// keeps from its parent (resourceNode.localQuota).
func (n *node) localQuota(fr FlavorResource) int64 {
	if l := n.quotas[fr].lending; l != nil {
		return max(0, n.subtree[fr]-*l)
	}
	return 0
}

// localAvailable is the guaranteed quota left at the node (LocalAvailable).
func (n *node) localAvailable(fr FlavorResource) int64 {
	return max(0, n.localQuota(fr)-n.usage[fr])
}

// Available is how much of fr the node may still take, its borrowing
// limits and every ancestor's usage counted (pkg/cache/scheduler
// available); negative when over-admitted.
func (n *node) available(fr FlavorResource) int64 {
	if n.parent == nil {
		return n.subtree[fr] - n.usage[fr]
	}
	parentAvailable := n.parent.available(fr)
	if b := n.quotas[fr].borrowing; b != nil {
		storedInParent := n.subtree[fr] - n.localQuota(fr)
		usedInParent := max(0, n.usage[fr]-n.localQuota(fr))
		parentAvailable = min(storedInParent-usedInParent+*b, parentAvailable)
	}
	return n.localAvailable(fr) + parentAvailable
}

// availableUnbounded is available with the node's own borrowing limit
// lifted (its ancestors' kept): what raising that limit could give it.
func (n *node) availableUnbounded(fr FlavorResource) int64 {
	if n.parent == nil {
		return n.available(fr)
	}
	return n.localAvailable(fr) + n.parent.available(fr)
}

// potentialAvailable is the most of fr the node could take with no usage
// anywhere, its borrowing limits kept (potentialAvailable).
func (n *node) potentialAvailable(fr FlavorResource) int64 {
	if n.parent == nil {
		return n.subtree[fr]
	}
	avail := n.localQuota(fr) + n.parent.potentialAvailable(fr)
	if b := n.quotas[fr].borrowing; b != nil {
		avail = min(n.subtree[fr]+*b, avail)
	}
	return avail
}

// addUsage adds usage, the part past the node's local quota bubbling up
// to its parent (addUsage).
func (n *node) addUsage(fr FlavorResource, v int64) {
	local := n.localAvailable(fr)
	n.usage[fr] += v
	if n.parent != nil && v > local {
		n.parent.addUsage(fr, v-local)
	}
}

// removeUsage undoes addUsage (removeUsage).
func (n *node) removeUsage(fr FlavorResource, v int64) {
	stored := n.usage[fr] - n.localQuota(fr)
	n.usage[fr] -= v
	if stored <= 0 || n.parent == nil {
		return
	}
	n.parent.removeUsage(fr, min(v, stored))
}

// accumulate computes the subtree quotas and usages from the leaves up
// (updateCohortResourceNode, accumulateFromChild): a ClusterQueue's
// subtree quota is its nominal quota; a Cohort's is its own plus what each
// child lends (its subtree less its local quota), its usage what each child
// uses past its local quota.
func (n *node) accumulate() {
	if !n.isCohort {
		n.subtree = make(map[FlavorResource]int64, len(n.quotas))
		for fr, q := range n.quotas {
			n.subtree[fr] = q.nominal
		}
		return
	}
	n.subtree = make(map[FlavorResource]int64, len(n.quotas))
	n.usage = map[FlavorResource]int64{}
	for fr, q := range n.quotas {
		n.subtree[fr] = q.nominal
	}
	for _, c := range n.children {
		c.accumulate()
		for fr, q := range c.subtree {
			n.subtree[fr] += q - c.localQuota(fr)
		}
		for fr, u := range c.usage {
			n.usage[fr] += max(0, u-c.localQuota(fr))
		}
	}
}

// root is the top of the node's tree.
func (n *node) root() *node {
	for n.parent != nil {
		n = n.parent
	}
	return n
}

// Format is v of resource name as Kueue prints it
// (resources.ResourceQuantityString).
func Format(name corev1.ResourceName, v int64) string {
	q := Quantity(name, v)
	return q.String()
}
