package workload

import (
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// LeaderWorkerSetGroup is the API group of LeaderWorkerSet (sigs.k8s.io/lws);
// this build reads its v1, the version its releases serve.
const (
	LeaderWorkerSetGroup = "leaderworkerset.x-k8s.io"
	lwsVersion           = "v1"
)

// The labels and annotations the LeaderWorkerSet controller and its pod
// webhook put on a group's pods.
const (
	lwsNameKey             = "leaderworkerset.sigs.k8s.io/name"
	lwsGroupIndexKey       = "leaderworkerset.sigs.k8s.io/group-index"
	lwsWorkerIndexKey      = "leaderworkerset.sigs.k8s.io/worker-index"
	lwsGroupKey            = "leaderworkerset.sigs.k8s.io/group-key"
	lwsRevisionKey         = "leaderworkerset.sigs.k8s.io/template-revision-hash"
	lwsSizeKey             = "leaderworkerset.sigs.k8s.io/size"
	lwsLeaderNameKey       = "leaderworkerset.sigs.k8s.io/leader-name"
	lwsSubGroupIndexKey    = "leaderworkerset.sigs.k8s.io/subgroup-index"
	lwsSubGroupKey         = "leaderworkerset.sigs.k8s.io/subgroup-key"
	lwsSubGroupSizeKey     = "leaderworkerset.sigs.k8s.io/subgroup-size"
	lwsSubGroupPolicyKey   = "leaderworkerset.sigs.k8s.io/subgroup-policy-type"
	lwsSubdomainPolicyKey  = "leaderworkerset.sigs.k8s.io/subdomainPolicy"
	lwsLeaderExcluded      = "LeaderExcluded"
	lwsUniquePerReplica    = "UniquePerReplica"
	LWSExclusiveKey        = "leaderworkerset.sigs.k8s.io/exclusive-topology"
	LWSSubGroupExclusive   = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
	lwsVolumeClaimsSkipped = "the claims a LeaderWorkerSet creates for its pods are not in the snapshot; " +
		"the what-if pods are placed without those volumes"
)

// leaderWorkerSet is the part of a leaderworkerset.x-k8s.io/v1
// LeaderWorkerSet that decides its pods.
type leaderWorkerSet struct {
	Spec struct {
		Replicas             *int32 `json:"replicas,omitempty"`
		LeaderWorkerTemplate struct {
			LeaderTemplate *corev1.PodTemplateSpec `json:"leaderTemplate,omitempty"`
			WorkerTemplate corev1.PodTemplateSpec  `json:"workerTemplate"`
			Size           *int32                  `json:"size,omitempty"`
			SubGroupPolicy *struct {
				Type         *string `json:"subGroupPolicyType,omitempty"`
				SubGroupSize *int32  `json:"subGroupSize,omitempty"`
			} `json:"subGroupPolicy,omitempty"`
			VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`
		} `json:"leaderWorkerTemplate"`
		NetworkConfig *struct {
			SubdomainPolicy *string `json:"subdomainPolicy,omitempty"`
		} `json:"networkConfig,omitempty"`
	} `json:"spec"`
}

// lwsGroup is what a group's pods share.
type lwsGroup struct {
	lws, ns, leader    string
	size, subGroupSize int
	leaderExcluded     bool
	subdomain          string
	annotations        map[string]string
}

// addLeaderWorkerSet adds the pods of every group of a LeaderWorkerSet:
// replicas (default 1) groups of size (default 1) pods. The leader
// StatefulSet <lws> makes leader <lws>-<i> from the leader template (the
// worker template when there is none); the leader's worker StatefulSet
// <lws>-<i> makes workers <lws>-<i>-<j>, j from 1 to size-1. Each pod
// gets what the controllers and the pod webhook give it (the
// StatefulSets' hostname, subdomain and pod-name/pod-index labels; name,
// group-index, worker-index, group-key = sha1(namespace/leader), size,
// leader-name, the exclusive-topology annotations, sub-group index and
// key); the template-revision-hash label is empty, as the ControllerRevision
// it names does not exist yet. With exclusive-topology the leader gets the
// webhook's required affinity to its group's key and anti-affinity to
// other groups' keys; the webhook's nodeSelector pins workers to the
// leader's value once it is bound, which a what-if cannot know, so they get
// the equivalent: a required affinity to the group's key on the topology
// key. Sub-group exclusivity gives every member of a sub-group both terms
// on the sub-group key, as the webhook does.
//
// Each group is placed whole or not at all (the unit of LWS's gang
// scheduling providers, whose PodGroup per group asks for size members);
// with exclusive-topology its leader is placed first, on every node
// kube-scheduler may pick for it, and its workers after it in the
// leader's value (LWS's pod controller creates the workers' StatefulSet
// only once the leader is bound, with a nodeSelector for that value:
// setNodeSelectorForWorkerPods), and sub-groups likewise within it
// (gang.SubGroups). The gang's minimum stays every pod:
// the question -f answers is whether the whole set fits.
func (m *builder) addLeaderWorkerSet(obj *unstructured.Unstructured, ns, name, what string) error {
	if err := checkVersion(obj, schema.GroupVersion{Group: LeaderWorkerSetGroup, Version: lwsVersion}, what); err != nil {
		return err
	}
	lws := &leaderWorkerSet{}
	if err := fromUnstructured(obj, lws, what); err != nil {
		return err
	}
	t := &lws.Spec.LeaderWorkerTemplate
	replicas, size := ptr.Deref(lws.Spec.Replicas, 1), ptr.Deref(t.Size, 1)
	if replicas < 0 {
		return fmt.Errorf("%s: spec.replicas must not be negative, got %d", what, replicas)
	}
	if size < 1 {
		return fmt.Errorf("%s: spec.leaderWorkerTemplate.size must be at least 1, got %d", what, size)
	}
	subGroupSize, leaderExcluded := 0, false
	if sp := t.SubGroupPolicy; sp != nil {
		subGroupSize = int(ptr.Deref(sp.SubGroupSize, 0))
		leaderExcluded = ptr.Deref(sp.Type, "") == lwsLeaderExcluded
		if subGroupSize < 1 || subGroupSize > int(size) || (int(size)%subGroupSize != 0 && (int(size)-1)%subGroupSize != 0) {
			return fmt.Errorf("%s: spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize must divide size (%d) or size-1, got %d", what, size, subGroupSize)
		}
	}
	if len(t.VolumeClaimTemplates) > 0 {
		m.notEvaluated = append(m.notEvaluated, gang.NotEvaluatedField{Field: "spec.leaderWorkerTemplate.volumeClaimTemplates",
			Value: fmt.Sprintf("LeaderWorkerSet %s: %d claim templates", name, len(t.VolumeClaimTemplates)), Reason: lwsVolumeClaimsSkipped})
	}
	uniqueSubdomain := lws.Spec.NetworkConfig != nil && ptr.Deref(lws.Spec.NetworkConfig.SubdomainPolicy, "") == lwsUniquePerReplica
	leaderTmpl := &t.WorkerTemplate
	if t.LeaderTemplate != nil {
		leaderTmpl = t.LeaderTemplate
	}
	annotations := map[string]string{lwsSizeKey: strconv.Itoa(int(size))}
	exclusive, subExclusive := obj.GetAnnotations()[LWSExclusiveKey], ""
	if exclusive != "" {
		annotations[LWSExclusiveKey] = exclusive
	}
	if t.SubGroupPolicy != nil {
		annotations[lwsSubGroupPolicyKey] = ptr.Deref(t.SubGroupPolicy.Type, "LeaderWorker")
		annotations[lwsSubGroupSizeKey] = strconv.Itoa(subGroupSize)
		if subExclusive = obj.GetAnnotations()[LWSSubGroupExclusive]; subExclusive != "" {
			annotations[LWSSubGroupExclusive] = subExclusive
		}
	}
	for i := range int(replicas) {
		g := &lwsGroup{lws: name, ns: ns, leader: fmt.Sprintf("%s-%d", name, i), size: int(size), subGroupSize: subGroupSize,
			leaderExcluded: leaderExcluded, subdomain: name, annotations: annotations}
		if uniqueSubdomain {
			g.subdomain = g.leader
		}
		if err := m.addLWSGroup(g, i, leaderTmpl, &t.WorkerTemplate, uniqueSubdomain); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	sg := &gang.SubGroups{Unit: "LeaderWorkerSet group", Label: lwsGroupKey, TopologyKey: exclusive, Whole: true,
		LeaderLabel: lwsWorkerIndexKey, LeaderValue: "0"}
	if subExclusive != "" {
		sg.Inner = &gang.SubGroups{Unit: "LeaderWorkerSet sub-group", Label: lwsSubGroupKey, TopologyKey: subExclusive, Annotation: LWSSubGroupExclusive}
	}
	m.subGroups = append(m.subGroups, subGroupsOf{what: what, sg: sg})
	return nil
}

// addLWSGroup adds group i: its leader, then its workers.
func (m *builder) addLWSGroup(g *lwsGroup, i int, leaderTmpl, workerTmpl *corev1.PodTemplateSpec, uniqueSubdomain bool) error {
	groupKey := sha1Hex(g.ns + "/" + g.leader)
	leader := podFromTemplate(leaderTmpl, g.ns, g.leader)
	m.lwsPod(g, leader, i, 0, groupKey)
	if uniqueSubdomain {
		leader.Annotations[lwsSubdomainPolicyKey] = lwsUniquePerReplica
	}
	if err := m.addPod(leader); err != nil {
		return err
	}
	for j := 1; j < g.size; j++ {
		worker := podFromTemplate(workerTmpl, g.ns, fmt.Sprintf("%s-%d", g.leader, j))
		m.lwsPod(g, worker, i, j, groupKey)
		worker.Annotations[lwsLeaderNameKey] = g.leader
		if err := m.addPod(worker); err != nil {
			return err
		}
	}
	return nil
}

// lwsPod gives pod (worker j of group i, the leader when j is 0) what the
// StatefulSet controller, the LWS controller and its pod webhook give it.
func (m *builder) lwsPod(g *lwsGroup, pod *corev1.Pod, i, j int, groupKey string) {
	ordinal := i
	if j > 0 {
		ordinal = j
	}
	pod.Labels = merged(pod.Labels, map[string]string{
		lwsNameKey: g.lws, lwsGroupIndexKey: strconv.Itoa(i), lwsWorkerIndexKey: strconv.Itoa(j),
		lwsGroupKey: groupKey, lwsRevisionKey: "",
		statefulSetPodName: pod.Name, statefulSetPodIndex: strconv.Itoa(ordinal),
	})
	pod.Annotations = merged(pod.Annotations, g.annotations)
	// The leader's subdomain is the LWS (its StatefulSet's service) or,
	// UniquePerReplica, its own name (the webhook): the workers' either way.
	pod.Spec.Hostname, pod.Spec.Subdomain = pod.Name, g.subdomain
	if key := g.annotations[LWSExclusiveKey]; key != "" {
		addExclusiveTerms(pod, lwsGroupKey, groupKey, key, j == 0)
	}
	if g.subGroupSize == 0 || (j == 0 && g.leaderExcluded) {
		return
	}
	sub := "0"
	if j > 0 {
		sub = lwsSubGroupIndex(g.size, g.subGroupSize, j)
	}
	subKey := sha1Hex(g.leader + "/" + sub)
	pod.Labels[lwsSubGroupIndexKey], pod.Labels[lwsSubGroupKey] = sub, subKey
	if key := g.annotations[LWSSubGroupExclusive]; key != "" {
		addExclusiveTerms(pod, lwsSubGroupKey, subKey, key, true)
	}
}

// lwsSubGroupIndex is the LWS pod webhook's sub-group of worker j in a
// group of size pods: when size-1 divides into sub-groups and size does
// not, the leader is the first sub-group's extra pod.
func lwsSubGroupIndex(size, subGroupSize, j int) string {
	if (size-1)%subGroupSize == 0 && size%subGroupSize != 0 {
		return strconv.Itoa((j - 1) / subGroupSize)
	}
	return strconv.Itoa(j / subGroupSize)
}

// addExclusiveTerms adds LWS's SetExclusiveAffinities terms on key
// (exclusiveTerms; both only when exclusive, the affinity alone
// otherwise), unless the pod already has terms on key, as the webhook
// checks (exclusiveAffinityApplied).
func addExclusiveTerms(pod *corev1.Pod, label, value, key string, exclusive bool) {
	if a := pod.Spec.Affinity; a != nil && a.PodAffinity != nil && hasTermOn(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, key) &&
		(!exclusive || (a.PodAntiAffinity != nil && hasTermOn(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, key))) {
		return
	}
	affinity, anti := exclusiveTerms(label, value, key, nil)
	if !exclusive {
		requireTerms(pod, affinity)
		return
	}
	requireTerms(pod, affinity, anti)
}

func hasTermOn(terms []corev1.PodAffinityTerm, key string) bool {
	return slices.ContainsFunc(terms, func(t corev1.PodAffinityTerm) bool { return t.TopologyKey == key })
}
