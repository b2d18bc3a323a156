package workload_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

func TestDecodeManifests(t *testing.T) {
	type obj struct{ APIVersion, Kind, Name string }
	tests := []struct {
		name    string
		data    string
		want    []obj
		wantErr string
	}{
		{
			name: "YAML documents, empty ones skipped, lists flattened",
			data: `---
apiVersion: v1
kind: Pod
metadata: {name: a}
---
# only a comment
---
apiVersion: v1
kind: List
items:
- apiVersion: batch/v1
  kind: Job
  metadata: {name: j}
- apiVersion: scheduling.x-k8s.io/v1alpha1
  kind: PodGroup
  metadata: {name: pg}
`,
			want: []obj{{"v1", "Pod", "a"}, {"batch/v1", "Job", "j"}, {"scheduling.x-k8s.io/v1alpha1", "PodGroup", "pg"}},
		},
		{
			name: "typed list items take the list's kind",
			data: "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n- metadata: {name: b}\n",
			want: []obj{{"v1", "Pod", "a"}, {"v1", "Pod", "b"}},
		},
		{
			name: "JSON stream",
			data: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"}}`,
			want: []obj{{"v1", "Pod", "a"}, {"v1", "Pod", "b"}},
		},
		{
			name: "JSON array",
			data: ` [{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}]`,
			want: []obj{{"v1", "Pod", "a"}},
		},
		{name: "empty", data: " \n", wantErr: "job.yaml: no objects"},
		{name: "only comments", data: "# nothing\n---\n", wantErr: "job.yaml: no objects"},
		{
			name:    "YAML syntax error points at the file's line",
			data:    "apiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: [a\n",
			wantErr: "job.yaml:7: invalid YAML: did not find expected ',' or ']'",
		},
		{
			name:    "no kind",
			data:    "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n",
			wantErr: "job.yaml: document 2 (line 5): not a Kubernetes object: apiVersion and kind are required",
		},
		{
			name:    "a list item that is not an object",
			data:    "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n- 3\n",
			wantErr: "job.yaml: document 1 (line 1): item 2: not a Kubernetes object: int64 3",
		},
		{
			name:    "a document that is not an object",
			data:    "- a\n- b\n",
			wantErr: `job.yaml: document 1 (line 1): item 1: not a Kubernetes object: string "a"`,
		},
		{
			name:    "scalar document",
			data:    "hello\n",
			wantErr: `job.yaml: document 1 (line 1): not a Kubernetes object: string "hello"`,
		},
		{
			name:    "bad JSON",
			data:    `{"apiVersion":"v1","kind":"Pod"} {"kind":`,
			wantErr: "job.yaml: document 2: invalid JSON: unexpected EOF",
		},
		{
			name:    "list items not a list",
			data:    "apiVersion: v1\nkind: List\nitems: 3\n",
			wantErr: "job.yaml: document 1 (line 1): List: items must be a list",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := workload.Decode([]byte(tt.data), "job.yaml")
			testutil.CheckErr(t, err, tt.wantErr)
			var got []obj
			for _, o := range objs {
				got = append(got, obj{o.GetAPIVersion(), o.GetKind(), o.GetName()})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeManifests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeManifestsKeepsIntegers(t *testing.T) {
	objs, err := workload.Decode([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 3}\n"), "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := objs[0].Object["spec"].(map[string]any)["replicas"]; got != int64(3) {
		t.Errorf("replicas = %#v, want int64(3)", got)
	}
	_, err = workload.Decode(nil, "<stdin>")
	var me *workload.Error
	if !errors.As(err, &me) || me.Source != "<stdin>" {
		t.Errorf("got %v, want a *ManifestError for <stdin>", err)
	}
}
