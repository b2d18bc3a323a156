package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
)

// The fields of the suggestions that lead (issue #27) reach -o json.
func TestFromSuggestionLeading(t *testing.T) {
	e := &explain.Explanation{Suggestions: []explain.Suggestion{
		{Kind: explain.SuggestRepairDevicePlugin, Message: "m", Verified: true,
			Lost: []explain.LostDevices{{Node: "g2", Name: "nvidia.com/gpu", Capacity: 8}}},
		{Kind: explain.SuggestCreateClaim, Message: "c", Claims: []string{"ml/ckpt"}},
		{Kind: explain.SuggestTolerate, Message: "t", Verified: true, NearMiss: true, Tolerations: []string{"gpu=present:NoSchedule"}},
	}}
	want := []Suggestion{
		{Kind: "RepairDevicePlugin", Message: "m", Verified: true, DevicesLost: []DevicesLost{{Node: "g2", Resource: "nvidia.com/gpu", Capacity: 8}}},
		{Kind: "CreateClaim", Message: "c", Claims: []string{"ml/ckpt"}},
		{Kind: "Tolerate", Message: "t", Verified: true, NearMiss: true, Tolerations: []string{"gpu=present:NoSchedule"}},
	}
	if diff := cmp.Diff(want, FromExplanation(e).Suggestions); diff != "" {
		t.Errorf("suggestions (-want +got):\n%s", diff)
	}
}
