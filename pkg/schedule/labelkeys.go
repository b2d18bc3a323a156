package schedule

import (
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// selectedKeys is the set of pod label keys that some label selector of the
// cluster can read when a pod is scheduled: the selectors of the pod
// (anti-)affinity terms of every pod on a node or nominated to one, and
// those of the Services, ReplicationControllers, ReplicaSets and
// StatefulSets that give PodTopologySpread its default selector. A label
// whose key is not in it, nor in a selector of the pod itself, changes no
// plugin's verdict or score: pods that differ only in such labels (an
// Indexed Job's completion index, a rank) can share a class in a Sequence.
//
// A set is never changed once built; a reservation that brings new keys
// gives the Scheduler a new set with a new version, so class keys made
// under different sets never compare equal.
type selectedKeys struct {
	keys    sets.Set[string]
	version uint64
	// classKeys are the class keys made under the set, by pod: a pod is
	// never changed once read (docs/design.md#the-snapshot-file), so its
	// keys are too, and the what-ifs that place one gang again on forks
	// (which share the set) do not encode each member again. Equal keys
	// share one string (interned), and the memo starts again when it holds
	// maxClassKeys pods: what-ifs copy pods, and the set lives as long as
	// the scheduler.
	mu        sync.Mutex
	classKeys map[*corev1.Pod]podClassKeys
	interned  map[string]string
}

// maxClassKeys bounds selectedKeys' memo.
const maxClassKeys = 1 << 15

// podClassKeys are classKey's results for one pod.
type podClassKeys struct {
	score, full string
	ok          bool
}

// classKey is classKey(pod, sk), made once per pod.
func (sk *selectedKeys) classKey(pod *corev1.Pod) (score, full string, ok bool) {
	sk.mu.Lock()
	k, found := sk.classKeys[pod]
	sk.mu.Unlock()
	if found {
		return k.score, k.full, k.ok
	}
	k.score, k.full, k.ok = classKey(pod, sk)
	sk.mu.Lock()
	defer sk.mu.Unlock()
	if sk.classKeys == nil || len(sk.classKeys) >= maxClassKeys {
		sk.classKeys, sk.interned = map[*corev1.Pod]podClassKeys{}, map[string]string{}
	}
	k.score, k.full = sk.intern(k.score), sk.intern(k.full)
	sk.classKeys[pod] = k
	return k.score, k.full, k.ok
}

// intern returns the memo's string equal to v, keeping v when it has none.
func (sk *selectedKeys) intern(v string) string {
	if w, ok := sk.interned[v]; ok {
		return w
	}
	sk.interned[v] = v
	return v
}

// keySetVersions numbers the sets process-wide.
var keySetVersions atomic.Uint64

// selectedLabelKeys returns the scheduler's set, building it on first use.
func (s *Scheduler) selectedLabelKeys() *selectedKeys {
	if s.labelKeys != nil {
		return s.labelKeys
	}
	keys := sets.New[string]()
	for _, ni := range s.nodes {
		for _, pi := range ni.PodsWithAffinity {
			addTermKeys(keys, pi)
		}
	}
	for _, pis := range s.fw.nominator.byNode {
		for _, pi := range pis {
			addTermKeys(keys, pi)
		}
	}
	w := s.objects.Workloads
	for _, svc := range w.Services {
		for k := range svc.Spec.Selector {
			keys.Insert(k)
		}
	}
	for _, rc := range w.ReplicationControllers {
		for k := range rc.Spec.Selector {
			keys.Insert(k)
		}
	}
	for _, rs := range w.ReplicaSets {
		addLabelSelectorKeys(keys, rs.Spec.Selector)
	}
	for _, ss := range w.StatefulSets {
		addLabelSelectorKeys(keys, ss.Spec.Selector)
	}
	s.labelKeys = &selectedKeys{keys: keys, version: keySetVersions.Add(1)}
	return s.labelKeys
}

// noteReserved widens the scheduler's set with the keys the selectors of a
// reserved pod read: it is a pod on a node now, and its terms select the
// pods that come after it.
func (s *Scheduler) noteReserved(pi *framework.PodInfo) {
	if s.labelKeys == nil {
		return // built on first use, from the nodes' pods, this one included
	}
	added := sets.New[string]()
	addTermKeys(added, pi)
	if s.labelKeys.keys.IsSuperset(added) {
		return
	}
	s.labelKeys = &selectedKeys{keys: s.labelKeys.keys.Union(added), version: keySetVersions.Add(1)}
}

// addTermKeys adds the keys of a pod's (anti-)affinity term selectors.
func addTermKeys(keys sets.Set[string], pi *framework.PodInfo) {
	for _, terms := range [][]framework.AffinityTerm{pi.RequiredAffinityTerms, pi.RequiredAntiAffinityTerms} {
		for i := range terms {
			addSelectorKeys(keys, terms[i].Selector)
		}
	}
	for _, terms := range [][]framework.WeightedAffinityTerm{pi.PreferredAffinityTerms, pi.PreferredAntiAffinityTerms} {
		for i := range terms {
			addSelectorKeys(keys, terms[i].Selector)
		}
	}
	// A term that did not parse has no selector; its keys still count.
	addPodAffinityKeys(keys, pi.Pod)
}

func addSelectorKeys(keys sets.Set[string], sel labels.Selector) {
	if sel == nil {
		return
	}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		keys.Insert(r.Key())
	}
}

func addLabelSelectorKeys(keys sets.Set[string], ls *metav1.LabelSelector) {
	if ls == nil {
		return
	}
	for k := range ls.MatchLabels {
		keys.Insert(k)
	}
	for _, e := range ls.MatchExpressions {
		keys.Insert(e.Key)
	}
}

// addPodAffinityKeys adds the keys of a pod's own affinity terms as written
// in its spec, matchLabelKeys and mismatchLabelKeys included.
func addPodAffinityKeys(keys sets.Set[string], pod *corev1.Pod) {
	a := pod.Spec.Affinity
	if a == nil {
		return
	}
	add := func(t *corev1.PodAffinityTerm) {
		addLabelSelectorKeys(keys, t.LabelSelector)
		keys.Insert(t.MatchLabelKeys...)
		keys.Insert(t.MismatchLabelKeys...)
	}
	for _, pa := range []*corev1.PodAffinity{a.PodAffinity} {
		if pa == nil {
			continue
		}
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			add(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			add(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			add(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			add(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
}

// ownSelectorKeys are the label keys the pod's own selectors read: its
// topology spread constraints (matchLabelKeys included) and its pod
// (anti)-affinity terms. Whether a pod matches its own selector counts (a
// spread constraint counts the pod itself; an affinity term may be
// satisfied by the pod alone).
func ownSelectorKeys(pod *corev1.Pod) sets.Set[string] {
	keys := sets.New[string]()
	for i := range pod.Spec.TopologySpreadConstraints {
		c := &pod.Spec.TopologySpreadConstraints[i]
		addLabelSelectorKeys(keys, c.LabelSelector)
		keys.Insert(c.MatchLabelKeys...)
	}
	addPodAffinityKeys(keys, pod)
	return keys
}

// schedulingLabels returns the pod's labels whose keys a selector can read:
// those in sk or in the pod's own selectors. The others change nothing a
// plugin computes.
func schedulingLabels(pod *corev1.Pod, sk *selectedKeys) map[string]string {
	var own sets.Set[string]
	out := map[string]string{}
	for k, v := range pod.Labels {
		if sk.keys.Has(k) {
			out[k] = v
			continue
		}
		if own == nil {
			own = ownSelectorKeys(pod)
		}
		if own.Has(k) {
			out[k] = v
		}
	}
	return out
}

// schedulingSpec returns a copy of the spec without the fields no plugin
// reads that controllers set differently on each pod of one template: the
// hostname and subdomain (Indexed Jobs, StatefulSets, JobSet), and each
// container's command, arguments and environment (ranks, indexes). It also
// drops the node name.
func schedulingSpec(spec corev1.PodSpec) corev1.PodSpec {
	spec.NodeName = ""
	spec.Hostname, spec.Subdomain = "", ""
	spec.Containers = withoutProcess(spec.Containers)
	spec.InitContainers = withoutProcess(spec.InitContainers)
	return spec
}

func withoutProcess(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return cs
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		c.Command, c.Args, c.Env, c.EnvFrom = nil, nil, nil, nil
		out[i] = c
	}
	return out
}
