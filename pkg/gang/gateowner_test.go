package gang_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// managed is a managedFields entry as the API server writes one for a
// manager that set the pod's scheduling gates (fieldsV1 keys a list of
// maps by its merge key: k:{"name":...}).
func managed(manager, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// Issue #27: any gate names its owner, the field manager that set it; the
// well-known gates keep their words beside it.
func TestGateOwnerOf(t *testing.T) {
	pod := testutil.MakePod().Namespace("ml").Name("p").SchedulingGate("example.com/quota").SchedulingGate("kueue.x-k8s.io/admission").Obj()
	pod.ManagedFields = []metav1.ManagedFieldsEntry{
		managed("kubelet", `{"f:status":{"f:phase":{}}}`),
		managed("my-controller", `{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:name":{}}},"f:schedulingGates":{".":{},"k:{\"name\":\"example.com/quota\"}":{".":{},"f:name":{}}}}}`),
		managed("kueue-webhook", `{"f:spec":{"f:schedulingGates":{"k:{\"name\":\"kueue.x-k8s.io/admission\"}":{".":{},"f:name":{}}}}}`),
	}
	other := testutil.MakePod().Namespace("ml").Name("q").SchedulingGate("example.com/other").Obj()
	pods := []*corev1.Pod{other, pod}
	for gate, want := range map[string]string{
		"example.com/quota":        "set by manager my-controller (the pod's managedFields): whoever runs as it removes it",
		"kueue.x-k8s.io/admission": "Kueue's: it removes it once a ClusterQueue admits the workload (check the Workload's conditions) (set by manager kueue-webhook)",
		"example.com/other":        "",
		"example.com/absent":       "",
	} {
		if got := gang.GateOwnerOf(pods, gate); got != want {
			t.Errorf("%s: %q, want %q", gate, got, want)
		}
	}
	if got, want := gang.GateOwnersOf(pods, []string{"example.com/other", "example.com/quota", "scheduling.volcano.sh/queue-allocation-gate"}),
		"example.com/quota was set by manager my-controller (the pod's managedFields): whoever runs as it removes it; "+
			"scheduling.volcano.sh/queue-allocation-gate is Volcano's: it removes it once the pod's queue has room for it"; got != want {
		t.Errorf("owners %q\nwant %q", got, want)
	}
	// A status subresource entry and unparsable fields name no one.
	pod.ManagedFields = []metav1.ManagedFieldsEntry{managed("x", `{`), managed("y", `{"f:spec":{"f:schedulingGates":{"k:{\"name\":\"example.com/quota\"}":{}}}}`)}
	pod.ManagedFields[1].Subresource = "status"
	if got := gang.GateSetBy(pod, "example.com/quota"); got != "" {
		t.Errorf("set by %q, want no one", got)
	}
}
