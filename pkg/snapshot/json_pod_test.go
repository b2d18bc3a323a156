package snapshot

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// TestJSONPodsShareEqualValues checks that pods read from a JSON snapshot
// share their equal containers, labels, annotations and owner references,
// as a binary snapshot's do, and that the snapshot is the one reading each
// document whole gives.
func TestJSONPodsShareEqualValues(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: []*corev1.Node{testutil.MakeNode().Name("n1").Obj()}, Pods: sharingPods()}
	snap.Sort()
	var js bytes.Buffer
	if err := WriteJSON(&js, snap, false); err != nil {
		t.Fatal(err)
	}
	got, _, err := LoadFiles(Stdin, bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	slow, err := loadFiles(Stdin, js.Bytes(), false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := testutil.Diff(slow.snapshot(), got); diff != "" {
		t.Fatalf("fast path against one document at a time (-slow +fast):\n%s", diff)
	}
	pods := map[string]int{}
	for i, p := range got.Pods {
		pods[p.Name] = i
	}
	a, b, host := got.Pods[pods["a"]], got.Pods[pods["b"]], got.Pods[pods["host"]]
	same := func(x, y any) bool { return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() }
	if !same(a.Spec.Containers, b.Spec.Containers) || !same(a.Labels, b.Labels) || !same(a.Annotations, b.Annotations) || !same(a.OwnerReferences, b.OwnerReferences) {
		t.Errorf("pods of one template share nothing")
	}
	if same(a.Spec.Containers, host.Spec.Containers) {
		t.Errorf("a pod with hostNetwork shares the containers of one without")
	}
	if got := host.Spec.Containers[0].Ports[0].HostPort; got != 9090 {
		t.Errorf("hostNetwork pod's hostPort = %d, want the containerPort 9090", got)
	}
}

// TestJSONSharedPartsAsWhole checks that pods whose shared parts are of an
// unusual shape read as reading each document whole reads them: the same
// snapshot, or the same error.
func TestJSONSharedPartsAsWhole(t *testing.T) {
	pod := func(name, metadata, spec string) string {
		return `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "` + name + `", "namespace": "ml", "uid": "u-` + name + `"` + metadata + `}, "spec": {"nodeName": "n1"` + spec + `}}`
	}
	containers := `, "containers": [{"name": "main", "image": "x", "resources": {"limits": {"cpu": "1"}}}]`
	tests := map[string][]string{
		"a label given twice":         {pod("a", `, "labels": {"x": "1"}`, containers), pod("b", `, "labels": {"x": "1", "x": "2"}`, containers)},
		"containers given twice":      {pod("a", "", containers), pod("b", "", containers+containers)},
		"an escaped key":              {pod("a", "", containers), pod("b", "", `, "contain\u0065rs": []`+containers)},
		"hostNetwork not a boolean":   {pod("a", "", containers+`, "hostNetwork": "yes"`)},
		"labels not a mapping":        {pod("a", `, "labels": 5`, containers)},
		"containers not a list":       {pod("a", "", `, "containers": {}`)},
		"a container field duplicate": {pod("a", "", `, "containers": [{"name": "main", "name": "other"}]`)},
		"null parts":                  {pod("a", `, "labels": null, "annotations": null, "ownerReferences": null`, `, "containers": null, "hostNetwork": null`)},
		"metadata null":               {`{"apiVersion": "v1", "kind": "Pod", "metadata": null}`},
		"hostNetwork false":           {pod("a", "", containers+`, "hostNetwork": false`), pod("b", "", containers)},
	}
	for name, pods := range tests {
		t.Run(name, func(t *testing.T) {
			list := []byte(`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}, ` + strings.Join(pods, ", ") + `]}`)
			fast, _, fastErr := LoadFiles(Stdin, bytes.NewReader(list))
			slow, slowErr := loadFiles(Stdin, list, false)
			if (fastErr == nil) != (slowErr == nil) || (fastErr != nil && fastErr.Error() != slowErr.Error()) {
				t.Fatalf("err = %v, one document at a time %v", fastErr, slowErr)
			}
			if slowErr != nil {
				return
			}
			if diff := testutil.Diff(slow.snapshot(), fast); diff != "" {
				t.Errorf("(-one document at a time +fast):\n%s", diff)
			}
		})
	}
}
