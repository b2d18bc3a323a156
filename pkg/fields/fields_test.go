package fields

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestReaderErrorsNameObjectAndField(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
		"metadata": map[string]any{"namespace": "ml", "name": "train"},
		"spec":     map[string]any{"minMember": "three", "minResources": map[string]any{"cpu": "x"}, "tasks": []any{map[string]any{"n": true}}},
	}}
	r := New(u)
	tests := []struct {
		name string
		read func() error
		want string
	}{
		{"not an integer", func() error { _, _, err := r.Int32(0, 0, "spec", "minMember"); return err },
			`podgroups.scheduling.x-k8s.io ml/train: spec.minMember: must be an integer, got string "three"`},
		{"bad quantity", func() error { _, err := r.Resources("spec", "minResources"); return err },
			`podgroups.scheduling.x-k8s.io ml/train: spec.minResources.cpu: invalid quantity "x": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		{"parent not an object", func() error { _, err := r.String("spec", "minMember", "x"); return err },
			`podgroups.scheduling.x-k8s.io ml/train: spec.minMember: must be an object, got string "three"`},
		{"within an item", func() error {
			item := r.Within(u.Object["spec"].(map[string]any)["tasks"].([]any)[0].(map[string]any))
			_, err := item.String("n")
			return Prefix(err, []string{"spec", "tasks[0]"})
		}, `podgroups.scheduling.x-k8s.io ml/train: spec.tasks[0].n: must be a string, got boolean true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.read(); err == nil || err.Error() != tt.want {
				t.Errorf("got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestDescribeCutsLongStrings(t *testing.T) {
	got := Describe(strings.Repeat("a", 500))
	if len(got) > 100 || !strings.HasSuffix(got, "(500 characters)") {
		t.Errorf("Describe of a long string = %q", got)
	}
}
