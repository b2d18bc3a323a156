package framework_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// PodLabelKeys follows the pods on the node: a pod added or removed changes
// it, on the NodeInfo and not on a clone taken before.
func TestPodLabelKeys(t *testing.T) {
	keys := func(ni *framework.NodeInfo) []string { return slices.Sorted(maps.Keys(ni.PodLabelKeys())) }
	ni := framework.NewNodeInfo(testutil.MakeNode().Name("n").Obj(),
		framework.NewPodInfo(testutil.MakePod().Name("a").Label("app", "x").Obj()))
	if got := keys(ni); !slices.Equal(got, []string{"app"}) {
		t.Fatalf("keys %v, want [app]", got)
	}
	before := ni.Clone()
	b := testutil.MakePod().Name("b").Label("jobset.sigs.k8s.io/job-key", "h").Obj()
	ni.AddPod(b)
	if got := keys(ni); !slices.Equal(got, []string{"app", "jobset.sigs.k8s.io/job-key"}) {
		t.Errorf("after adding b: keys %v", got)
	}
	if got := keys(before); !slices.Equal(got, []string{"app"}) {
		t.Errorf("the clone taken before: keys %v, want [app]", got)
	}
	if err := ni.RemovePod(b); err != nil {
		t.Fatal(err)
	}
	if got := keys(ni); !slices.Equal(got, []string{"app"}) {
		t.Errorf("after removing b: keys %v, want [app]", got)
	}
}
