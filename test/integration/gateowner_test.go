package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// Issue #27, gates and who owns them: a gate of nobody kubectl-gang knows
// is named by the field manager that set it, as the real API server records
// it in the pod's managedFields (created here by a client whose
// FieldManager is my-controller). explain reads it live: the snapshot
// leaves managedFields out, so it GETs the gated pod's metadata.
func TestGateOwnerFromManagedFields(t *testing.T) {
	f := newGangFixture(t, "gateowner")
	f.node("n0", gpuNode)
	pod := f.pod("held", testutil.Res{"cpu": "1"}).SchedulingGate("example.com/quota").Obj()
	pods := env.Clientset().CoreV1().Pods(f.ns)
	if _, err := pods.Create(f.ctx, pod, metav1.CreateOptions{FieldManager: "my-controller"}); err != nil {
		t.Fatal(err)
	}
	read, err := pods.Get(f.ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := gang.GateSetBy(read, "example.com/quota"); got != "my-controller" {
		t.Fatalf("gate set by %q, want my-controller; managedFields %+v", got, read.ManagedFields)
	}
	// The pod as the snapshot keeps it names no one: the live read does.
	bare := read.DeepCopy()
	bare.ManagedFields = nil
	if got := gang.GateOwnerOf([]*corev1.Pod{bare}, "example.com/quota"); got != "" {
		t.Errorf("without managedFields, owner %q", got)
	}
	code, out, stderr := f.run("explain", "pod/held")
	flat := strings.Join(strings.Fields(out), " ")
	if want := "example.com/quota was set by manager my-controller (the pod's managedFields): whoever runs as it removes it"; code != 3 || !strings.Contains(flat, want) {
		t.Errorf("exit %d, want 3 and %q in:\n%s%s", code, want, out, stderr)
	}
}
