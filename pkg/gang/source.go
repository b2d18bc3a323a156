package gang

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/version"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/queuesort"
)

// Source says where a gang's definition comes from (docs/design.md#gangs).
// Each source's rules live in one file, source_<name>.go, and in one row of
// the table below; the rest of the gang core asks the table.
type Source string

// The gang sources.
const (
	// SourceNative is a scheduling.k8s.io PodGroup; members set spec.schedulingGroup.podGroupName.
	SourceNative Source = "scheduling.k8s.io"
	// SourceVolcano is a scheduling.volcano.sh PodGroup; members carry the
	// annotation scheduling.k8s.io/group-name.
	SourceVolcano Source = "scheduling.volcano.sh"
	// SourceCoscheduling is a scheduling.x-k8s.io PodGroup; members carry the
	// label scheduling.x-k8s.io/pod-group.
	SourceCoscheduling Source = "scheduling.x-k8s.io"
	// SourceKueue is a Kueue plain pod group: no PodGroup object; members
	// carry the label kueue.x-k8s.io/pod-group-name (KueuePodGroupLabel).
	SourceKueue Source = "kueue.x-k8s.io"
	// SourceSelector is an ad hoc gang: the pods a label selector picks.
	SourceSelector Source = "selector"
	// SourceFile is a what-if gang from manifests given with -f.
	SourceFile Source = "file"
	// SourcePod is a pod of no gang, explained or placed alone (LonePod).
	SourcePod Source = "pod"
)

// sourceRules is what kubectl-gang knows of one gang source, the way
// Volcano's scheduler keeps each concern in one plugin: how a pod names its
// group, how the group object is read, where the minimum is set, and the
// gate the source's scheduler applies before it places a member.
type sourceRules struct {
	source Source
	// group is the API group of the source's PodGroup; "" when the source
	// has no group object.
	group string
	// nameOf is the group a pod names through the source's membership key,
	// "" for none; setName makes a pod a member. Nil for sources whose
	// members are not named by a key (selector, file, pod).
	nameOf  func(*corev1.Pod) string
	setName func(*corev1.Pod, string)
	// read reads the source's PodGroup into g (minimum, topology, ...).
	read func(*fields.Reader, *Gang) error
	// minimumField names where the gang's minimum is set, for advice.
	minimumField string
	// gate is the source's own admission before placement; nil for none.
	gate func(snap *schedule.Snapshot, g *Gang, nodes []*framework.NodeInfo) *GateResult
	// missing says what to check when a snapshot holds none of the
	// source's PodGroups.
	missing string
	// held is how the source's scheduler words a member whose PodGroup
	// does not exist (name is the PodGroup's): it holds the pod pending
	// until the group is created.
	held func(name string) string
	// short words a gang with fewer valid members than its minimum, as
	// the source's scheduler says it; nil for Volcano's gang plugin's words.
	short func(g *Gang, v Validity) string
	// countsSucceeded: members that finished count toward the minimum.
	countsSucceeded bool
	// onePass, when set, says in the scheduler's terms that it tries each
	// pending member once, in its queue's order, in one cycle for the
	// whole group, so a member that needs another placed first fits only
	// when the queue happens to take that one first (placeOnePass). Empty:
	// a member is tried again once a member it needs is placed (placeWith).
	onePass string
}

// sources is the table of gang sources. Its PodGroup sources are in the
// order a pod's membership keys are tried (podGroupSources).
var sources = []*sourceRules{&nativeRules, &volcanoRules, &coschedulingRules, &kueueRules, &selectorRules, &fileRules, &podRules}

// podGroupSources are the sources with a PodGroup object, in precedence
// order: a pod that names groups of several is the first's member, as
// ResolvePod and the pending list take it. The one precedence list.
var podGroupSources = func() []*sourceRules {
	var out []*sourceRules
	for _, r := range sources {
		if r.group != "" {
			out = append(out, r)
		}
	}
	return out
}()

var (
	selectorRules = sourceRules{source: SourceSelector, minimumField: "--min-member", short: membersMissing}
	fileRules     = sourceRules{source: SourceFile, minimumField: "--min-member", short: membersMissing}
	podRules      = sourceRules{source: SourcePod, minimumField: "--min-member"}
)

// membersMissing words a gang no scheduler of its own holds (a selector's,
// a what-if's) that is short of members: first the members that do not
// exist, as a live workload counts the pods not created yet.
func membersMissing(g *Gang, v Validity) string {
	if n := g.Missing(); n > 0 {
		return fmt.Sprintf("%d member(s) do not exist: %d of minimum %d exist", n, g.MinMember-n, g.MinMember)
	}
	return fmt.Sprintf("only %d of minimum %d member(s) can count toward it (the others failed or are being deleted)", v.ValidCount, g.MinMember)
}

// Missing is how many members the minimum needs beyond those that exist
// (pending, running or finished ones that count): they have not been
// created, or the minimum is wrong. 0 when enough exist.
func (g *Gang) Missing() int32 {
	return max(0, g.MinMember-int32(len(g.Members)+len(g.Succeeded)))
}

// shortMessage words an invalid gang's shortfall in its source's words.
func (r *sourceRules) shortMessage(g *Gang, v Validity) string {
	if r.short != nil {
		return r.short(g, v)
	}
	return fmt.Sprintf("Not enough valid tasks for gang-scheduling, valid: %d, min: %d", v.ValidCount, g.MinMember)
}

// rulesOf is src's row of the table; an unknown source has no rules.
func rulesOf(src Source) *sourceRules {
	for _, r := range sources {
		if r.source == src {
			return r
		}
	}
	return &sourceRules{source: src}
}

// PodGroupGroups are the API groups of the supported PodGroups, in
// precedence order.
func PodGroupGroups() []string {
	out := make([]string, len(podGroupSources))
	for i, r := range podGroupSources {
		out[i] = r.group
	}
	return out
}

// SourceOfGroup returns the gang source whose PodGroups live in an API group.
func SourceOfGroup(group string) (Source, bool) {
	for _, r := range podGroupSources {
		if r.group == group {
			return r.source, true
		}
	}
	return "", false
}

// HasPodGroup reports whether the source's gangs are defined by a PodGroup object.
func (s Source) HasPodGroup() bool { return rulesOf(s).group != "" }

// MinimumField names where a gang of the source sets its minimum
// (spec.minMember, or the --min-member flag), for advice.
func (s Source) MinimumField() string { return rulesOf(s).minimumField }

// GroupNameOf returns the name of the group of source src that pod names
// through that source's membership key, or "" when it names none.
func GroupNameOf(pod *corev1.Pod, src Source) string {
	if r := rulesOf(src); r.nameOf != nil {
		return r.nameOf(pod)
	}
	return ""
}

// SetGroupName makes pod a member of the group name of source src (a
// what-if pod of a PodGroup from the manifests); other sources have no key.
func SetGroupName(pod *corev1.Pod, src Source, name string) {
	if r := rulesOf(src); r.setName != nil {
		r.setName(pod, name)
	}
}

// GroupsOf lists the PodGroups pod names through the PodGroup sources'
// membership keys, in precedence order, as refs in the pod's namespace.
func GroupsOf(pod *corev1.Pod) []Ref {
	var out []Ref
	for _, r := range podGroupSources {
		if name := r.nameOf(pod); name != "" {
			out = append(out, Ref{Namespace: pod.Namespace, Name: name, Group: r.group})
		}
	}
	return out
}

// LonePod is the gang of one that a pod of no gang is placed as.
func LonePod(pod *corev1.Pod) *Gang {
	return &Gang{Source: SourcePod, Namespace: pod.Namespace, Name: pod.Name, MinMember: 1, Members: []*corev1.Pod{pod}}
}

// IsLonePod reports whether g is a pod of no gang (LonePod).
func (g *Gang) IsLonePod() bool { return g.Source == SourcePod }

// NotEvaluatedField is one part of a group's definition that kubectl-gang cannot
// honour on a snapshot.
type NotEvaluatedField struct {
	// Field is the field's path in the group object, e.g. "spec.networkTopology".
	Field string
	// Value is the field's value, briefly: "mode=hard highestTierAllowed=1".
	Value string
	// Reason says why it is not evaluated and what to do instead.
	Reason string
}

// String words it as explain, place and admit list it: "FIELD (VALUE): REASON".
func (u NotEvaluatedField) String() string {
	return fmt.Sprintf("%s (%s): %s", u.Field, u.Value, u.Reason)
}

// SortMembers puts the members in the order kube-scheduler's queue would take
// them (queuesort.Compare). Call it again after changing priorities.
func (g *Gang) SortMembers() {
	slices.SortStableFunc(g.Members, queuesort.Compare)
}

// SetTopologyKey makes key the gang's required topology, as --topology-key
// does. It stands in for a topology the source places on objects the
// snapshot lacks, which is then no longer reported as notEvaluated.
func (g *Gang) SetTopologyKey(key string) {
	g.TopologyKey = key
	g.NotEvaluatedFields = slices.DeleteFunc(g.NotEvaluatedFields, func(u NotEvaluatedField) bool { return slices.Contains(topologyStandIns, u.Field) })
}

// topologyStandIns are the fields of group objects whose topology
// --topology-key stands in for.
var topologyStandIns = []string{volcanoNetworkTopology}

// podGroupRef names a PodGroup in errors and listings: podgroups.<group>/<name>.
func podGroupRef(u *unstructured.Unstructured) string {
	return "podgroups." + u.GroupVersionKind().Group + "/" + u.GetName()
}

// FromPodGroup reads a PodGroup of any source into a Gang without members.
// A malformed field is an error naming the object and the field.
func FromPodGroup(u *unstructured.Unstructured) (*Gang, error) {
	gvk := u.GroupVersionKind()
	src, ok := SourceOfGroup(gvk.Group)
	if !ok || gvk.Kind != schedule.PodGroupKind {
		return nil, fmt.Errorf("%s %s/%s is not a PodGroup of a supported gang source", gvk.Kind, u.GetNamespace(), u.GetName())
	}
	g := &Gang{Source: src, Namespace: u.GetNamespace(), Name: u.GetName(), PodGroup: u}
	if err := rulesOf(src).read(fields.New(u), g); err != nil {
		return nil, err
	}
	return g, nil
}

// preferVersion reports whether a should replace b when both are the same
// PodGroup served at two versions: the more stable, newer version wins.
func preferVersion(a, b *unstructured.Unstructured) bool {
	return version.CompareKubeAwareVersionStrings(a.GroupVersionKind().Version, b.GroupVersionKind().Version) > 0
}
