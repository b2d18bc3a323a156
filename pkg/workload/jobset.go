package workload

import (
	"cmp"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// JobSetGroup is the API group of JobSet (sigs.k8s.io/jobset); this build
// reads its v1alpha2, the version its current releases serve.
const (
	JobSetGroup   = "jobset.x-k8s.io"
	jobSetVersion = "v1alpha2"
)

// The labels and annotations the JobSet controller puts on child Jobs and
// their pods (labelAndAnnotateObject), and the ones of exclusive placement.
const (
	jobSetNameKey           = "jobset.sigs.k8s.io/jobset-name"
	jobSetUIDKey            = "jobset.sigs.k8s.io/jobset-uid"
	jobSetReplicatedJobKey  = "jobset.sigs.k8s.io/replicatedjob-name"
	jobSetRJobReplicasKey   = "jobset.sigs.k8s.io/replicatedjob-replicas"
	jobSetGlobalReplicasKey = "jobset.sigs.k8s.io/global-replicas"
	jobSetJobIndexKey       = "jobset.sigs.k8s.io/job-index"
	jobSetJobGlobalIndexKey = "jobset.sigs.k8s.io/job-global-index"
	jobSetJobKey            = "jobset.sigs.k8s.io/job-key"
	jobSetGroupNameKey      = "jobset.sigs.k8s.io/group-name"
	jobSetGroupReplicasKey  = "jobset.sigs.k8s.io/group-replicas"
	jobSetJobGroupIndexKey  = "jobset.sigs.k8s.io/job-group-index"
	jobSetRestartsKey       = "jobset.sigs.k8s.io/restart-attempt"
	jobSetPriorityKey       = "jobset.sigs.k8s.io/priority"
	// JobSetExclusiveKey asks for each child Job alone in one value of the
	// node label it names (on the JobSet or a replicated Job's template).
	JobSetExclusiveKey         = "alpha.jobset.sigs.k8s.io/exclusive-topology"
	jobSetNodeSelectorStrategy = "alpha.jobset.sigs.k8s.io/node-selector"
	jobSetNamespacedJobKey     = "alpha.jobset.sigs.k8s.io/namespaced-job"
	jobSetNoScheduleTaintKey   = "alpha.jobset.sigs.k8s.io/no-schedule"
	jobSetDefaultGroup         = "default"
)

// jobSetReplicatedJob is one of a JobSet's spec.replicatedJobs.
type jobSetReplicatedJob struct {
	Name      string                  `json:"name"`
	GroupName string                  `json:"groupName,omitempty"`
	Replicas  *int32                  `json:"replicas,omitempty"`
	Template  batchv1.JobTemplateSpec `json:"template"`
}

// jobSet is the part of a jobset.x-k8s.io/v1alpha2 JobSet that decides its
// pods.
type jobSet struct {
	Spec struct {
		ReplicatedJobs []jobSetReplicatedJob `json:"replicatedJobs"`
		Network        *struct {
			EnableDNSHostnames *bool  `json:"enableDNSHostnames,omitempty"`
			Subdomain          string `json:"subdomain,omitempty"`
		} `json:"network,omitempty"`
	} `json:"spec"`
}

// addJobSet adds the pods of every child Job a JobSet's controller creates:
// replicas (default 1) Jobs <jobset>-<replicatedJob>-<i> per replicated Job,
// each with the pods the Job controller creates at once, named
// <job>-<index>. The JobSet webhook's defaults apply (completionMode
// Indexed, restartPolicy OnFailure, DNS hostnames on: the subdomain is
// spec.network.subdomain or the JobSet's name), and the controller's labels
// and annotations. Exclusive placement (JobSetExclusiveKey) is the pod
// webhook's: see jobSetPodWebhook, applied once priorities are known. The
// node-selector strategy adds the nodeSelector and toleration the
// controller adds.
func (m *builder) addJobSet(obj *unstructured.Unstructured, ns, name, what string) error {
	if err := checkVersion(obj, schema.GroupVersion{Group: JobSetGroup, Version: jobSetVersion}, what); err != nil {
		return err
	}
	js := &jobSet{}
	if err := fromUnstructured(obj, js, what); err != nil {
		return err
	}
	rjobs := js.Spec.ReplicatedJobs
	if len(rjobs) == 0 {
		return fmt.Errorf("%s: spec.replicatedJobs is required", what)
	}
	replicas := func(i int) int32 { return ptr.Deref(rjobs[i].Replicas, 1) }
	global, groups, err := jobSetCounts(rjobs, what)
	if err != nil {
		return err
	}
	subdomain := ""
	if n := js.Spec.Network; n == nil || n.EnableDNSHostnames == nil || *n.EnableDNSHostnames {
		subdomain = name
		if n != nil && n.Subdomain != "" {
			subdomain = n.Subdomain
		}
	}
	exclusive := obj.GetAnnotations()[JobSetExclusiveKey]
	keys := map[string]bool{}
	nodeSelectorStrategy, strategyGiven := obj.GetAnnotations()[jobSetNodeSelectorStrategy]
	jobsBefore, groupBefore := 0, map[string]int{}
	for i := range rjobs {
		rjob := &rjobs[i]
		group := cmp.Or(rjob.GroupName, jobSetDefaultGroup)
		topology, strategy, hasStrategy := exclusive, nodeSelectorStrategy, strategyGiven
		if key, ok := rjob.Template.Annotations[JobSetExclusiveKey]; ok {
			topology = key
			strategy, hasStrategy = rjob.Template.Annotations[jobSetNodeSelectorStrategy]
		}
		if topology != "" && !hasStrategy {
			keys[topology] = true
		}
		spec := rjob.Template.Spec.DeepCopy()
		if spec.CompletionMode == nil {
			spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		}
		if spec.Template.Spec.RestartPolicy == "" {
			spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}
		for jobIdx := range int(replicas(i)) {
			jobName := fmt.Sprintf("%s-%s-%d", name, rjob.Name, jobIdx)
			meta := map[string]string{
				jobSetNameKey:           name,
				jobSetUIDKey:            "",
				jobSetReplicatedJobKey:  rjob.Name,
				jobSetRestartsKey:       "0",
				jobSetRJobReplicasKey:   strconv.Itoa(int(replicas(i))),
				jobSetGlobalReplicasKey: strconv.Itoa(global),
				jobSetJobIndexKey:       strconv.Itoa(jobIdx),
				jobSetJobKey:            sha1Hex(ns + "/" + jobName),
				jobSetJobGlobalIndexKey: strconv.Itoa(jobsBefore + jobIdx),
				jobSetGroupNameKey:      group,
				jobSetGroupReplicasKey:  strconv.Itoa(groups[group]),
				jobSetJobGroupIndexKey:  strconv.Itoa(groupBefore[group] + jobIdx),
			}
			tmpl := spec.Template.DeepCopy()
			tmpl.Labels = merged(tmpl.Labels, meta)
			tmpl.Annotations = merged(tmpl.Annotations, meta)
			if topology != "" {
				tmpl.Annotations[JobSetExclusiveKey] = topology
				if hasStrategy {
					tmpl.Annotations[jobSetNodeSelectorStrategy] = strategy
					tmpl.Spec.NodeSelector = merged(tmpl.Spec.NodeSelector, map[string]string{jobSetNamespacedJobKey: ns + "_" + jobName})
					tmpl.Spec.Tolerations = append(tmpl.Spec.Tolerations, corev1.Toleration{
						Key: jobSetNoScheduleTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
				}
			}
			if subdomain != "" {
				tmpl.Spec.Subdomain = subdomain
			}
			jobSpec := spec.DeepCopy()
			jobSpec.Template = *tmpl
			if err := m.addJobPods(ns, jobName, what, jobSpec, nil); err != nil {
				return err
			}
		}
		jobsBefore += int(replicas(i))
		groupBefore[group] += int(replicas(i))
	}
	// Placement follows each child Job's leader (completion index 0) to
	// every node kube-scheduler may put it on, its followers after it
	// (gang.SubGroups); Jobs with another key (rare) are left to their
	// affinities alone.
	if len(keys) > 0 {
		m.subGroups = append(m.subGroups, subGroupsOf{what: what, sg: &gang.SubGroups{Unit: "child Job", Label: jobSetJobKey,
			TopologyKey: slices.Min(slices.Collect(maps.Keys(keys))), Annotation: JobSetExclusiveKey,
			LeaderLabel: jobCompletionIndex, LeaderValue: "0"}})
	}
	return nil
}

// jobSetPodWebhook does what JobSet's pod webhook does to a pod of a child
// Job with exclusive placement (and no node-selector strategy) when it is
// created, after the Priority admission plugin: it records the priority
// in a label, gives the leader (completion index 0) a required pod affinity
// to its own Job's pods and a required anti-affinity to other Jobs' pods of
// the same priority, both on the exclusive topology key. The webhook pins a
// follower, created only once its leader is bound, to the leader's value
// of the key with a nodeSelector; a what-if cannot know that value, so the
// follower gets the equivalent: a required affinity to its Job's pods on
// the key. Members sort leaders first (<job>-0), so each Job's leader is
// placed before its followers, as the webhook's order has it.
func jobSetPodWebhook(pod *corev1.Pod) {
	if _, ok := pod.Annotations[jobSetNameKey]; !ok {
		return
	}
	if _, ok := pod.Annotations[jobSetNodeSelectorStrategy]; ok {
		return
	}
	if pod.Spec.Priority != nil {
		pod.Labels[jobSetPriorityKey] = strconv.Itoa(int(*pod.Spec.Priority))
	}
	key, ok := pod.Annotations[JobSetExclusiveKey]
	if !ok {
		return
	}
	// JobSet's terms match pods of every namespace; the leader's
	// anti-affinity only pods of its priority.
	affinity, anti := exclusiveTerms(jobSetJobKey, pod.Labels[jobSetJobKey], key, &metav1.LabelSelector{},
		metav1.LabelSelectorRequirement{Key: jobSetPriorityKey, Operator: metav1.LabelSelectorOpIn, Values: []string{pod.Labels[jobSetPriorityKey]}})
	if pod.Annotations[jobCompletionIndex] != "0" {
		requireTerms(pod, affinity)
		return
	}
	requireTerms(pod, affinity, anti)
}

// exclusiveTerms are the required terms the workloads' webhooks use for
// exclusive placement on key (JobSet's setExclusiveAffinities, LWS's
// SetExclusiveAffinities): an affinity to the pods whose label holds value,
// and an anti-affinity to pods whose label holds another value (and that
// meet extra), both in the namespaces namespaces selects (nil: the pod's).
func exclusiveTerms(label, value, key string, namespaces *metav1.LabelSelector, extra ...metav1.LabelSelectorRequirement) (affinity, anti corev1.PodAffinityTerm) {
	affinity = corev1.PodAffinityTerm{TopologyKey: key, NamespaceSelector: namespaces,
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: label, Operator: metav1.LabelSelectorOpIn, Values: []string{value}}}}}
	anti = corev1.PodAffinityTerm{TopologyKey: key, NamespaceSelector: namespaces,
		LabelSelector: &metav1.LabelSelector{MatchExpressions: append([]metav1.LabelSelectorRequirement{
			{Key: label, Operator: metav1.LabelSelectorOpExists},
			{Key: label, Operator: metav1.LabelSelectorOpNotIn, Values: []string{value}}}, extra...)}}
	return affinity, anti
}

// requireTerms adds a required pod affinity term and, when given, a
// required anti-affinity term to pod.
func requireTerms(pod *corev1.Pod, affinity corev1.PodAffinityTerm, anti ...corev1.PodAffinityTerm) {
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	a := pod.Spec.Affinity
	if a.PodAffinity == nil {
		a.PodAffinity = &corev1.PodAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, affinity)
	if len(anti) == 0 {
		return
	}
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, anti...)
}

// ApplyWebhooks does to what-if pods what the workload controllers'
// admission webhooks do when the pods are created, after ApplyPriorities
// (the Priority admission plugin runs first): JobSet's exclusive placement.
func ApplyWebhooks(pods []*corev1.Pod) {
	for _, pod := range pods {
		jobSetPodWebhook(pod)
	}
}

// sha1Hex is the JobSet controller's job key: the SHA-1 of namespace/job.
func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// merged returns base with extra's entries added (a new map).
func merged(base, extra map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(extra))
	maps.Copy(out, base)
	maps.Copy(out, extra)
	return out
}

// jobSetCounts checks the replicated Jobs' names and replicas and counts
// the child Jobs: in all (global), and per group.
func jobSetCounts(rjobs []jobSetReplicatedJob, what string) (global int, groups map[string]int, err error) {
	groups = map[string]int{}
	for i := range rjobs {
		replicas := ptr.Deref(rjobs[i].Replicas, 1)
		if rjobs[i].Name == "" {
			return 0, nil, fmt.Errorf("%s: spec.replicatedJobs[%d].name is required", what, i)
		}
		if replicas < 0 {
			return 0, nil, fmt.Errorf("%s: spec.replicatedJobs[%d].replicas must not be negative, got %d", what, i, replicas)
		}
		global += int(replicas)
		groups[cmp.Or(rjobs[i].GroupName, jobSetDefaultGroup)] += int(replicas)
	}
	return global, groups, nil
}
