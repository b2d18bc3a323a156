package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	"github.com/kubectl-gang/kubectl-gang/test/testbed"
)

var (
	volcanoPodGroups      = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}
	volcanoQueues         = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "queues"}
	coschedulingPodGroups = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}
)

// cluster is what seedCluster created, for assertions.
type cluster struct {
	namespace string
	nodes     []string
	live      []string // pods that must be in a snapshot, ns/name
	terminal  []string // pods that must not be
}

// seedCluster creates, in a namespace of its own, one object of every kind a
// snapshot reads: nodes with capacity and taints, bound, pending and gated
// pods, terminal pods, a quota, a budget, a priority class, and a PodGroup of
// each source with a Volcano Queue, and the Dynamic Resource Allocation
// objects of a GPU driver (a DeviceClass, a ResourceSlice, an allocated
// ResourceClaim, a ResourceClaimTemplate and a DeviceTaintRule).
func seedCluster(ctx context.Context, t *testing.T, prefix string) cluster {
	t.Helper()
	cs := env.Clientset()
	dyn := dynamic.NewForConfigOrDie(env.Config)
	ns := prefix + "-ml"
	c := cluster{namespace: ns}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	_, err := cs.CoreV1().Namespaces().Create(ctx, testutil.MakeNamespace(ns), metav1.CreateOptions{})
	must(err)
	_, err = cs.SchedulingV1().PriorityClasses().Create(ctx, testutil.MakePriorityClass(prefix+"-high", 1000), metav1.CreateOptions{})
	must(err)

	for i, zone := range []string{"zone-a", "zone-a", "zone-b"} {
		name := prefix + "-gpu-" + string(rune('0'+i))
		n := testutil.MakeNode().Name(name).Label(corev1.LabelTopologyZone, zone).
			Capacity(testutil.Res{"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8", "pods": "110"}).
			Taint("nvidia.com/gpu", "present", corev1.TaintEffectNoSchedule)
		if i == 2 {
			n.Unschedulable()
		}
		must(env.CreateNode(ctx, n.Obj()))
		c.nodes = append(c.nodes, name)
	}

	create := func(p *corev1.Pod, phase corev1.PodPhase) {
		t.Helper()
		created, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		must(err)
		if phase != "" {
			created.Status.Phase = phase
			_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
			must(err)
		}
	}
	gpu := testutil.Res{"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "4"}
	create(testutil.MakePod().Namespace(ns).Name("running").Req(gpu).Node(c.nodes[0]).
		Toleration("nvidia.com/gpu", "", corev1.TaintEffectNoSchedule).Priority(prefix+"-high", 1000).Obj(), corev1.PodRunning)
	for i := range 3 {
		create(testutil.MakePod().Namespace(ns).Name("worker-"+string(rune('0'+i))).Req(gpu).
			Label("app", "train").PodGroup("train").Obj(), "")
	}
	create(testutil.MakePod().Namespace(ns).Name("gated").SchedulingGate("example.com/gang").Obj(), "")
	create(testutil.MakePod().Namespace(ns).Name("volcano-0").Annotation("scheduling.k8s.io/group-name", "vc").Obj(), "")
	create(testutil.MakePod().Namespace(ns).Name("cosched-0").Label("scheduling.x-k8s.io/pod-group", "cs").Obj(), "")
	create(testutil.MakePod().Namespace(ns).Name("done").Node(c.nodes[1]).Obj(), corev1.PodSucceeded)
	create(testutil.MakePod().Namespace(ns).Name("crashed").Node(c.nodes[1]).Obj(), corev1.PodFailed)
	for _, n := range []string{"running", "worker-0", "worker-1", "worker-2", "gated", "volcano-0", "cosched-0"} {
		c.live = append(c.live, ns+"/"+n)
	}
	c.terminal = []string{ns + "/done", ns + "/crashed"}

	_, err = cs.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "gpus"},
		Spec:       corev1.ResourceQuotaSpec{Hard: testutil.Res{"requests.nvidia.com/gpu": "16"}.List()},
	}, metav1.CreateOptions{})
	must(err)
	minAvailable := intstr.FromInt32(2)
	_, err = cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "train"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}}},
	}, metav1.CreateOptions{})
	must(err)
	_, err = cs.SchedulingV1beta1().PodGroups(ns).Create(ctx, &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "train"},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 3}}},
	}, metav1.CreateOptions{})
	must(err)
	_, err = dyn.Resource(volcanoQueues).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": map[string]any{"name": prefix + "-research"},
		"spec": map[string]any{"capability": map[string]any{"nvidia.com/gpu": "16"}},
	}}, metav1.CreateOptions{})
	must(err)
	_, err = dyn.Resource(volcanoPodGroups).Namespace(ns).Create(ctx,
		testutil.MakeVolcanoPodGroup(ns, "vc", 1).Field(prefix+"-research", "queue").Obj(), metav1.CreateOptions{})
	must(err)
	_, err = dyn.Resource(coschedulingPodGroups).Namespace(ns).Create(ctx,
		testutil.MakeCoschedulingPodGroup(ns, "cs", 1).Obj(), metav1.CreateOptions{})
	must(err)
	seedDRA(ctx, t, prefix, ns, c.nodes[0])
	return c
}

// gpuDriver is the DRA driver seedDRA publishes devices for.
const gpuDriver = "gpu.example.com"

// seedDRA creates a DeviceClass and a ResourceSlice of two GPUs on node, both
// named after prefix, and in ns a ResourceClaim allocated one of them and a
// ResourceClaimTemplate.
func seedDRA(ctx context.Context, t *testing.T, prefix, ns, node string) {
	t.Helper()
	rv1 := env.Clientset().ResourceV1()
	class, err := rv1.DeviceClasses().Create(ctx, &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: prefix + "-gpu"},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{
			{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "` + gpuDriver + `"`}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gpu := func(name string, index int64) resourcev1.Device {
		return resourcev1.Device{Name: name,
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"model": {StringValue: ptr.To("a100")}, gpuDriver + "/index": {IntValue: ptr.To(index)},
				"driverVersion": {VersionValue: ptr.To("1.2.3")}},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}}}
	}
	_, err = rv1.ResourceSlices().Create(ctx, &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + gpuDriver},
		Spec: resourcev1.ResourceSliceSpec{Driver: gpuDriver, NodeName: ptr.To(node),
			Pool:    resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{gpu("gpu-0", 0), gpu("gpu-1", 1)}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claimSpec := resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class.Name}}}}}
	claim, err := rv1.ResourceClaims(ns).Create(ctx, &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "running-gpu"}, Spec: claimSpec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Allocated as kube-scheduler would allocate it, to the pod "running".
	claim.Status.Allocation = &resourcev1.AllocationResult{
		Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: gpuDriver, Pool: node, Device: "gpu-0"}}},
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}},
	}
	claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "running", UID: "uid-running"}}
	if _, err := rv1.ResourceClaims(ns).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = rv1.ResourceClaimTemplates(ns).Create(ctx, &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourcev1.ResourceClaimTemplateSpec{Spec: claimSpec}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// gpu-1 is broken: a DeviceTaintRule (GA in v1.37) keeps new claims off it.
	_, err = rv1.DeviceTaintRules().Create(ctx, &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: prefix + "-broken"},
		Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To(gpuDriver), Pool: ptr.To(node), Device: ptr.To("gpu-1")},
			Taint:          resourcev1.DeviceTaint{Key: gpuDriver + "/ecc", Value: "uncorrectable", Effect: resourcev1.DeviceTaintEffectNoSchedule},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func podNames(pods []*corev1.Pod, namespace string) []string {
	var out []string
	for _, p := range pods {
		if p.Namespace == namespace {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	slices.Sort(out)
	return out
}

func TestLiveSnapshotReadsTheCluster(t *testing.T) {
	ctx := t.Context()
	c := seedCluster(ctx, t, "live")

	// A page size of 2 makes every list of more than two objects paginate.
	snap, warnings, err := snapshot.Live(ctx, env.Config, snapshot.LiveOptions{PageSize: 2})
	if err != nil {
		t.Fatalf("Live: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings from an admin snapshot: %v", warnings)
	}

	wantPods := slices.Clone(c.live)
	slices.Sort(wantPods)
	if diff := cmp.Diff(wantPods, podNames(snap.Pods, c.namespace)); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}

	// Every object equals what the API returns for it, by meaning: protobuf
	// decoding and normalisation lose nothing the pipeline reads.
	cs := env.Clientset()
	for _, n := range snap.Nodes {
		if !slices.Contains(c.nodes, n.Name) {
			continue
		}
		want, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want.ManagedFields, want.TypeMeta = nil, metav1.TypeMeta{}
		if diff := testutil.Diff(want, n); diff != "" {
			t.Errorf("node %s (-api +snapshot):\n%s", n.Name, diff)
		}
		if got := n.Status.Allocatable["nvidia.com/gpu"]; got.Value() != 8 {
			t.Errorf("node %s allocatable nvidia.com/gpu = %s, want 8", n.Name, got.String())
		}
	}
	var gotNodes []string
	for _, n := range snap.Nodes {
		gotNodes = append(gotNodes, n.Name)
	}
	for _, n := range c.nodes {
		if !slices.Contains(gotNodes, n) {
			t.Errorf("node %s missing from the snapshot", n)
		}
	}
	for _, p := range snap.Pods {
		if p.Namespace != c.namespace {
			continue
		}
		want, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want.ManagedFields, want.TypeMeta = nil, metav1.TypeMeta{}
		if diff := testutil.Diff(want, p); diff != "" {
			t.Errorf("pod %s (-api +snapshot):\n%s", p.Name, diff)
		}
	}
	// Pods of one template share their containers and labels, as a
	// snapshot file's do (the live read decodes pods as the binary file's
	// decoder does), across pages (a page holds two pods here).
	var workers []*corev1.Pod
	for _, p := range snap.Pods {
		if p.Namespace == c.namespace && strings.HasPrefix(p.Name, "worker-") {
			workers = append(workers, p)
		}
	}
	same := func(x, y any) bool { return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() }
	if len(workers) < 3 {
		t.Fatalf("%d worker pods in the snapshot, want at least 3", len(workers))
	}
	for _, w := range workers[1:] {
		if !same(workers[0].Spec.Containers, w.Spec.Containers) || !same(workers[0].Labels, w.Labels) {
			t.Errorf("pods %s and %s of one template do not share their containers and labels", workers[0].Name, w.Name)
		}
	}

	// One PodGroup of each source, told apart by group and version.
	var groups []string
	for _, pg := range snap.PodGroups {
		if pg.GetNamespace() == c.namespace {
			groups = append(groups, pg.GetAPIVersion()+" "+pg.GetName())
		}
	}
	wantGroups := []string{"scheduling.k8s.io/v1beta1 train", "scheduling.volcano.sh/v1beta1 vc", "scheduling.x-k8s.io/v1alpha1 cs"}
	if diff := cmp.Diff(wantGroups, groups); diff != "" {
		t.Errorf("PodGroups (-want +got):\n%s", diff)
	}
	for _, pg := range snap.PodGroups {
		if pg.GetNamespace() == c.namespace && pg.GroupVersionKind().Group == schedule.NativeGroup {
			if got, _, _ := unstructured.NestedInt64(pg.Object, "spec", "schedulingPolicy", "gang", "minCount"); got != 3 {
				t.Errorf("native PodGroup minCount = %d, want 3", got)
			}
		}
	}

	has := func(what string, found bool) {
		t.Helper()
		if !found {
			t.Errorf("%s missing from the snapshot", what)
		}
	}
	has("queue", slices.ContainsFunc(snap.Objects, func(q *unstructured.Unstructured) bool { return q.GetName() == "live-research" }))
	has("namespace", slices.ContainsFunc(snap.Namespaces, func(n *corev1.Namespace) bool { return n.Name == c.namespace }))
	has("priority class", slices.ContainsFunc(snap.PriorityClasses, func(p *schedulingv1.PriorityClass) bool { return p.Name == "live-high" }))
	has("built-in priority class", slices.ContainsFunc(snap.PriorityClasses, func(p *schedulingv1.PriorityClass) bool { return p.Name == "system-node-critical" }))
	has("resource quota", slices.ContainsFunc(snap.ResourceQuotas, func(q *corev1.ResourceQuota) bool { return q.Namespace == c.namespace }))
	has("budget", slices.ContainsFunc(snap.PodDisruptionBudgets, func(b *policyv1.PodDisruptionBudget) bool { return b.Namespace == c.namespace }))

	// The Dynamic Resource Allocation objects, each as the API returns it.
	rv1 := cs.ResourceV1()
	get := metav1.GetOptions{}
	sameAsAPI(t, "device class", snap.DeviceClasses, func(o *resourcev1.DeviceClass) bool { return o.Name == "live-gpu" },
		func(o *resourcev1.DeviceClass) (*resourcev1.DeviceClass, error) {
			return rv1.DeviceClasses().Get(ctx, o.Name, get)
		})
	sameAsAPI(t, "device taint rule", snap.DeviceTaintRules, func(o *resourcev1.DeviceTaintRule) bool { return o.Name == "live-broken" },
		func(o *resourcev1.DeviceTaintRule) (*resourcev1.DeviceTaintRule, error) {
			return rv1.DeviceTaintRules().Get(ctx, o.Name, get)
		})
	sameAsAPI(t, "resource claim template", snap.ResourceClaimTemplates, func(o *resourcev1.ResourceClaimTemplate) bool { return o.Namespace == c.namespace },
		func(o *resourcev1.ResourceClaimTemplate) (*resourcev1.ResourceClaimTemplate, error) {
			return rv1.ResourceClaimTemplates(o.Namespace).Get(ctx, o.Name, get)
		})
	slice := sameAsAPI(t, "resource slice", snap.ResourceSlices, func(o *resourcev1.ResourceSlice) bool { return o.Name == c.nodes[0]+"-"+gpuDriver },
		func(o *resourcev1.ResourceSlice) (*resourcev1.ResourceSlice, error) {
			return rv1.ResourceSlices().Get(ctx, o.Name, get)
		})
	if slice != nil {
		if s := slice.Spec; len(s.Devices) != 2 || *s.NodeName != c.nodes[0] || *s.Devices[1].Attributes[gpuDriver+"/index"].IntValue != 1 {
			t.Errorf("resource slice spec = %+v, want two devices on %s", s, c.nodes[0])
		}
	}
	claim := sameAsAPI(t, "resource claim", snap.ResourceClaims, func(o *resourcev1.ResourceClaim) bool { return o.Namespace == c.namespace },
		func(o *resourcev1.ResourceClaim) (*resourcev1.ResourceClaim, error) {
			return rv1.ResourceClaims(o.Namespace).Get(ctx, o.Name, get)
		})
	if claim != nil {
		if a := claim.Status.Allocation; a == nil || len(a.Devices.Results) != 1 || a.Devices.Results[0].Device != "gpu-0" {
			t.Errorf("claim allocation = %+v, want device gpu-0", a)
		}
	}
}

// sameAsAPI returns the object of list that match picks, checking that it
// equals what get returns for it from the API, less what a snapshot drops
// (managed fields, type metadata); nil, with an error, if it is missing.
func sameAsAPI[T interface {
	runtime.Object
	metav1.Object
}](t *testing.T, what string, list []T, match func(T) bool, get func(T) (T, error)) T {
	t.Helper()
	var zero T
	i := slices.IndexFunc(list, match)
	if i < 0 {
		t.Errorf("%s missing from the snapshot", what)
		return zero
	}
	want, err := get(list[i])
	if err != nil {
		t.Fatal(err)
	}
	want.SetManagedFields(nil)
	want.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if diff := testutil.Diff(want, list[i]); diff != "" {
		t.Errorf("%s %s (-api +snapshot):\n%s", what, list[i].GetName(), diff)
	}
	return list[i]
}

// runCLI runs kubectl gang in-process, as main does, and returns its exit
// code and streams.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cmd.Main(args, genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestSnapshotCommandRoundTrips(t *testing.T) {
	ctx := t.Context()
	seedCluster(ctx, t, "trip")

	for _, format := range []string{"yaml", "json", "protobuf"} {
		t.Run(format, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "snapshot", "--kubeconfig", env.Kubeconfig, "-o", format)
			if code != 0 {
				t.Fatalf("snapshot exit %d: %s", code, errOut)
			}
			file := filepath.Join(t.TempDir(), "cluster."+format)
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			// The cluster does not change between the two reads: every test
			// in this package seeds a namespace and nodes of its own first.
			live, _, err := snapshot.Live(ctx, env.Config, snapshot.LiveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			offline, warnings, err := snapshot.LoadFiles(file, nil)
			if err != nil {
				t.Fatalf("reading the snapshot back: %v", err)
			}
			// Pods bound to a node that no longer exists (a test bed has no
			// pod garbage collector) are orphans a live read takes as the
			// cluster's state; a file cannot tell them from a partial save,
			// so it warns and marks the snapshot partial
			// (docs/design.md#snapshot). Nothing else differs.
			if m := schedule.FindMissingNodes(live); len(m.Nodes) > 0 {
				if len(warnings) != 1 || !strings.Contains(warnings[0], "the snapshot does not hold") || offline.Partial != m.String() {
					t.Errorf("orphans %v: warnings %v, partial %q; want one warning naming them, and the snapshot partial", m.Nodes, warnings, offline.Partial)
				}
				warnings, offline.Partial = nil, ""
			}
			if len(warnings) > 0 {
				t.Errorf("warnings reading our own snapshot: %v", warnings)
			}
			if diff := testutil.Diff(live, offline); diff != "" {
				t.Errorf("live and round-tripped snapshots differ (-live +file):\n%s", diff)
			}

			// The command reads it back the same way, from a file and from stdin.
			code, summaryFile, errOut := runCLI(t, "", "snapshot", "--snapshot", file, "--summary")
			if code != 0 {
				t.Fatalf("summary of the file: exit %d: %s", code, errOut)
			}
			code, summaryLive, errOut := runCLI(t, "", "snapshot", "--kubeconfig", env.Kubeconfig, "--summary")
			if code != 0 {
				t.Fatalf("summary of the cluster: exit %d: %s", code, errOut)
			}
			code, summaryStdin, errOut := runCLI(t, out, "snapshot", "--snapshot", "-", "--summary")
			if code != 0 {
				t.Fatalf("summary from stdin: exit %d: %s", code, errOut)
			}
			if summaryFile != summaryLive || summaryStdin != summaryLive {
				t.Errorf("summaries differ:\nlive:\n%s\nfile:\n%s\nstdin:\n%s", summaryLive, summaryFile, summaryStdin)
			}
		})
	}
}

func TestSnapshotErrorsAreOneLine(t *testing.T) {
	ctx := t.Context()
	closed := env.Host[:strings.LastIndex(env.Host, ":")] + ":1"

	// bob may read the kinds the pipeline needs, and nothing else.
	cs := env.Clientset()
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "snapshot-core"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes", "pods", "namespaces"}, Verbs: []string{"list"}},
			{APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"priorityclasses"}, Verbs: []string{"list"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "snapshot-core-bob"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "snapshot-core"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "bob"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, aliceKubeconfig, err := env.UserConfig("alice")
	if err != nil {
		t.Fatal(err)
	}
	_, bobKubeconfig, err := env.UserConfig("bob")
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string // prefix of the one error line
	}{
		{"unreachable server", []string{"snapshot", "--kubeconfig", env.Kubeconfig, "--server", closed}, cmd.ExitError,
			"error: cannot reach the API server at " + closed + ": dial tcp 127.0.0.1:1: connect: connection refused"},
		{"bad token", []string{"snapshot", "--kubeconfig", env.Kubeconfig, "--token", "not-a-token", "--user", ""}, cmd.ExitError,
			"error: discovering the API: "},
		{"forbidden", []string{"snapshot", "--kubeconfig", aliceKubeconfig}, cmd.ExitError,
			"error: cannot list namespaces, nodes, pods, priorityclasses.scheduling.k8s.io (namespaces is forbidden: User \"alice\" cannot list"},
		{"unknown resource with a live cluster", []string{"place", "cronjob/x", "--kubeconfig", env.Kubeconfig}, cmd.ExitUsage,
			`error: unknown resource type "cronjob"`},
		{"a workload that is not there", []string{"place", "deployment/x", "--kubeconfig", env.Kubeconfig}, cmd.ExitUsage,
			`error: deployments.apps "x" not found in namespace "default"`},
		{"bad flag with a live cluster", []string{"snapshot", "--kubeconfig", env.Kubeconfig, "--qps=-1"}, cmd.ExitUsage,
			"error: --qps must be 0 (no client-side limit) or positive"},
		{"missing kubeconfig", []string{"snapshot", "--kubeconfig", "/nonexistent/kubeconfig"}, cmd.ExitUsage,
			"error: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if !strings.HasPrefix(stderr, tt.wantStderr) {
				t.Errorf("stderr %q, want it to start with %q", stderr, tt.wantStderr)
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
		})
	}

	// Kinds the pipeline can do without become warnings, not failures.
	t.Run("optional kinds forbidden", func(t *testing.T) {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			code, _, _ := runCLI(t, "", "snapshot", "--kubeconfig", bobKubeconfig, "--summary")
			return code == 0, nil // RBAC caches take a moment to see the binding
		})
		if err != nil {
			t.Fatalf("bob never got to read a snapshot: %v", err)
		}
		code, _, stderr := runCLI(t, "", "snapshot", "--kubeconfig", bobKubeconfig, "--summary")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		// Namespaced kinds are tried namespace by namespace too.
		for _, want := range []string{"Warning: cannot list resourcequotas in every namespace (Forbidden), nor in namespace(s) ",
			"Warning: cannot list podgroups.scheduling.volcano.sh in every namespace (Forbidden), nor in namespace(s) ",
			"Warning: cannot list queues.scheduling.volcano.sh (Forbidden); the snapshot has none",
			"Warning: cannot list resourceclaims.resource.k8s.io (Forbidden)"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr %q lacks %q", stderr, want)
			}
		}
	})
}

// TestMissingCRDIsAbsent deletes the coscheduling CRD: a snapshot then simply
// has no coscheduling PodGroups. The CRD is installed again afterwards.
func TestMissingCRDIsAbsent(t *testing.T) {
	ctx := t.Context()
	ext := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	name := coschedulingPodGroups.Resource + "." + coschedulingPodGroups.Group
	if err := ext.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := testbed.InstallCRDs(context.Background(), env.Config); err != nil {
			t.Errorf("reinstalling CRDs: %v", err)
		}
	})
	disc := kubernetes.NewForConfigOrDie(env.Config).Discovery()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := ext.Get(ctx, name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return false, nil
		}
		_, err = disc.ServerResourcesForGroupVersion(coschedulingPodGroups.GroupVersion().String())
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("CRD never went away: %v", err)
	}
	snap, warnings, err := snapshot.Live(ctx, env.Config, snapshot.LiveOptions{})
	if err != nil {
		t.Fatalf("Live without the CRD: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	for _, pg := range snap.PodGroups {
		if pg.GroupVersionKind().Group == "scheduling.x-k8s.io" {
			t.Errorf("coscheduling PodGroup %s/%s in a snapshot of a cluster without the CRD", pg.GetNamespace(), pg.GetName())
		}
	}
}
