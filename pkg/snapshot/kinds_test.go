package snapshot

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// A kind only this test registers, as a gang system's wing would: the
// readers keep it without knowing whose it is.
const widgetGroup = "widgets.example.com"

func init() {
	schedule.RegisterObjectKind(schedule.ObjectKind{Group: widgetGroup, Resource: "widgets", Kind: "Widget", Namespaced: true})
	schedule.RegisterObjectKind(schedule.ObjectKind{Group: widgetGroup, Resource: "shelves", Kind: "Shelf"})
}

func widget(kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": widgetGroup + "/v1", "kind": kind,
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": int64(3), "unknownToUs": "kept"}}}
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	return u
}

// TestRegisteredKindsRoundTrip: objects of a registered kind are read from
// a file into Snapshot.Objects, whatever their fields, and written back
// where their scope puts them (cluster-scoped among the cluster-scoped
// kinds, namespaced ones before the PodGroups); an unregistered kind is
// ignored with a warning, as before.
func TestRegisteredKindsRoundTrip(t *testing.T) {
	want := &schedule.Snapshot{
		Namespaces: []*corev1.Namespace{testutil.MakeNamespace("ml")},
		Objects:    []*unstructured.Unstructured{widget("Widget", "ml", "w"), widget("Shelf", "", "s")},
		PodGroups:  []*unstructured.Unstructured{testutil.MakeNativePodGroup("ml", "g", 2).Obj()},
	}
	want.Sort()
	list, err := ToList(want)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, item := range list.Items {
		order = append(order, item.GetKind())
	}
	if diff := cmp.Diff([]string{"Namespace", "Shelf", "Widget", "PodGroup"}, order); diff != "" {
		t.Errorf("written order (-want +got):\n%s", diff)
	}
	listJSON, err := list.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, warnings, err := LoadFiles(Stdin, strings.NewReader(string(listJSON)))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("load: %v, warnings %q", err, warnings)
	}
	if diff := cmp.Diff(want.Objects, got.Objects); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if n := len(got.ObjectsOf(widgetGroup, "Widget")); n != 1 {
		t.Errorf("ObjectsOf Widget: %d, want 1", n)
	}

	other := strings.Replace(string(listJSON), `"kind":"Widget"`, `"kind":"Gadget"`, 1)
	got, warnings, err = LoadFiles(Stdin, strings.NewReader(other))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Objects) != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], "1 Gadget") {
		t.Errorf("an unregistered kind: objects %d, warnings %q; want 1 (the Shelf), a warning naming the Gadget", len(got.Objects), warnings)
	}
}
