package gang

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/version"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/queuesort"
)

// Source says where a gang's definition comes from (docs/design.md#gangs):
// a gang system (System) registered by its wing, or one of the gang core's
// own keyless sources below.
type Source string

// The gang core's own sources. The gang systems' are their wings'.
const (
	// SourceNative is a scheduling.k8s.io PodGroup; members set spec.schedulingGroup.podGroupName.
	SourceNative Source = "scheduling.k8s.io"
	// SourceSelector is an ad hoc gang: the pods a label selector picks.
	SourceSelector Source = "selector"
	// SourceFile is a what-if gang from manifests given with -f.
	SourceFile Source = "file"
	// SourcePod is a pod of no gang, explained or placed alone (LonePod).
	SourcePod Source = "pod"
)

// MembersMissing words a gang no scheduler of its own holds (a selector's,
// a what-if's) that is short of members: first the members that do not
// exist, as a live workload counts the pods not created yet. A wing whose
// scheduler words it so returns it from Short.
func MembersMissing(g *Gang, v Validity) string {
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

// shortMessage words an invalid gang's shortfall in its system's words,
// else in the gang core's (those of the gang plugin whose validity the
// core's follows, ValidateWith).
func shortMessage(g *Gang, v Validity) string {
	if s := SystemOf(g.Source); s != nil {
		if m := s.Short(g, v); m != "" {
			return m
		}
	}
	return fmt.Sprintf("Not enough valid tasks for gang-scheduling, valid: %d, min: %d", v.ValidCount, g.MinMember)
}

// podGroupSystems are the registered systems with a group object, in rank
// order: a pod that names groups of several is the first's member, as
// ResolvePod and the pending list take it. The one precedence list.
func podGroupSystems() []registered { return registry.podGroup }

// PodGroupGroups are the API groups of the supported PodGroups, in
// precedence order.
func PodGroupGroups() []string {
	var out []string
	for _, k := range podGroupSystems() {
		out = append(out, k.rules.Group)
	}
	return out
}

// SourceOfGroup returns the gang source whose PodGroups live in an API group.
func SourceOfGroup(group string) (Source, bool) {
	for _, k := range podGroupSystems() {
		if k.rules.Group == group {
			return k.rules.Source, true
		}
	}
	return "", false
}

// HasPodGroup reports whether the source's gangs are defined by a PodGroup object.
func (s Source) HasPodGroup() bool { return rulesOf(s).Group != "" }

// MinimumField names where a gang of the source sets its minimum
// (spec.minMember, or the --min-member flag), for advice.
func (s Source) MinimumField() string { return rulesOf(s).MinimumField }

// GroupNameOf returns the name of the group of source src that pod names
// through that source's membership key, or "" when it names none.
func GroupNameOf(pod *corev1.Pod, src Source) string {
	if s := SystemOf(src); s != nil {
		return s.NameOf(pod)
	}
	return ""
}

// SetGroupName makes pod a member of the group name of source src (a
// what-if pod of a PodGroup from the manifests); other sources have no key.
func SetGroupName(pod *corev1.Pod, src Source, name string) {
	if s := SystemOf(src); s != nil {
		s.SetName(pod, name)
	}
}

// GroupsOf lists the PodGroups pod names through the PodGroup sources'
// membership keys, in precedence order, as refs in the pod's namespace.
func GroupsOf(pod *corev1.Pod) []Ref {
	var out []Ref
	for _, k := range registry.keyed {
		if k.rules.Group == "" {
			continue
		}
		if name := k.system.NameOf(pod); name != "" {
			out = append(out, Ref{Namespace: pod.Namespace, Name: name, Group: k.rules.Group})
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
	g.NotEvaluatedFields = slices.DeleteFunc(g.NotEvaluatedFields, func(u NotEvaluatedField) bool { return slices.Contains(topologyStandIns(), u.Field) })
}

// topologyStandIns are the fields of group objects whose topology
// --topology-key stands in for.
func topologyStandIns() []string {
	var out []string
	for _, k := range registry.keyed {
		if f := k.rules.TopologyStandIn; f != "" {
			out = append(out, f)
		}
	}
	return out
}

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
	if err := SystemOf(src).Read(fields.New(u), g); err != nil {
		return nil, err
	}
	return g, nil
}

// preferVersion reports whether a should replace b when both are the same
// PodGroup served at two versions: the more stable, newer version wins.
func preferVersion(a, b *unstructured.Unstructured) bool {
	return version.CompareKubeAwareVersionStrings(a.GroupVersionKind().Version, b.GroupVersionKind().Version) > 0
}
