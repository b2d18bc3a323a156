package schedule

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// loadExample reads examples/gpu-cluster.yaml without pkg/snapshot (which
// imports client-go, which the core's tests must not pull in either).
func loadExample(t *testing.T) *Snapshot {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "gpu-cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	snap := &Snapshot{}
	for _, item := range list.Items {
		u := unstructured.Unstructured{Object: item}
		raw, err := u.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		decode := func(into any) {
			if err := yaml.Unmarshal(raw, into); err != nil {
				t.Fatal(err)
			}
		}
		switch u.GetKind() {
		case "Node":
			n := &corev1.Node{}
			decode(n)
			snap.Nodes = append(snap.Nodes, n)
		case "Pod":
			p := &corev1.Pod{}
			decode(p)
			if !IsTerminal(p) {
				snap.Pods = append(snap.Pods, p)
			}
		case "Namespace":
			n := &corev1.Namespace{}
			decode(n)
			snap.Namespaces = append(snap.Namespaces, n)
		case "PriorityClass":
			pc := &schedulingv1.PriorityClass{}
			decode(pc)
			snap.PriorityClasses = append(snap.PriorityClasses, pc)
		case "PodDisruptionBudget":
			b := &policyv1.PodDisruptionBudget{}
			decode(b)
			snap.PodDisruptionBudgets = append(snap.PodDisruptionBudgets, b)
		}
	}
	snap.Sort()
	return snap
}
