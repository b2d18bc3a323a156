package schedule

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// A NodeOrder replaces kube-scheduler's scoring and choice of node in a
// profile with another scheduler's (a gang system's allocate action,
// docs/design.md#volcanos-node-order): the profile's filters still decide
// which nodes are feasible; the order scores them, and the node with the
// highest exact score is taken, a tie among nodes that differ reported as
// not evaluated. A gang system's wing supplies it (Profile.WithNodeOrder);
// pkg/schedule names none.
type NodeOrder interface {
	// Describe words the order and the weights that decide it, for the
	// output.
	Describe() string
	// Build instantiates the order on one scheduler's framework.
	Build(h NodeOrderHandle) (NodeScorer, error)
	// Ties words how its scheduler breaks a tie ("X picks at random among
	// nodes of equal score"); the cycle names the pod, the nodes and the
	// pick after it.
	Ties() string
}

// NodeOrderHandle is what a NodeOrder builds on: the framework's handle,
// and the profile's filter plugins (a score that reads what its filter
// found in the cycle's state).
type NodeOrderHandle interface {
	Handle() framework.Handle
	// Filter is the profile's filter plugin of that name; nil when it
	// does not run.
	Filter(name string) framework.Plugin
}

// A NodeScorer is a NodeOrder on one scheduler: Score gives, for each
// feasible node (in feasible's order), its scorers' parts and its exact
// total; the scheduler shows the parts and the total truncated to
// integers, and compares the exact totals.
type NodeScorer interface {
	Score(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, feasible []*framework.NodeInfo) (parts [][]PluginScore, totals []float64, err error)
}

// WithNodeOrder returns a copy of the profile whose nodes are scored and
// chosen by o.
func (p *Profile) WithNodeOrder(o NodeOrder) *Profile {
	c := *p
	c.order = o
	return &c
}

// NodeOrder is the profile's NodeOrder; nil for kube-scheduler's scoring.
func (p *Profile) NodeOrder() NodeOrder { return p.order }

type orderHandle struct{ fw *frameworkImpl }

func (h orderHandle) Handle() framework.Handle { return h.fw.handle }

func (h orderHandle) Filter(name string) framework.Plugin {
	for _, pl := range h.fw.filter {
		if pl.Name() == name {
			return pl
		}
	}
	return nil
}

// orderPrioritize scores the feasible nodes with the profile's NodeOrder:
// one node is taken unscored; otherwise res.exact keeps the exact totals,
// which selectHost compares, and the node results show each scorer's part
// and the total, truncated to integers.
func (s *Scheduler) orderPrioritize(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, feasible []*framework.NodeInfo, res *Result) error {
	if len(feasible) == 1 {
		return nil
	}
	parts, totals, err := s.order.Score(ctx, state, pod, feasible)
	if err != nil {
		return err
	}
	res.exact = make([]float64, len(res.Nodes))
	for i, ni := range feasible {
		k := s.byName[ni.Name()]
		res.exact[k] = totals[i]
		res.Nodes[k].Scores = parts[i]
		res.Nodes[k].Score = int64(totals[i])
	}
	return nil
}

// tieNote is a tie a NodeOrder's scheduler breaks at random among nodes
// that differ: the pod, the node the plan took, and the words.
type tieNote struct {
	pod  *corev1.Pod
	node string
	text string
	// labelsOnly: the tied nodes differ only in the node labels keys
	// names; a later pod is shaped by the toss only if a selector, an
	// affinity or a topology of it or of a pod on a node reads one.
	labelsOnly bool
	keys       []string
}

// noteOrderTie remembers the cycle's tie that the NodeOrder's scheduler
// would break at random (NodeOrder.Ties) among nodes that are not alike.
// Once the pod is reserved on the node the plan took, every later cycle on
// this working copy reports the tie as not evaluated: the gang's later
// members fit as they do because of a coin toss. A tie of the last pod
// placed, or among nodes alike in everything a placement reads
// (allocatable, what their pods request, the pod count, labels but the
// hostname, taints, cordon), shapes nothing and is not reported.
func (s *Scheduler) noteOrderTie(pod *corev1.Pod, res *Result) {
	s.orderTie = nil
	top := res.TopNodes()
	if len(top) < 2 {
		return
	}
	first := s.nodes[s.byName[top[0]]]
	var keys []string
	labelsOnly := true
	for _, name := range top[1:] {
		alike, differ := alikeNodes(first, s.nodes[s.byName[name]])
		if !alike {
			labelsOnly, keys = false, nil
			break
		}
		for _, k := range differ {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	if labelsOnly && len(keys) == 0 {
		return
	}
	s.orderTie = &tieNote{pod: pod, node: res.SelectedNode, labelsOnly: labelsOnly, keys: keys, text: fmt.Sprintf(
		"%s for %s/%s (%s), which differ: the plan took %s, and the members placed after it may fit differently on another pick",
		s.profile.order.Ties(), pod.Namespace, pod.Name, abbreviateNodes(top, 5), res.SelectedNode)}
}

// orderTiesFor are the ties reserved on this working copy that may
// shape pod's cycle: every tie among nodes that differ in more than
// labels, and a tie among nodes that differ only in labels when pod, or a
// pod with an affinity on a node, reads one of those label keys (a
// selector, a node affinity, a topology key), or pod has volumes or claims
// (whose topology reads labels the snapshot does not name) or default
// spreading may apply to it (defaultSpreadingMayApply).
func (s *Scheduler) orderTiesFor(pod *corev1.Pod) []string {
	// The first tie that applies is enough: the cycle is not verified.
	var read map[string]bool
	for _, t := range s.orderTies {
		if !t.labelsOnly {
			return []string{t.text}
		}
		if read == nil {
			if len(pod.Spec.Volumes) > 0 || len(pod.Spec.ResourceClaims) > 0 || s.defaultSpreadingMayApply(pod) {
				return []string{t.text}
			}
			read = podNodeLabelKeys(pod)
		}
		for _, k := range t.keys {
			if read[k] || s.affinityKeys()[k] {
				return []string{t.text}
			}
		}
	}
	return nil
}

// affinityKeys are the node label keys the (anti-)affinity terms of the
// pods on nodes read (affinityNodeKeys).
func (s *Scheduler) affinityKeys() map[string]bool {
	if s.affinityNodeKeys == nil {
		keys := map[string]bool{}
		for _, ni := range s.nodes {
			for _, pi := range ni.PodsWithAffinity {
				for k := range podNodeLabelKeys(pi.Pod) {
					keys[k] = true
				}
			}
		}
		s.affinityNodeKeys = keys
	}
	return s.affinityNodeKeys
}

// defaultSpreadingMayApply: pod has no spread constraints of its own and a
// Service, ReplicationController, ReplicaSet or StatefulSet selects it (or
// those kinds could not be read), so PodTopologySpread's default
// constraints, which read the zone and the hostname, score it.
func (s *Scheduler) defaultSpreadingMayApply(pod *corev1.Pod) bool {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return false
	}
	return !s.handle.DefaultSelector(pod).Empty() || len(s.handle.UnreadableSelectorKinds(pod.Namespace)) > 0
}

// podNodeLabelKeys are the node label keys pod's scheduling reads: its
// node selector, its node affinity's expressions, and the topology keys
// of its spread constraints and pod (anti-)affinity terms.
func podNodeLabelKeys(pod *corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for k := range pod.Spec.NodeSelector {
		out[k] = true
	}
	terms := func(ts []corev1.NodeSelectorTerm) {
		for _, t := range ts {
			for _, e := range t.MatchExpressions {
				out[e.Key] = true
			}
		}
	}
	for _, c := range pod.Spec.TopologySpreadConstraints {
		out[c.TopologyKey] = true
	}
	af := pod.Spec.Affinity
	if af == nil {
		return out
	}
	if na := af.NodeAffinity; na != nil {
		if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			terms(r.NodeSelectorTerms)
		}
		for _, p := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			terms([]corev1.NodeSelectorTerm{p.Preference})
		}
	}
	podTerms := func(req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm) {
		for _, t := range req {
			out[t.TopologyKey] = true
		}
		for _, t := range pref {
			out[t.PodAffinityTerm.TopologyKey] = true
		}
	}
	if pa := af.PodAffinity; pa != nil {
		podTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := af.PodAntiAffinity; pa != nil {
		podTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return out
}

func abbreviateNodes(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}

// alikeNodes reports whether two nodes are interchangeable for a placement
// but for their labels (allocatable, what their pods request, the pod
// count, taints, cordon), and the label keys (the hostname aside) whose
// values differ.
func alikeNodes(a, b *framework.NodeInfo) (bool, []string) {
	if !sameResource(a.Allocatable, b.Allocatable) || !sameResource(a.Requested, b.Requested) || len(a.Pods) != len(b.Pods) {
		return false, nil
	}
	na, nb := a.Node(), b.Node()
	if na.Spec.Unschedulable != nb.Spec.Unschedulable || !equality.Semantic.DeepEqual(na.Spec.Taints, nb.Spec.Taints) {
		return false, nil
	}
	var keys []string
	for k, v := range na.Labels {
		if w, ok := nb.Labels[k]; (!ok || w != v) && k != corev1.LabelHostname {
			keys = append(keys, k)
		}
	}
	for k := range nb.Labels {
		if _, ok := na.Labels[k]; !ok && k != corev1.LabelHostname {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return true, keys
}

func sameResource(a, b *framework.Resource) bool {
	if a.MilliCPU != b.MilliCPU || a.Memory != b.Memory || a.EphemeralStorage != b.EphemeralStorage || a.AllowedPodNumber != b.AllowedPodNumber {
		return false
	}
	for k, v := range a.ScalarResources {
		if b.ScalarResources[k] != v {
			return false
		}
	}
	for k, v := range b.ScalarResources {
		if a.ScalarResources[k] != v {
			return false
		}
	}
	return true
}

// bestExact is the highest float score among exact, NaN never.
func bestExact(exact []float64, nodes []NodeResult) float64 {
	best := math.Inf(-1)
	for i, n := range nodes {
		if n.Feasible && exact[i] > best {
			best = exact[i]
		}
	}
	return best
}

// WithNotEvaluated returns a copy of the profile whose every cycle also
// reports why as not evaluated.
func (p *Profile) WithNotEvaluated(why string) *Profile {
	c := *p
	if c.notEvaluated != "" {
		why = c.notEvaluated + "; " + why
	}
	c.notEvaluated = why
	return &c
}
