package integration

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Issue #27's torchrun row, live: a PyTorchJob read from the API server
// (explain pytorchjob/NAME) is elastic only when its own spec says so. Four
// workers that each take a whole node, on three nodes: lowering the minimum
// is a plain fix for an elastic job (spec.elasticPolicy.minReplicas 2), and
// marked as a change to the job itself for one of fixed size.
func TestLowerMinimumFollowsTheLivePyTorchJob(t *testing.T) {
	f := newGangFixture(t, "elastic")
	f.nodes(3)
	gvr := schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}
	installCRD(t, f, gvr, "PyTorchJob")
	job := func(name, elastic string) {
		obj := &unstructured.Unstructured{}
		f.must(yaml.Unmarshal([]byte(fmt.Sprintf(`apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: %[4]s, namespace: %[1]s}
spec:
%[5]s  pytorchReplicaSpecs:
    Worker:
      replicas: 4
      template:
        spec:
          nodeSelector: {%[2]s: %[1]s}
          tolerations:
          - {key: %[2]s, operator: Equal, value: %[1]s, effect: NoSchedule}
          containers:
          - name: pytorch
            image: registry.k8s.io/pause:3.10
            resources: %[3]s
`, f.ns, poolKey, wholeNodeYAML, name, elastic)), &obj.Object))
		f.createObject(gvr, obj)
	}
	job("fixed", "")
	job("elastic", "  elasticPolicy: {minReplicas: 2, maxReplicas: 4}\n")
	for _, tc := range []struct{ job, want string }{
		{"fixed", `but the job has a fixed size: PyTorchJob "fixed" has no spec.elasticPolicy: torchrun's world size is its 4 worker(s), and hangs with fewer, so the job itself must change to run with 3`},
		{"elastic", `lowering the minimum (--min-member) from 4 to 3 would let the gang start: then 3 member(s) fit at once and 1 wait(s); the job is elastic down to 2 member(s): PyTorchJob "elastic" is elastic: spec.elasticPolicy.minReplicas 2 of its 4 worker(s) (verified)`},
	} {
		code, out, stderr := f.run("explain", "pytorchjob/"+tc.job)
		if flat := strings.Join(strings.Fields(out), " "); code != 3 || !strings.Contains(flat, tc.want) {
			t.Errorf("explain pytorchjob/%s: exit %d, want 3 and %q in:\n%s%s", tc.job, code, tc.want, out, stderr)
		}
	}
}
