package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// decoded is the generated file read back into typed objects.
type decoded struct {
	namespaces []*corev1.Namespace
	classes    []*schedulingv1.PriorityClass
	nodes      []*corev1.Node
	quotas     []*corev1.ResourceQuota
	groups     []*schedulingv1beta1.PodGroup
	pods       []*corev1.Pod
}

func decodeFile(t *testing.T, data []byte) *decoded {
	t.Helper()
	for _, bad := range []string{"managedFields", ": null", "creationTimestamp: null"} {
		if bytes.Contains(data, []byte(bad)) {
			t.Errorf("output contains %q", bad)
		}
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	var list metav1.List
	if err := yaml.Unmarshal(js, &list); err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != "v1" || list.Kind != "List" {
		t.Fatalf("top level is %s %s, want v1 List", list.APIVersion, list.Kind)
	}
	// Strict: unknown or duplicate fields fail the decode.
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	d := &decoded{}
	for i, item := range list.Items {
		obj, gvk, err := dec.Decode(item.Raw, nil, nil)
		if err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		if gvk.Kind == "" || gvk.Version == "" {
			t.Fatalf("item %d has no apiVersion/kind", i)
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			t.Fatalf("item %d (%s) has no metadata", i, gvk.Kind)
		}
		if created := m.GetCreationTimestamp(); m.GetUID() == "" || m.GetResourceVersion() == "" || created.IsZero() {
			t.Errorf("item %d (%s): missing uid, resourceVersion or creationTimestamp", i, gvk.Kind)
		}
		switch o := obj.(type) {
		case *corev1.Namespace:
			d.namespaces = append(d.namespaces, o)
		case *schedulingv1.PriorityClass:
			d.classes = append(d.classes, o)
		case *corev1.Node:
			d.nodes = append(d.nodes, o)
		case *corev1.ResourceQuota:
			d.quotas = append(d.quotas, o)
		case *schedulingv1beta1.PodGroup:
			d.groups = append(d.groups, o)
		case *corev1.Pod:
			d.pods = append(d.pods, o)
		default:
			t.Fatalf("item %d: unexpected %T", i, obj)
		}
	}
	return d
}

func TestDeterministic(t *testing.T) {
	a, err := render()
	if err != nil {
		t.Fatal(err)
	}
	b, err := render()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("two renders differ")
	}
	if len(a) > 260_000 {
		t.Errorf("output is %d bytes, want it compact", len(a))
	}
}

// TestCommittedExampleUpToDate checks examples/gpu-cluster.yaml is what the
// generator writes now.
func TestCommittedExampleUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", "examples", "gpu-cluster.yaml")
	have, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skip(path + " not generated")
	}
	if err != nil {
		t.Fatal(err)
	}
	want, err := render()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatalf("%s is stale: run go run ./hack/examplegen -out examples/gpu-cluster.yaml", path)
	}
}

// TestWriteAndDecode runs the command into a temporary directory and reads
// the file back.
func TestWriteAndDecode(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sub", "cluster.yaml")
	if err := run([]string{"-out", out}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeFile(t, data)
	if len(d.namespaces) != 4 || len(d.classes) != 5 || len(d.quotas) != 1 || len(d.groups) != 1 {
		t.Errorf("namespaces %d, priority classes %d, quotas %d, pod groups %d; want 4, 5, 1, 1",
			len(d.namespaces), len(d.classes), len(d.quotas), len(d.groups))
	}
}

func gpuCount(l corev1.ResourceList) int64 {
	v := l[gpuResource]
	return v.Value()
}

func podRequests(p *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		for k, v := range c.Resources.Requests {
			s := sum[k]
			s.Add(v)
			sum[k] = s
		}
	}
	sum[corev1.ResourcePods] = resource.MustParse("1")
	return sum
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// tolerates reports whether the pod tolerates the NoSchedule and NoExecute
// taints of the node.
func tolerates(p *corev1.Pod, n *corev1.Node) bool {
	for _, taint := range n.Spec.Taints {
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		ok := false
		for _, tol := range p.Spec.Tolerations {
			if toleratesTaint(tol, taint) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// toleratesTaint is Toleration.ToleratesTaint for the Exists and Equal
// operators.
func toleratesTaint(tol corev1.Toleration, taint corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != taint.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != taint.Key {
		return false
	}
	switch tol.Operator {
	case corev1.TolerationOpExists:
		return true
	case "", corev1.TolerationOpEqual:
		return tol.Key != "" && tol.Value == taint.Value
	}
	return false
}

// affinityMatches handles the In expressions the scenario uses.
func affinityMatches(p *corev1.Pod, n *corev1.Node) bool {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		all := true
		for _, e := range term.MatchExpressions {
			v, ok := n.Labels[e.Key]
			if e.Operator != corev1.NodeSelectorOpIn || !ok || !contains(e.Values, v) {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// fits reports whether pod p fits node n (schedulable, taints, affinity,
// resources) given the non-terminal pods bound there minus those evicted.
func fits(p *corev1.Pod, n *corev1.Node, bound []*corev1.Pod, evict func(*corev1.Pod) bool) bool {
	if n.Spec.Unschedulable || !tolerates(p, n) || !affinityMatches(p, n) {
		return false
	}
	free := n.Status.Allocatable.DeepCopy()
	for _, b := range bound {
		if evict != nil && evict(b) {
			continue
		}
		for k, v := range podRequests(b) {
			f := free[k]
			f.Sub(v)
			free[k] = f
		}
	}
	for k, v := range podRequests(p) {
		f, ok := free[k]
		if !ok || f.Cmp(v) < 0 {
			return false
		}
	}
	return true
}

func TestScenario(t *testing.T) {
	data, err := render()
	if err != nil {
		t.Fatal(err)
	}
	d := decodeFile(t, data)

	nodes := map[string]*corev1.Node{}
	roles := map[string]int{}
	gpuPerZone := map[string]int{}
	for _, n := range d.nodes {
		nodes[n.Name] = n
		switch {
		case n.Labels[gpuProduct] != "":
			roles["gpu"]++
			gpuPerZone[n.Labels[zoneKey]]++
			if gpuCount(n.Status.Allocatable) != 8 || n.Labels[blockKey] == "" {
				t.Errorf("GPU node %s: allocatable GPUs %d, block %q", n.Name, gpuCount(n.Status.Allocatable), n.Labels[blockKey])
			}
		case hasLabel(n, "node-role.kubernetes.io/control-plane"):
			roles["control-plane"]++
		default:
			roles["cpu"]++
		}
		for _, k := range []string{zoneKey, "topology.kubernetes.io/region", "kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch", "node.kubernetes.io/instance-type"} {
			if n.Labels[k] == "" {
				t.Errorf("node %s has no label %s", n.Name, k)
			}
		}
	}
	if roles["control-plane"] != 3 || roles["cpu"] != 8 || roles["gpu"] != 24 || gpuPerZone[zoneA] != 12 || gpuPerZone[zoneB] != 12 {
		t.Errorf("node roles %v, GPU nodes per zone %v", roles, gpuPerZone)
	}

	// Every bound, non-terminal pod fits its node; resources never overcommit.
	bound := map[string][]*corev1.Pod{}
	var gang []*corev1.Pod
	var succeeded, gated int
	for _, p := range d.pods {
		switch {
		case terminal(p):
			succeeded++
			continue
		case len(p.Spec.SchedulingGates) > 0:
			gated++
		case p.Spec.SchedulingGroup != nil:
			gang = append(gang, p)
		}
		if p.Spec.NodeName == "" {
			if p.Status.Phase != corev1.PodPending {
				t.Errorf("unbound pod %s/%s is %s", p.Namespace, p.Name, p.Status.Phase)
			}
			continue
		}
		n := nodes[p.Spec.NodeName]
		if n == nil {
			t.Fatalf("pod %s/%s on unknown node %s", p.Namespace, p.Name, p.Spec.NodeName)
		}
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("bound pod %s/%s is %s", p.Namespace, p.Name, p.Status.Phase)
		}
		if gpuCount(podRequests(p)) > 0 && !tolerates(p, n) {
			t.Errorf("GPU pod %s/%s does not tolerate node %s", p.Namespace, p.Name, n.Name)
		}
		bound[n.Name] = append(bound[n.Name], p)
	}
	for name, ps := range bound {
		used := corev1.ResourceList{}
		for _, p := range ps {
			for k, v := range podRequests(p) {
				u := used[k]
				u.Add(v)
				used[k] = u
			}
		}
		for k, v := range used {
			a, ok := nodes[name].Status.Allocatable[k]
			if !ok || v.Cmp(a) > 0 {
				t.Errorf("node %s: %s requested %s > allocatable %s", name, k, v.String(), a.String())
			}
		}
	}
	if succeeded != 1 || gated != 1 || len(gang) != 9 {
		t.Errorf("succeeded %d, gated %d, gang members %d; want 1, 1, 9", succeeded, gated, len(gang))
	}
	for _, p := range gang {
		if p.Spec.NodeName != "" || *p.Spec.SchedulingGroup.PodGroupName != "llm-pretrain" || p.Spec.Priority == nil || *p.Spec.Priority != 100000 {
			t.Errorf("gang pod %s malformed", p.Name)
		}
	}
	g := d.groups[0]
	if g.Spec.SchedulingPolicy.Gang == nil || g.Spec.SchedulingPolicy.Gang.MinCount != 9 ||
		g.Spec.SchedulingConstraints == nil || len(g.Spec.SchedulingConstraints.Topology) != 1 || g.Spec.SchedulingConstraints.Topology[0].Key != zoneKey {
		t.Errorf("pod group spec %+v", g.Spec)
	}

	// The hand computation in examples/README.md.
	var worker, launcher *corev1.Pod
	for _, p := range gang {
		switch p.Labels["role"] {
		case "worker":
			worker = p
		case "launcher":
			launcher = p
		}
	}
	fitting := func(p *corev1.Pod, evict func(*corev1.Pod) bool) map[string][]string {
		out := map[string][]string{}
		for _, n := range d.nodes {
			if fits(p, n, bound[n.Name], evict) {
				out[n.Labels[zoneKey]] = append(out[n.Labels[zoneKey]], n.Name)
			}
		}
		for _, v := range out {
			sort.Strings(v)
		}
		return out
	}
	now := fitting(worker, nil)
	if strings.Join(now[zoneA], ",") != "gpu-a-04" ||
		strings.Join(now[zoneB], ",") != "gpu-b-00,gpu-b-01,gpu-b-02,gpu-b-03,gpu-b-04,gpu-b-05,gpu-b-06" {
		t.Errorf("nodes a worker fits now: %v", now)
	}
	if l := fitting(launcher, nil); len(l[zoneA]) != 4 || len(l[zoneB]) != 4 {
		t.Errorf("nodes the launcher fits: %v", l)
	}
	lower := func(p *corev1.Pod) bool { return p.Spec.Priority != nil && *p.Spec.Priority < 100000 }
	pre := fitting(worker, lower)
	if strings.Join(pre[zoneA], ",") != "gpu-a-04,gpu-a-07" || len(pre[zoneB]) != 8 || !contains(pre[zoneB], "gpu-b-07") {
		t.Errorf("nodes a worker fits after preempting lower priorities: %v", pre)
	}

	// Free GPUs on schedulable GPU nodes, per zone.
	free := map[string]int64{}
	for _, n := range d.nodes {
		if n.Labels[gpuProduct] == "" || n.Spec.Unschedulable || !tolerates(worker, n) {
			continue
		}
		f := gpuCount(n.Status.Allocatable)
		for _, p := range bound[n.Name] {
			f -= gpuCount(podRequests(p))
		}
		free[n.Labels[zoneKey]] += f
	}
	if free[zoneA] != 43 || free[zoneB] != 58 {
		t.Errorf("free GPUs on usable nodes per zone: %v", free)
	}

	// Quota status.used agrees with the namespace's non-terminal pods.
	want := map[corev1.ResourceName]resource.Quantity{}
	for _, p := range d.pods {
		if p.Namespace != "ml-research" || terminal(p) {
			continue
		}
		for k, v := range podRequests(p) {
			key := k
			if k != corev1.ResourcePods {
				key = "requests." + k
			}
			w := want[key]
			w.Add(v)
			want[key] = w
		}
	}
	for k, v := range d.quotas[0].Status.Used {
		w := want[k]
		if w.Cmp(v) != 0 {
			t.Errorf("quota used %s = %s, pods add up to %s", k, v.String(), w.String())
		}
	}
	if u := d.quotas[0].Status.Used["requests.nvidia.com/gpu"]; u.Value() != 91 {
		t.Errorf("quota GPUs used %s, want 91", u.String())
	}
}

func hasLabel(n *corev1.Node, k string) bool {
	_, ok := n.Labels[k]
	return ok
}
