package interpodaffinity

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// preFilterStateKey is where PreFilter leaves its counts for Filter.
const preFilterStateKey framework.StateKey = "PreFilter" + Name

// The reasons Filter gives, worded as kube-scheduler words them.
const (
	// ErrReasonExistingAntiAffinityRulesNotMatch: a pod on the node's
	// topology domain has required anti-affinity against the incoming pod.
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	// ErrReasonAffinityRulesNotMatch: no pod the incoming pod's required
	// affinity selects runs in the node's topology domain.
	ErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules"
	// ErrReasonAntiAffinityRulesNotMatch: a pod the incoming pod's required
	// anti-affinity selects runs in the node's topology domain.
	ErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules"
)

// topologyToMatchedTermCount counts matching pods (per term) per topology pair.
type topologyToMatchedTermCount map[topologyPair]int64

func (m topologyToMatchedTermCount) clone() topologyToMatchedTermCount {
	out := make(topologyToMatchedTermCount, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// update adds value to the node's pair for key; a count that reaches zero is
// dropped, so that an empty map means "no matching pod anywhere".
func (m topologyToMatchedTermCount) update(node *corev1.Node, key string, value int64) {
	tv, ok := node.Labels[key]
	if !ok {
		return
	}
	pair := topologyPair{key: key, value: tv}
	m[pair] += value
	if m[pair] == 0 {
		delete(m, pair)
	}
}

// pairCount is one matched term on one node, collected by a worker before
// the counts are merged into a map.
type pairCount struct {
	pair  topologyPair
	count int64
}

func appendMatch(list []pairCount, node *corev1.Node, key string, value int64) []pairCount {
	if tv, ok := node.Labels[key]; ok {
		list = append(list, pairCount{pair: topologyPair{key: key, value: tv}, count: value})
	}
	return list
}

// preFilterState is what Filter needs, computed once per pod.
type preFilterState struct {
	// existingAntiAffinityCounts counts, per topology pair, the required
	// anti-affinity terms of existing pods that the incoming pod matches.
	existingAntiAffinityCounts topologyToMatchedTermCount
	// existingAntiAffinityKeys holds (at least) every topology key of
	// existingAntiAffinityCounts, so Filter looks up only those node labels.
	existingAntiAffinityKeys []string
	// affinityCounts counts, per pair of each required affinity term, the
	// existing pods that match all of the incoming pod's affinity terms.
	affinityCounts topologyToMatchedTermCount
	// antiAffinityCounts counts, per pair, the existing pods that match each
	// of the incoming pod's required anti-affinity terms.
	antiAffinityCounts topologyToMatchedTermCount

	pod               *corev1.Pod
	namespaceLabels   labels.Set
	affinityTerms     []incomingTerm
	antiAffinityTerms []incomingTerm
	// podMatchesOwnAffinity: the pod matches all its own affinity terms, so
	// it may be the first of a group that wants to run together.
	podMatchesOwnAffinity bool
}

// Clone copies the counts; the terms and the pod never change.
func (s *preFilterState) Clone() framework.StateData {
	if s == nil {
		return nil
	}
	c := *s
	c.existingAntiAffinityCounts = s.existingAntiAffinityCounts.clone()
	c.existingAntiAffinityKeys = slices.Clone(s.existingAntiAffinityKeys)
	c.affinityCounts = s.affinityCounts.clone()
	c.antiAffinityCounts = s.antiAffinityCounts.clone()
	return &c
}

// updateWithPod accounts for a pod added to (multiplier 1) or removed from
// (-1) node after PreFilter ran.
func (s *preFilterState) updateWithPod(pi *framework.PodInfo, node *corev1.Node, multiplier int64) {
	for i := range pi.RequiredAntiAffinityTerms {
		t := &pi.RequiredAntiAffinityTerms[i]
		if t.Matches(s.pod, s.namespaceLabels) {
			s.existingAntiAffinityCounts.update(node, t.TopologyKey, multiplier)
			if multiplier > 0 && !slices.Contains(s.existingAntiAffinityKeys, t.TopologyKey) {
				s.existingAntiAffinityKeys = append(s.existingAntiAffinityKeys, t.TopologyKey)
			}
		}
	}
	if podMatchesAllTerms(s.affinityTerms, pi.Pod) {
		for i := range s.affinityTerms {
			s.affinityCounts.update(node, s.affinityTerms[i].topologyKey, multiplier)
		}
	}
	for i := range s.antiAffinityTerms {
		if s.antiAffinityTerms[i].matches(pi.Pod) {
			s.antiAffinityCounts.update(node, s.antiAffinityTerms[i].topologyKey, multiplier)
		}
	}
}

// PreFilter counts, per topology pair, the existing pods the incoming pod's
// required terms select and the existing pods whose required anti-affinity
// selects the incoming pod. It returns Skip when nothing can reject the pod.
func (pl *InterPodAffinity) PreFilter(ctx context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	pi := framework.NewPodInfo(pod)
	if pi.ParseError != nil {
		err := parseError(pod)
		if err == nil {
			err = pi.ParseError
		}
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %+v", err))
	}
	lister := pl.handle.NodeInfos()
	s := &preFilterState{
		pod:               pod,
		namespaceLabels:   pl.handle.NamespaceLabels(pod.Namespace),
		affinityTerms:     resolveTerms(pi.RequiredAffinityTerms, pl.handle.NamespaceLabels),
		antiAffinityTerms: resolveTerms(pi.RequiredAntiAffinityTerms, pl.handle.NamespaceLabels),
	}
	s.podMatchesOwnAffinity = podMatchesAllTerms(s.affinityTerms, pod)
	s.existingAntiAffinityCounts, s.existingAntiAffinityKeys = pl.existingAntiAffinityCounts(ctx, s, lister.HavePodsWithRequiredAntiAffinityList())
	// The pod's own terms count over every node of the snapshot, whatever
	// subset the caller filters: a match anywhere matters.
	s.affinityCounts, s.antiAffinityCounts = pl.incomingAffinityCounts(ctx, s, lister.List())

	if len(s.existingAntiAffinityCounts) == 0 && len(s.affinityTerms) == 0 && len(s.antiAffinityTerms) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	cycleState.Write(preFilterStateKey, s)
	return nil, nil
}

// existingAntiAffinityCounts matches the required anti-affinity terms of the
// pods on nodes against the incoming pod.
func (pl *InterPodAffinity) existingAntiAffinityCounts(ctx context.Context, s *preFilterState, nodes []*framework.NodeInfo) (topologyToMatchedTermCount, []string) {
	parts := make([][]pairCount, chunkCount(len(nodes)))
	pl.parallelChunks(ctx, len(nodes), func(c, start, end int) {
		var list []pairCount
		for _, ni := range nodes[start:end] {
			node := ni.Node()
			for _, existing := range ni.PodsWithRequiredAntiAffinity {
				for i := range existing.RequiredAntiAffinityTerms {
					t := &existing.RequiredAntiAffinityTerms[i]
					if t.Matches(s.pod, s.namespaceLabels) {
						list = appendMatch(list, node, t.TopologyKey, 1)
					}
				}
			}
		}
		parts[c] = list
	})
	counts := topologyToMatchedTermCount{}
	var keys []string
	for _, list := range parts {
		for _, pc := range list {
			counts[pc.pair] += pc.count
			if !slices.Contains(keys, pc.pair.key) {
				keys = append(keys, pc.pair.key)
			}
		}
	}
	return counts, keys
}

// incomingAffinityCounts matches the incoming pod's required affinity and
// anti-affinity terms against every pod on nodes.
func (pl *InterPodAffinity) incomingAffinityCounts(ctx context.Context, s *preFilterState, nodes []*framework.NodeInfo) (affinity, antiAffinity topologyToMatchedTermCount) {
	affinity, antiAffinity = topologyToMatchedTermCount{}, topologyToMatchedTermCount{}
	if len(s.affinityTerms) == 0 && len(s.antiAffinityTerms) == 0 {
		return affinity, antiAffinity
	}
	// Terms that need no key (only NotIn, !=, DoesNotExist) never rule a
	// node out: then the nodes' key sets are not built.
	needKeys := false
	for _, terms := range [][]incomingTerm{s.affinityTerms, s.antiAffinityTerms} {
		for i := range terms {
			needKeys = needKeys || len(terms[i].needs) > 0
		}
	}
	affParts := make([][]pairCount, chunkCount(len(nodes)))
	antiParts := make([][]pairCount, len(affParts))
	pl.parallelChunks(ctx, len(nodes), func(c, start, end int) {
		var aff, anti []pairCount
		// A term that needs a label key none of a node's pods carries
		// selects none of them: the node's key set (kept with its
		// NodeInfo) rules it out without reading its pods.
		antiOn := make([]bool, len(s.antiAffinityTerms))
		for _, ni := range nodes[start:end] {
			if len(ni.Pods) == 0 {
				continue
			}
			node := ni.Node()
			var keys map[string]struct{}
			if needKeys {
				keys = ni.PodLabelKeys()
			}
			affOn := len(s.affinityTerms) > 0
			for i := range s.affinityTerms {
				affOn = affOn && s.affinityTerms[i].mayMatchOn(keys)
			}
			anyAnti := false
			for i := range s.antiAffinityTerms {
				antiOn[i] = s.antiAffinityTerms[i].mayMatchOn(keys)
				anyAnti = anyAnti || antiOn[i]
			}
			if !affOn && !anyAnti {
				continue
			}
			for _, existing := range ni.Pods {
				if affOn && podMatchesAllTerms(s.affinityTerms, existing.Pod) {
					for i := range s.affinityTerms {
						aff = appendMatch(aff, node, s.affinityTerms[i].topologyKey, 1)
					}
				}
				for i := range s.antiAffinityTerms {
					if antiOn[i] && s.antiAffinityTerms[i].matches(existing.Pod) {
						anti = appendMatch(anti, node, s.antiAffinityTerms[i].topologyKey, 1)
					}
				}
			}
		}
		affParts[c], antiParts[c] = aff, anti
	})
	for c := range affParts {
		for _, pc := range affParts[c] {
			affinity[pc.pair] += pc.count
		}
		for _, pc := range antiParts[c] {
			antiAffinity[pc.pair] += pc.count
		}
	}
	return affinity, antiAffinity
}

// PreFilterExtensions returns the plugin: it keeps its counts right as pods
// are added and removed.
func (pl *InterPodAffinity) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod accounts for podInfoToAdd placed on nodeInfo's node: a reserved gang
// member, or a victim put back in a preemption what-if.
func (pl *InterPodAffinity) AddPod(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podInfoToAdd, nodeInfo.Node(), 1)
	return nil
}

// RemovePod accounts for podInfoToRemove leaving nodeInfo's node.
func (pl *InterPodAffinity) RemovePod(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podInfoToRemove, nodeInfo.Node(), -1)
	return nil
}

// getPreFilterState reads PreFilter's state; a missing one is reported in
// kube-scheduler's words.
func getPreFilterState(cycleState *framework.CycleState) (*preFilterState, error) {
	s, err := framework.ReadState[*preFilterState](cycleState, preFilterStateKey)
	if errors.Is(err, framework.ErrNotFound) {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preFilterStateKey, framework.ErrNotFound)
	}
	return s, err
}

// Filter checks, in kube-scheduler's order, the pod's required affinity
// (unresolvable by preemption), its required anti-affinity, and the required
// anti-affinity of the pods already running.
func (pl *InterPodAffinity) Filter(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	node := nodeInfo.Node()
	if node == nil {
		return framework.AsStatus(errors.New("node not found"))
	}
	if !s.satisfiesAffinity(node) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	}
	if !s.satisfiesAntiAffinity(node) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	}
	if !s.satisfiesExistingPodsAntiAffinity(node) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
	}
	return nil
}

// satisfiesAffinity: the node has every term's topology key, and one pod
// matching all terms runs in each of the node's domains; or no pod matching
// them runs anywhere and the pod matches its own terms (the first pod of a
// group that wants to run together may schedule itself).
func (s *preFilterState) satisfiesAffinity(node *corev1.Node) bool {
	if len(s.affinityTerms) == 0 {
		return true
	}
	podsExist := true
	for i := range s.affinityTerms {
		key := s.affinityTerms[i].topologyKey
		tv, ok := node.Labels[key]
		if !ok {
			return false
		}
		if s.affinityCounts[topologyPair{key: key, value: tv}] <= 0 {
			podsExist = false
		}
	}
	if !podsExist {
		return len(s.affinityCounts) == 0 && s.podMatchesOwnAffinity
	}
	return true
}

// satisfiesAntiAffinity: no pod the pod's anti-affinity selects runs in the
// node's domain of any term.
func (s *preFilterState) satisfiesAntiAffinity(node *corev1.Node) bool {
	if len(s.antiAffinityCounts) == 0 {
		return true
	}
	for i := range s.antiAffinityTerms {
		key := s.antiAffinityTerms[i].topologyKey
		if tv, ok := node.Labels[key]; ok && s.antiAffinityCounts[topologyPair{key: key, value: tv}] > 0 {
			return false
		}
	}
	return true
}

// satisfiesExistingPodsAntiAffinity: no running pod's required anti-affinity
// selects the pod within the node's domain.
func (s *preFilterState) satisfiesExistingPodsAntiAffinity(node *corev1.Node) bool {
	if len(s.existingAntiAffinityCounts) == 0 {
		return true
	}
	for _, key := range s.existingAntiAffinityKeys {
		if tv, ok := node.Labels[key]; ok && s.existingAntiAffinityCounts[topologyPair{key: key, value: tv}] > 0 {
			return false
		}
	}
	return true
}

var _ framework.DomainFilterPlugin = (*InterPodAffinity)(nil)

// FilterDomainKeys returns the topology keys of the pod's required terms and
// of the existing pods' required anti-affinity terms that select it: Filter
// looks at nothing of a node but their values.
func (pl *InterPodAffinity) FilterDomainKeys(cycleState *framework.CycleState) []string {
	s, err := getPreFilterState(cycleState)
	if err != nil || s == nil {
		return nil
	}
	keys := slices.Clone(s.existingAntiAffinityKeys)
	for _, terms := range [][]incomingTerm{s.affinityTerms, s.antiAffinityTerms} {
		for i := range terms {
			if !slices.Contains(keys, terms[i].topologyKey) {
				keys = append(keys, terms[i].topologyKey)
			}
		}
	}
	return keys
}

// FilterGlobal appends whether any pod matching the pod's affinity terms
// runs anywhere: without one, a pod matching its own terms may go anywhere.
func (pl *InterPodAffinity) FilterGlobal(cycleState *framework.CycleState, dst []int) []int {
	s, err := getPreFilterState(cycleState)
	if err != nil || s == nil {
		return dst
	}
	if len(s.affinityCounts) == 0 {
		return append(dst, 1)
	}
	return append(dst, 0)
}
