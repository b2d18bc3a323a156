package gang_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/kueue"
)

func kueueMember(name, group, count string) *testutil.PodWrapper {
	w := member(name, 0).Label(kueue.PodGroupLabel, group).Req(testutil.Res{"nvidia.com/gpu": "8"})
	if count != "" {
		w = w.Annotation(kueue.TotalCountAnnotation, count)
	}
	return w
}

// A Kueue pod group is the pods carrying its label, its total count the
// minimum: by a member and by a selector of all of it (from -f:
// pkg/workload's TestKueuePodGroupFromManifests).
func TestKueuePodGroup(t *testing.T) {
	pods := []*corev1.Pod{kueueMember("w-0", "train", "3").Obj(), kueueMember("w-1", "train", "3").Obj(),
		kueueMember("x", "other", "1").Obj()}
	snap := snapshotOf(pods)
	g, _, err := gang.ResolvePod(snap, "ml", "w-1")
	if err != nil || g == nil || g.Source != kueue.Source || g.Name != "train" || g.MinMember != 3 || len(g.Members) != 2 {
		t.Fatalf("by a member: %+v, %v", g, err)
	}
	// Two of three exist: Kueue waits for the third, so the gang is invalid.
	if v := gang.Validate(g); v.Valid {
		t.Errorf("two of three members valid: %+v", v)
	}
	sel := labels.SelectorFromSet(labels.Set{kueue.PodGroupLabel: "train"})
	if g, err := gang.ResolveSelector(snap, "ml", sel, 0); err != nil || g.Source != kueue.Source || g.MinMember != 3 {
		t.Errorf("by its label: %+v, %v", g, err)
	}
	all, _ := labels.Parse(kueue.PodGroupLabel)
	if _, err := gang.ResolveSelector(snap, "ml", all, 0); err == nil || !strings.Contains(err.Error(), "belong to Kueue pod group(s) other, train") {
		t.Errorf("two groups: %v", err)
	}
	bad := snapshotOf([]*corev1.Pod{kueueMember("a", "g", "2").Obj(), kueueMember("b", "g", "3").Obj(), kueueMember("c", "h", "").Obj()})
	if _, _, err := gang.ResolvePod(bad, "ml", "a"); err == nil || err.Error() != "the pods of Kueue pod group g give different kueue.x-k8s.io/pod-group-total-count (2 and 3)" {
		t.Errorf("different counts: %v", err)
	}
	if _, _, err := gang.ResolvePod(bad, "ml", "c"); err == nil || !strings.Contains(err.Error(), "has no kueue.x-k8s.io/pod-group-total-count") {
		t.Errorf("no count: %v", err)
	}

}
