package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
)

// The fields of the suggestions that lead (issue #27) reach -o json.
func TestFromSuggestionLeading(t *testing.T) {
	e := &explain.Explanation{Suggestions: []explain.Suggestion{
		{Kind: explain.SuggestRepairDevicePlugin, Message: "m", Verified: true,
			Lost: []explain.LostDevices{{Node: "g2", Name: "nvidia.com/gpu", Capacity: 8}}},
		{Kind: explain.SuggestCreateClaim, Message: "c", Claims: []string{"ml/ckpt"}},
		{Kind: explain.SuggestTolerate, Message: "t", Verified: true, NearMiss: true, Tolerations: []string{"gpu=present:NoSchedule"}},
		{Kind: explain.SuggestMove, Message: "mv", Why: "w", Verified: true, Moves: []explain.Move{
			{Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "serving", Name: "a"}, Spec: corev1.PodSpec{PriorityClassName: "low"}}, From: "g0", To: "g2", Priority: 10},
			{Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "serving", Name: "b"}}, From: "g1", NoController: true}}},
	}}
	want := []Suggestion{
		{Kind: "RepairDevicePlugin", Message: "m", Verified: true, DevicesLost: []DevicesLost{{Node: "g2", Resource: "nvidia.com/gpu", Capacity: 8}}},
		{Kind: "CreateClaim", Message: "c", Claims: []string{"ml/ckpt"}},
		{Kind: "Tolerate", Message: "t", Verified: true, NearMiss: true, Tolerations: []string{"gpu=present:NoSchedule"}},
		{Kind: "Move", Message: "mv", Why: "w", Verified: true, Moves: []Move{{Pod: "serving/a", From: "g0", To: "g2", Priority: 10, PriorityClassName: "low"},
			{Pod: "serving/b", From: "g1", NoController: true}}},
	}
	if diff := cmp.Diff(want, FromExplanation(e).Suggestions); diff != "" {
		t.Errorf("suggestions (-want +got):\n%s", diff)
	}
}
