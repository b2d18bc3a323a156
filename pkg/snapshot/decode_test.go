package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// counts summarises a snapshot for table tests.
type counts struct {
	Nodes, Pods, Namespaces, PriorityClasses, Quotas, PDBs, PodGroups, Queues int
	Workloads, Succeeded                                                      int
	Slices, DeviceClasses, Claims, ClaimTemplates, TaintRules                 int
}

func countsOf(s *schedule.Snapshot) counts {
	return counts{len(s.Nodes), len(s.Pods), len(s.Namespaces), len(s.PriorityClasses), len(s.ResourceQuotas),
		len(s.PodDisruptionBudgets), len(s.PodGroups), len(s.Objects),
		len(s.Services) + len(s.ReplicationControllers) + len(s.ReplicaSets) + len(s.StatefulSets), len(s.SucceededPods),
		len(s.ResourceSlices), len(s.DeviceClasses), len(s.ResourceClaims), len(s.ResourceClaimTemplates), len(s.DeviceTaintRules)}
}

func TestLoadFilesFormats(t *testing.T) {
	tests := []struct {
		name         string
		input        string
		want         counts
		wantWarnings []string
	}{
		{
			name: "v1 List in YAML, as kubectl get -o yaml writes it",
			input: `apiVersion: v1
kind: List
metadata:
  resourceVersion: ""
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: n1
  status:
    allocatable: {cpu: "8", pods: "110"}
- apiVersion: v1
  kind: Pod
  metadata:
    name: p1
    namespace: default
  spec:
    containers: [{name: c, image: i}]
`,
			want: counts{Nodes: 1, Pods: 1},
		},
		{
			name: "multi-document YAML with empty documents and every kind",
			input: `---
apiVersion: v1
kind: Namespace
metadata: {name: ml}
---
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: ml}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: b, namespace: ml}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: g, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: g, namespace: ml}
spec: {minMember: 2}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g, namespace: ml}
spec: {minMember: 2}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
`,
			want: counts{Namespaces: 1, PriorityClasses: 1, Quotas: 1, PDBs: 1, PodGroups: 3, Queues: 1},
		},
		{
			name:         "typed JSON list whose items carry no kind, as the API returns it",
			input:        `{"apiVersion":"v1","kind":"NodeList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`,
			want:         counts{Nodes: 2},
			wantWarnings: []string{"2 node(s) have no status.allocatable (a, b): no pod fits them, as kube-scheduler sees it"},
		},
		{
			name:  "a stream of JSON objects",
			input: `{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"},"status":{"allocatable":{"cpu":"1"}}} {"apiVersion":"v1","kind":"Node","metadata":{"name":"b"},"status":{"allocatable":{"cpu":"1"}}}`,
			want:  counts{Nodes: 2},
		},
		{
			name: "Dynamic Resource Allocation kinds in a List, as kubectl get -o yaml writes them",
			input: `apiVersion: v1
kind: List
items:
- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu}, spec: {selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: n1-gpu}
  spec:
    driver: gpu.example.com
    nodeName: n1
    pool: {name: n1, generation: 1, resourceSliceCount: 1}
    devices:
    - name: gpu-0
      attributes: {model: {string: a100}, gpu.example.com/index: {int: 0}}
      capacity: {memory: {value: 80Gi}}
- {apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: c, namespace: ml}, spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}
- {apiVersion: resource.k8s.io/v1, kind: ResourceClaimTemplate, metadata: {name: t, namespace: ml}, spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}}
- {apiVersion: resource.k8s.io/v1, kind: DeviceTaintRule, metadata: {name: broken}, spec: {deviceSelector: {pool: n1, device: gpu-0}, taint: {key: example.com/broken, effect: NoSchedule}}}
`,
			want: counts{Slices: 1, DeviceClasses: 1, Claims: 1, ClaimTemplates: 1, TaintRules: 1},
		},
		{
			name: "Dynamic Resource Allocation kinds as YAML documents and typed lists",
			input: `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSliceList
items:
- {metadata: {name: a}, spec: {driver: gpu.example.com, allNodes: true, pool: {name: p, generation: 1, resourceSliceCount: 2}}}
- {metadata: {name: b}, spec: {driver: gpu.example.com, allNodes: true, pool: {name: p, generation: 1, resourceSliceCount: 2}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimList
items:
- {metadata: {name: c, namespace: ml}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplateList
items:
- {metadata: {name: t, namespace: ml}}
`,
			want: counts{Slices: 2, DeviceClasses: 1, Claims: 1, ClaimTemplates: 1},
		},
		{
			name: "workloads keep their selectors for default topology spreading",
			input: `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Service, metadata: {name: s, namespace: d}, spec: {selector: {app: a}, ports: [{port: 80}]}}
- {apiVersion: v1, kind: ReplicationController, metadata: {name: rc, namespace: d}, spec: {selector: {app: a}}}
- {apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: rs, namespace: d}, spec: {selector: {matchLabels: {app: a}}}}
- {apiVersion: apps/v1, kind: StatefulSet, metadata: {name: ss, namespace: d}, spec: {selector: {matchLabels: {app: a}}}}
`,
			want: counts{Workloads: 4},
		},
		{
			name: "failed pods, other kinds and duplicates are left out with warnings; succeeded pods are kept aside",
			input: `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: done, namespace: d}, status: {phase: Succeeded}}
- {apiVersion: v1, kind: Pod, metadata: {name: failed, namespace: d}, status: {phase: Failed}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: s, namespace: d}}
- {apiVersion: apps/v1, kind: Deployment, metadata: {name: x, namespace: d}}
- {apiVersion: v1, kind: Node, metadata: {name: node-a}}
- {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {second: "true"}}}
`,
			want: counts{Nodes: 1, Succeeded: 1},
			wantWarnings: []string{
				"ignored 2 object(s) of kinds the scheduler does not read: 1 ConfigMap, 1 Deployment",
				"1 object(s) appeared more than once (Node node-a); the last copy read was kept",
				"1 node(s) have no status.allocatable (node-a): no pod fits them, as kube-scheduler sees it",
			},
		},
		{
			name: "a partial snapshot: pods on nodes it lacks, objects in namespaces it lacks",
			input: `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: ml}}
- {apiVersion: v1, kind: Node, metadata: {name: node-a}, status: {allocatable: {cpu: "8"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: p1, namespace: ml}, spec: {nodeName: node-a, containers: [{name: c, image: i}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: p2, namespace: ml}, spec: {nodeName: node-z, containers: [{name: c, image: i}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: p3, namespace: ml}, spec: {nodeName: node-y, containers: [{name: c, image: i}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: p4, namespace: web}, spec: {nodeName: node-z, containers: [{name: c, image: i}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: p5, namespace: web}, spec: {nodeName: node-z, containers: [{name: c, image: i}]}}
`,
			want: counts{Nodes: 1, Pods: 5, Namespaces: 1},
			wantWarnings: []string{
				"4 pod(s) are bound to 2 node(s) the snapshot does not hold (node-y, node-z; pods ml/p2, ml/p3, web/p4 and 1 more): the snapshot is partial, and no answer on it is fully evaluated",
				"2 object(s) are in 1 namespace(s) the snapshot does not hold (web; Pod web/p4, Pod web/p5): the snapshot is partial, or was edited by hand",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, warnings, err := LoadFiles(Stdin, strings.NewReader(tt.input))
			if err != nil {
				t.Fatalf("LoadFiles: %v", err)
			}
			if diff := cmp.Diff(tt.want, countsOf(snap)); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadFilesKeepsLastDuplicate(t *testing.T) {
	input := "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}\n" +
		"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"labels\":{\"v\":\"2\"}}}"
	snap, _, err := LoadFiles(Stdin, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Nodes[0].Labels["v"]; got != "2" {
		t.Errorf("kept label v=%q, want the later copy's 2", got)
	}
}

func TestLoadFilesErrors(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr string
	}{
		{"empty", "  \n", "<stdin>: empty snapshot"},
		{"YAML syntax", "apiVersion: v1\nkind: [", "<stdin>:2: invalid YAML: did not find expected node content"},
		{"YAML syntax in a later document", "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\nfoo: [\n", "<stdin>:5: invalid YAML: did not find expected node content"},
		{"YAML syntax after a leading separator", "---\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: [b\n", "<stdin>:6: invalid YAML: did not find expected ',' or ']'"},
		{"an object error names the document and its first line", "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n\napiVersion: v1\nkind: Node\n", "<stdin>: document 2 (line 5): Node has no metadata.name"},
		{"JSON syntax", `{"apiVersion": "v1", "kind": }`, "<stdin>: document 1: invalid JSON"},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", "<stdin>: document 1 (line 1): not a Kubernetes object: apiVersion and kind are required"},
		{"list item without kind", "apiVersion: v1\nkind: List\nitems:\n- metadata: {name: a}\n", "<stdin>: document 1 (line 1): item 1: not a Kubernetes object: apiVersion and kind are required"},
		{"wrong field type", "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nspec: {unschedulable: maybe}\n", "<stdin>: document 1 (line 1): Node: spec.unschedulable: want a boolean, got string"},
		{"no name", "apiVersion: v1\nkind: Pod\nmetadata: {namespace: a}\n", "<stdin>: document 1 (line 1): Pod has no metadata.name"},
		{"PodGroup without name", "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {}\n", "<stdin>: document 1 (line 1): PodGroup has no metadata.name"},
		{"a scalar", "just words\n", "<stdin>: document 1 (line 1): not a Kubernetes object: the document is a string, not a mapping with apiVersion and kind"},
		{"a resource.k8s.io kind at another version", "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ml}\n",
			"<stdin>: document 1 (line 1): ResourceClaim ml/c: resource.k8s.io/v1beta1 is not supported; this build reads ResourceClaim resource.k8s.io/v1"},
		{"a typed list at another version", "apiVersion: resource.k8s.io/v1beta2\nkind: ResourceSliceList\nitems:\n- metadata: {name: s}\n",
			"<stdin>: document 1 (line 1): item 1: ResourceSlice s: resource.k8s.io/v1beta2 is not supported; this build reads ResourceSlice resource.k8s.io/v1"},
		{"a pod no API server stored, with a fractional GPU", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec: {containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 500m}}}]}\n",
			`<stdin>: document 1 (line 1): pod ml/p: [spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer`},
		{"a saved List cut short loses its kind, written after the items", "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: b\n",
			"<stdin>: document 1 (line 1): the snapshot looks cut short: a list of 2 item(s) with no kind after them (kubectl get -o yaml and kubectl gang snapshot write kind: List last); the file ends at line 9"},
		{"items: [] alone", "items: []\n", "<stdin>: empty snapshot"},
		{"a separator alone", "---\n", "<stdin>: empty snapshot"},
		{"an empty List", "apiVersion: v1\nkind: List\nitems: []\n", "<stdin>: empty snapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := LoadFiles(Stdin, strings.NewReader(tt.input))
			var inputErr *InputError
			if !errors.As(err, &inputErr) {
				t.Fatalf("err = %v (%T), want an *InputError", err, err)
			}
			if !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("err = %q, want it to start with %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("err spans lines: %q", err)
			}
		})
	}
}

// TestLoadFilesKeepsStoredPods checks that a pod an API server stored (it has
// a UID) is not refused for rules a newer server added: the snapshot is of a
// real cluster, where the pod runs.
func TestLoadFilesKeepsStoredPods(t *testing.T) {
	input := "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml, uid: 0b9f}\n" +
		"spec: {nodeName: node-1, containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: 2}, limits: {nvidia.com/gpu: 4, hugepages-2Mi: 3Mi}}}]}\n"
	snap, _, err := LoadFiles(Stdin, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Pods) != 1 {
		t.Errorf("got %d pods, want the stored one", len(snap.Pods))
	}
}

func TestLoadFilesPaths(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n")
	write("sub/pods.json", `{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"p","namespace":"d"}}]}`)
	write("notes.txt", "not read")

	snap, _, err := LoadFiles(dir, nil)
	if err != nil {
		t.Fatalf("directory: %v", err)
	}
	if diff := cmp.Diff(counts{Nodes: 1, Pods: 1}, countsOf(snap)); diff != "" {
		t.Errorf("directory counts (-want +got):\n%s", diff)
	}

	if _, _, err := LoadFiles(filepath.Join(dir, "missing.yaml"), nil); err == nil || !strings.HasSuffix(err.Error(), "missing.yaml: no such file or directory") {
		t.Errorf("missing file: err = %v", err)
	}
	empty := t.TempDir()
	if _, _, err := LoadFiles(empty, nil); err == nil || !strings.Contains(err.Error(), "directory holds no .yaml, .yml or .json files") {
		t.Errorf("empty directory: err = %v", err)
	}
	write("bad/x.yaml", "kind: [")
	_, _, err = LoadFiles(filepath.Join(dir, "bad"), nil)
	if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "bad", "x.yaml")+":1: invalid YAML") {
		t.Errorf("error names the file: err = %v", err)
	}
}

func TestToListRoundTrip(t *testing.T) {
	want := &schedule.Snapshot{
		Nodes: []*corev1.Node{
			testutil.MakeNode().Name("gpu-1").Label(corev1.LabelTopologyZone, "a").
				Capacity(testutil.Res{"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8"}).
				Taint("nvidia.com/gpu", "present", corev1.TaintEffectNoSchedule).Obj(),
			testutil.MakeNode().Name("cpu-1").Capacity(testutil.Res{"cpu": "32"}).Unschedulable().Obj(),
		},
		Pods: []*corev1.Pod{
			testutil.MakePod().Namespace("ml").Name("w-0").PodGroup("g").Req(testutil.Res{"nvidia.com/gpu": "8"}).Obj(),
			testutil.MakePod().Namespace("ml").Name("running").Node("gpu-1").Priority("high", 1000).Obj(),
		},
		Namespaces:      []*corev1.Namespace{testutil.MakeNamespace("ml")},
		PriorityClasses: nil,
		PodGroups: []*unstructured.Unstructured{
			testutil.MakeNativePodGroup("ml", "g", 2).Obj(),
			testutil.MakeVolcanoPodGroup("ml", "v", 3).Field("research", "queue").Obj(),
		},
	}
	addDRAObjects(want)
	want.Sort()
	for _, p := range want.Pods {
		schedule.DefaultPod(p) // as LoadFiles does; then the round trip changes nothing
	}

	list, err := ToList(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range list.Items {
		if item.GetAPIVersion() == "" || item.GetKind() == "" {
			t.Errorf("item %s has no apiVersion or kind", item.GetName())
		}
	}
	listJSON, err := list.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for name, encoded := range map[string][]byte{"yaml": yamlOf(t, listJSON), "json": listJSON} {
		t.Run(name, func(t *testing.T) {
			got, warnings, err := LoadFiles(Stdin, strings.NewReader(string(encoded)))
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings: %v", warnings)
			}
			if diff := testutil.Diff(want, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// addDRAObjects adds one object of each Dynamic Resource Allocation kind,
// with the fields the scheduler reads set: a slice's devices with
// attributes of every type and capacity, a claim's allocation.
func addDRAObjects(s *schedule.Snapshot) {
	class := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"},
		Spec: resourcev1.DeviceClassSpec{
			Selectors:            []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}},
			ExtendedResourceName: ptr.To("example.com/gpu"),
		},
	}
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-1-gpu.example.com"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   "gpu.example.com",
			NodeName: ptr.To("gpu-1"),
			Pool:     resourcev1.ResourcePool{Name: "gpu-1", Generation: 2, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{
				Name: "gpu-0",
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
					"model":                 {StringValue: ptr.To("a100")},
					"gpu.example.com/index": {IntValue: ptr.To[int64](0)},
					"mig":                   {BoolValue: ptr.To(true)},
					"driverVersion":         {VersionValue: ptr.To("1.2.3")},
				},
				Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
					"memory": {Value: resource.MustParse("80Gi")},
				},
			}, {Name: "gpu-1"}},
		},
	}
	request := resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name:    "gpu",
		Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class.Name, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
	}}}
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "w-0-gpu", Namespace: "ml"},
		Spec:       resourcev1.ResourceClaimSpec{Devices: request},
		Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{
				Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
					{Request: "gpu", Driver: "gpu.example.com", Pool: "gpu-1", Device: "gpu-0"},
				}},
				NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu-1"}}},
				}}},
			},
			ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "running", UID: "uid-running"}},
		},
	}
	template := &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "ml"},
		Spec: resourcev1.ResourceClaimTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "train"}},
			Spec:       resourcev1.ResourceClaimSpec{Devices: request},
		},
	}
	s.DeviceClasses = append(s.DeviceClasses, class)
	s.ResourceSlices = append(s.ResourceSlices, slice)
	s.ResourceClaims = append(s.ResourceClaims, claim)
	s.ResourceClaimTemplates = append(s.ResourceClaimTemplates, template)
}

func yamlOf(t *testing.T, jsonData []byte) []byte {
	t.Helper()
	out, err := yaml.JSONToYAML(jsonData)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExampleSnapshotRoundTrip checks that the example the README runs on
// loads, and that writing it and reading it back changes nothing.
func TestExampleSnapshotRoundTrip(t *testing.T) {
	snap, _, err := LoadFiles(filepath.Join("..", "..", "examples", "gpu-cluster.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Nodes) == 0 || len(snap.Pods) == 0 || len(snap.PodGroups) == 0 {
		t.Fatalf("example snapshot is missing objects: %+v", countsOf(snap))
	}
	list, err := ToList(snap)
	if err != nil {
		t.Fatal(err)
	}
	data, err := list.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := LoadFiles(Stdin, strings.NewReader(string(yamlOf(t, data))))
	if err != nil {
		t.Fatal(err)
	}
	if diff := testutil.Diff(snap, again); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// A pod that names a priorityClassName but carries no spec.priority (a
// hand-made file; the API server always sets it) gets its class's value and
// preemption policy, as admission would give them, with a warning; one whose
// class the file lacks stays at 0, with a warning naming the class.
func TestLoadFilesResolvesPriorities(t *testing.T) {
	input := `apiVersion: v1
kind: List
items:
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: high}
  value: 1000
  preemptionPolicy: Never
- apiVersion: v1
  kind: Pod
  metadata: {name: a, namespace: ml}
  spec: {priorityClassName: high, containers: [{name: c, image: x}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: b, namespace: ml}
  spec: {priorityClassName: system-node-critical, containers: [{name: c, image: x}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: c, namespace: ml}
  spec: {priorityClassName: missing, containers: [{name: c, image: x}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: d, namespace: ml}
  spec: {priorityClassName: high, priority: 7, containers: [{name: c, image: x}]}
`
	path := filepath.Join(t.TempDir(), "snap.yaml")
	if err := os.WriteFile(path, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, warnings, err := LoadFiles(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range snap.Pods {
		prio, policy := "nil", ""
		if p.Spec.Priority != nil {
			prio = fmt.Sprint(*p.Spec.Priority)
		}
		if p.Spec.PreemptionPolicy != nil {
			policy = string(*p.Spec.PreemptionPolicy)
		}
		got[p.Name] = prio + " " + policy
	}
	want := map[string]string{"a": "1000 Never", "b": "2000001000 ", "c": "nil ", "d": "7 "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("priorities (-want +got):\n%s", diff)
	}
	wantWarnings := []string{
		"2 pod(s) name a priorityClassName but carry no spec.priority; their priority was taken from the PriorityClass, as the API server's admission sets it",
		`1 pod(s) name the PriorityClass "missing", which the snapshot does not hold, and carry no spec.priority; they count as priority 0`,
	}
	if diff := cmp.Diff(wantWarnings, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
