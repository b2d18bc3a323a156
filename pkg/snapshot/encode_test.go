package snapshot

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// TestWriteStreamsWhatThePrinterPrints: the streaming writers give, byte for
// byte, what cli-runtime's printers give for the whole List (managed fields
// left out unless asked for), on the example cluster and on an empty one.
func TestWriteStreamsWhatThePrinterPrints(t *testing.T) {
	example, _, err := LoadFiles("../../examples/gpu-cluster.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	// A live pod carries managed fields; a multi-line annotation nests a
	// block scalar in the YAML.
	pod := example.Pods[0].DeepCopy()
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1"}}
	pod.Annotations = map[string]string{"note": "first line\n\nthird line\n", "html": "<a & b>"}
	example.Pods[0] = pod
	addDRAObjects(example)
	example.Sort()

	for name, snap := range map[string]*schedule.Snapshot{"example": example, "empty": {}} {
		for _, showManaged := range []bool{false, true} {
			list, err := ToList(snap)
			if err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{"json", "yaml"} {
				var printer printers.ResourcePrinter = &printers.JSONPrinter{}
				write := WriteJSON
				if format == "yaml" {
					printer, write = &printers.YAMLPrinter{}, WriteYAML
				}
				if !showManaged {
					printer = &printers.OmitManagedFieldsPrinter{Delegate: printer}
				}
				var want, got bytes.Buffer
				if err := printer.PrintObj(list.DeepCopy(), &want); err != nil {
					t.Fatal(err)
				}
				if err := write(&got, snap, showManaged); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.String(), got.String()); diff != "" {
					t.Errorf("%s, %s, managed fields %v (-printer +streamed):\n%s", name, format, showManaged, diff)
				}
			}
		}
	}
}
