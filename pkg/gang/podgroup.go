package gang

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/version"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/queuesort"
)

// VolcanoDefaultQueue is the queue a Volcano PodGroup that names none goes to
// (the CRD's default for spec.queue).
const VolcanoDefaultQueue = "default"

// Unevaluated is one part of a group's definition that kubectl-gang cannot
// honour on a snapshot.
type Unevaluated struct {
	// Field is the field's path in the group object, e.g. "spec.networkTopology".
	Field string
	// Value is the field's value, briefly: "mode=hard highestTierAllowed=1".
	Value string
	// Reason says why it is not evaluated and what to do instead.
	Reason string
}

// String words it as explain, place and admit list it: "FIELD (VALUE): REASON".
func (u Unevaluated) String() string { return fmt.Sprintf("%s (%s): %s", u.Field, u.Value, u.Reason) }

// The reasons given for the fields kubectl-gang cannot evaluate.
const (
	UnevaluatedNetworkTopology = "Volcano places network topologies on HyperNodes, which the snapshot does not hold; " +
		"give --topology-key LABEL to keep the gang within one value of a node label instead"
	UnevaluatedSubGroupPolicy = "sub-group gangs (minSubGroups, per-sub-group topology) are not evaluated"
)

// SourceOfGroup returns the gang source whose PodGroups live in an API group.
func SourceOfGroup(group string) (Source, bool) {
	switch group {
	case schedule.NativeGroup:
		return SourceNative, true
	case schedule.VolcanoGroup:
		return SourceVolcano, true
	case schedule.CoschedulingGroup:
		return SourceCoscheduling, true
	}
	return "", false
}

// GroupNameOf returns the name of the PodGroup of source src that pod names
// through that source's membership key, or "" when it names none. Only the
// three PodGroup sources have membership keys.
func GroupNameOf(pod *corev1.Pod, src Source) string {
	switch src {
	case SourceNative:
		if sg := pod.Spec.SchedulingGroup; sg != nil && sg.PodGroupName != nil {
			return *sg.PodGroupName
		}
	case SourceVolcano:
		return pod.Annotations[VolcanoGroupAnnotation]
	case SourceCoscheduling:
		return pod.Labels[CoschedulingLabel]
	case SourceKueue:
		return pod.Labels[KueuePodGroupLabel]
	}
	return ""
}

// setGroupName makes pod a member of the PodGroup name of source src.
func setGroupName(pod *corev1.Pod, src Source, name string) {
	switch src {
	case SourceNative:
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
	case SourceVolcano:
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[VolcanoGroupAnnotation] = name
	case SourceCoscheduling:
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Labels[CoschedulingLabel] = name
	}
}

// TaskOf returns a pod's Volcano task name: the volcano.sh/task-spec
// annotation, else the label of that name (Volcano's job controller sets
// both), else "".
func TaskOf(pod *corev1.Pod) string {
	if t := pod.Annotations[VolcanoTaskAnnotation]; t != "" {
		return t
	}
	return pod.Labels[VolcanoTaskAnnotation]
}

// SortMembers puts the members in the order kube-scheduler's queue would take
// them (queuesort.Compare). Call it again after changing priorities, for
// example with ApplyPriorities.
func (g *Gang) SortMembers() {
	slices.SortStableFunc(g.Members, queuesort.Compare)
}

// SetTopologyKey makes key the gang's required topology, as --topology-key
// does. It stands in for a Volcano networkTopology, which is then no longer
// reported as unevaluated.
func (g *Gang) SetTopologyKey(key string) {
	g.TopologyKey = key
	g.Unevaluated = slices.DeleteFunc(g.Unevaluated, func(u Unevaluated) bool {
		return u.Field == "spec.networkTopology"
	})
}

// podGroupRef names a PodGroup in errors and listings: podgroups.<group>/<name>.
func podGroupRef(u *unstructured.Unstructured) string {
	return "podgroups." + u.GroupVersionKind().Group + "/" + u.GetName()
}

// fieldError is a malformed field of a group object.
type fieldError struct {
	object string // podgroups.scheduling.volcano.sh ml/train
	field  string // spec.minMember
	msg    string
}

func (e *fieldError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.object, e.field, e.msg)
}

// objectParser reads fields of one unstructured object and names it and the
// field in every error.
type objectParser struct {
	obj  map[string]any
	name string
}

func newObjectParser(u *unstructured.Unstructured) *objectParser {
	name := u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	gvk := u.GroupVersionKind()
	resource := strings.ToLower(gvk.Kind) + "s"
	if gvk.Group != "" {
		resource += "." + gvk.Group
	}
	return &objectParser{obj: u.Object, name: resource + " " + name}
}

func (p *objectParser) errorf(path []string, format string, args ...any) error {
	return &fieldError{object: p.name, field: strings.Join(path, "."), msg: fmt.Sprintf(format, args...)}
}

// get returns the value at path; found is false when it or a parent is absent
// or null. A parent that is not an object is an error.
func (p *objectParser) get(path ...string) (any, bool, error) {
	var cur any = p.obj
	for i, key := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, p.errorf(path[:i], "must be an object, got %s", describeValue(cur))
		}
		v, ok := m[key]
		if !ok || v == nil {
			return nil, false, nil
		}
		cur = v
	}
	return cur, true, nil
}

// int32At reads an integer field of at least minimum; def is returned when it is absent.
func (p *objectParser) int32At(def, minimum int32, path ...string) (int32, bool, error) {
	v, found, err := p.get(path...)
	if err != nil || !found {
		return def, false, err
	}
	n, err := toInt32(v)
	if err != nil {
		return 0, true, p.errorf(path, "%v", err)
	}
	if n < minimum {
		if minimum == 0 {
			return 0, true, p.errorf(path, "must not be negative, got %d", n)
		}
		return 0, true, p.errorf(path, "must be at least %d, got %d", minimum, n)
	}
	return n, true, nil
}

// stringAt reads a string field; "" when absent.
func (p *objectParser) stringAt(path ...string) (string, error) {
	v, found, err := p.get(path...)
	if err != nil || !found {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", p.errorf(path, "must be a string, got %s", describeValue(v))
	}
	return s, nil
}

// mapAt reads an object field; nil when absent.
func (p *objectParser) mapAt(path ...string) (map[string]any, error) {
	v, found, err := p.get(path...)
	if err != nil || !found {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, p.errorf(path, "must be an object, got %s", describeValue(v))
	}
	return m, nil
}

// sliceAt reads a list field; nil when absent.
func (p *objectParser) sliceAt(path ...string) ([]any, error) {
	v, found, err := p.get(path...)
	if err != nil || !found {
		return nil, err
	}
	l, ok := v.([]any)
	if !ok {
		return nil, p.errorf(path, "must be a list, got %s", describeValue(v))
	}
	return l, nil
}

// resourcesAt reads a ResourceList field; nil when absent.
func (p *objectParser) resourcesAt(path ...string) (corev1.ResourceList, error) {
	m, err := p.mapAt(path...)
	if err != nil || m == nil {
		return nil, err
	}
	out := corev1.ResourceList{}
	for _, name := range sortedKeys(m) {
		q, err := toQuantity(m[name])
		if err != nil {
			return nil, p.errorf(append(slices.Clone(path), name), "%v", err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// int32MapAt reads a map of non-negative integers, such as minTaskMember.
func (p *objectParser) int32MapAt(path ...string) (map[string]int32, error) {
	m, err := p.mapAt(path...)
	if err != nil || m == nil {
		return nil, err
	}
	out := make(map[string]int32, len(m))
	for _, k := range sortedKeys(m) {
		n, _, err := p.int32At(0, 0, append(slices.Clone(path), k)...)
		if err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, nil
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// toInt32 accepts the numbers JSON and YAML decoding produce (int64, whole
// float64) and the Go integers builders use.
func toInt32(v any) (int32, error) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int32:
		n = int64(x)
	case int:
		n = int64(x)
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("must be an integer, got %v", x)
		}
		if x > math.MaxInt32 || x < math.MinInt32 {
			return 0, fmt.Errorf("must fit in 32 bits, got %v", x)
		}
		n = int64(x)
	default:
		return 0, fmt.Errorf("must be an integer, got %s", describeValue(v))
	}
	if n > math.MaxInt32 || n < math.MinInt32 {
		return 0, fmt.Errorf("must fit in 32 bits, got %d", n)
	}
	return int32(n), nil
}

// toQuantity accepts a quantity string or a bare number, as the API server does.
func toQuantity(v any) (resource.Quantity, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	case int:
		s = strconv.Itoa(x)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return resource.Quantity{}, fmt.Errorf("must be a quantity, got %s", describeValue(v))
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("invalid quantity %q: %w", s, err)
	}
	return q, nil
}

func describeValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T %v", v, v)
}

// gangFromPodGroup reads a PodGroup of any source into a Gang without members.
func gangFromPodGroup(u *unstructured.Unstructured) (*Gang, error) {
	gvk := u.GroupVersionKind()
	src, ok := SourceOfGroup(gvk.Group)
	if !ok || gvk.Kind != schedule.PodGroupKind {
		return nil, fmt.Errorf("%s %s/%s is not a PodGroup of a supported gang source", gvk.Kind, u.GetNamespace(), u.GetName())
	}
	g := &Gang{Source: src, Namespace: u.GetNamespace(), Name: u.GetName(), PodGroup: u}
	p := newObjectParser(u)
	var err error
	switch src {
	case SourceNative:
		err = readNative(p, g)
	case SourceVolcano:
		err = readVolcano(p, g)
	case SourceCoscheduling:
		err = readCoscheduling(p, g)
	}
	if err != nil {
		return nil, err
	}
	return g, nil
}

// readNative reads a scheduling.k8s.io PodGroup. A group with the basic
// policy, or none, has no all-or-nothing minimum: one member is enough.
func readNative(p *objectParser, g *Gang) error {
	gang, err := p.mapAt("spec", "schedulingPolicy", "gang")
	if err != nil {
		return err
	}
	g.MinMember = 1
	if gang != nil {
		basic, err := p.mapAt("spec", "schedulingPolicy", "basic")
		if err != nil {
			return err
		}
		if basic != nil {
			return p.errorf([]string{"spec", "schedulingPolicy"}, "must set exactly one of basic and gang, both are set")
		}
		minCount, found, err := p.int32At(0, 1, "spec", "schedulingPolicy", "gang", "minCount")
		if err != nil {
			return err
		}
		if !found {
			return p.errorf([]string{"spec", "schedulingPolicy", "gang", "minCount"}, "is required")
		}
		g.MinMember = minCount
	}
	topology, err := p.sliceAt("spec", "schedulingConstraints", "topology")
	if err != nil {
		return err
	}
	switch len(topology) {
	case 0:
	case 1:
		path := []string{"spec", "schedulingConstraints", "topology[0]", "key"}
		constraint, ok := topology[0].(map[string]any)
		if !ok {
			return p.errorf(path[:3], "must be an object, got %s", describeValue(topology[0]))
		}
		key, ok := constraint["key"].(string)
		if !ok && constraint["key"] != nil {
			return p.errorf(path, "must be a string, got %s", describeValue(constraint["key"]))
		}
		if key == "" {
			return p.errorf(path, "is required")
		}
		g.TopologyKey = key
	default:
		return p.errorf([]string{"spec", "schedulingConstraints", "topology"},
			"holds %d constraints; only one is supported", len(topology))
	}
	return nil
}

// readVolcano reads a scheduling.volcano.sh PodGroup. An absent minMember is
// 0, as in Volcano (its CRD and webhooks default nothing; only PodGroups its
// controller creates for bare pods get 1): such a group has no gang minimum.
func readVolcano(p *objectParser, g *Gang) error {
	var err error
	if g.MinMember, _, err = p.int32At(0, 0, "spec", "minMember"); err != nil {
		return err
	}
	if g.MinTaskMember, err = p.int32MapAt("spec", "minTaskMember"); err != nil {
		return err
	}
	if g.MinResources, err = p.resourcesAt("spec", "minResources"); err != nil {
		return err
	}
	if g.Queue, err = p.stringAt("spec", "queue"); err != nil {
		return err
	}
	if g.Queue == "" {
		g.Queue = VolcanoDefaultQueue
	}
	nt, err := p.mapAt("spec", "networkTopology")
	if err != nil {
		return err
	}
	if nt != nil {
		mode, err := p.stringAt("spec", "networkTopology", "mode")
		if err != nil {
			return err
		}
		if mode == "" {
			mode = "hard" // the CRD's default
		}
		if mode != "hard" && mode != "soft" {
			return p.errorf([]string{"spec", "networkTopology", "mode"}, `must be "hard" or "soft", got %q`, mode)
		}
		value := "mode=" + mode
		tier, found, err := p.int32At(0, 0, "spec", "networkTopology", "highestTierAllowed")
		if err != nil {
			return err
		}
		if found {
			value += " highestTierAllowed=" + strconv.Itoa(int(tier))
		}
		tierName, err := p.stringAt("spec", "networkTopology", "highestTierName")
		if err != nil {
			return err
		}
		if tierName != "" {
			value += " highestTierName=" + tierName
		}
		g.Unevaluated = append(g.Unevaluated, Unevaluated{Field: "spec.networkTopology", Value: value, Reason: UnevaluatedNetworkTopology})
	}
	sub, err := p.sliceAt("spec", "subGroupPolicy")
	if err != nil {
		return err
	}
	if len(sub) > 0 {
		g.Unevaluated = append(g.Unevaluated, Unevaluated{Field: "spec.subGroupPolicy",
			Value: fmt.Sprintf("%d sub-group policies", len(sub)), Reason: UnevaluatedSubGroupPolicy})
	}
	return nil
}

// readCoscheduling reads a scheduling.x-k8s.io PodGroup. An absent minMember
// is 0, which coscheduling treats as no minimum.
func readCoscheduling(p *objectParser, g *Gang) error {
	var err error
	if g.MinMember, _, err = p.int32At(0, 0, "spec", "minMember"); err != nil {
		return err
	}
	g.MinResources, err = p.resourcesAt("spec", "minResources")
	return err
}

// preferVersion reports whether a should replace b when both are the same
// PodGroup served at two versions: the more stable, newer version wins.
func preferVersion(a, b *unstructured.Unstructured) bool {
	return version.CompareKubeAwareVersionStrings(a.GroupVersionKind().Version, b.GroupVersionKind().Version) > 0
}
