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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// counts summarises a snapshot for table tests.
type counts struct {
	Nodes, Pods, Namespaces, PriorityClasses, Quotas, PDBs, PodGroups, Queues int
	Workloads, Succeeded                                                      int
}

func countsOf(s *schedule.Snapshot) counts {
	return counts{len(s.Nodes), len(s.Pods), len(s.Namespaces), len(s.PriorityClasses), len(s.ResourceQuotas),
		len(s.PodDisruptionBudgets), len(s.PodGroups), len(s.Queues),
		len(s.Services) + len(s.ReplicationControllers) + len(s.ReplicaSets) + len(s.StatefulSets), len(s.SucceededPods)}
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
