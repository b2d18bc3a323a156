package dynamicresources_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

func taintRule(name string, sel *resourcev1.DeviceTaintSelector, effect resourcev1.DeviceTaintEffect) *resourcev1.DeviceTaintRule {
	return &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       resourcev1.DeviceTaintRuleSpec{DeviceSelector: sel, Taint: resourcev1.DeviceTaint{Key: "example.com/broken", Effect: effect}},
	}
}

// DeviceTaintRules taint the devices they select, as kube-scheduler's
// ListWithDeviceTaintRules applies them: a NoSchedule taint on two of a's
// four GPUs leaves a with two for a 3-GPU claim; a request that tolerates
// the taint may use them; a rule without a selector and a None effect keep
// nothing from anyone.
func TestDeviceTaintRules(t *testing.T) {
	snap := draCluster()
	snap.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{testutil.MakeClaimTemplate("default", "three", testutil.ExactRequest("gpus", "gpu", 3))}
	tolerant := testutil.ExactRequest("gpus", "gpu", 3)
	tolerant.Exactly.Tolerations = []resourcev1.DeviceToleration{{Key: "example.com/broken", Operator: resourcev1.DeviceTolerationOpExists}}
	snap.ResourceClaimTemplates = append(snap.ResourceClaimTemplates, testutil.MakeClaimTemplate("default", "tolerant", tolerant))
	snap.DeviceTaintRules = []*resourcev1.DeviceTaintRule{
		taintRule("gpu0", &resourcev1.DeviceTaintSelector{Driver: ptr.To(driver), Pool: ptr.To("a"), Device: ptr.To("gpu0")}, resourcev1.DeviceTaintEffectNoSchedule),
		taintRule("gpu1", &resourcev1.DeviceTaintSelector{Pool: ptr.To("a"), Device: ptr.To("gpu1")}, resourcev1.DeviceTaintEffectNoExecute),
		taintRule("no-selector", nil, resourcev1.DeviceTaintEffectNoSchedule),
		taintRule("none", &resourcev1.DeviceTaintSelector{}, resourcev1.DeviceTaintEffectNone),
		taintRule("other-driver", &resourcev1.DeviceTaintSelector{Driver: ptr.To("nic.example.com")}, resourcev1.DeviceTaintEffectNoSchedule),
	}
	s := newScheduler(t, snap)
	pod := testutil.MakePod().Name("p").UID("p").ClaimTemplate("gpus", "three").Obj()
	if diff := cmp.Diff([]string{"c"}, feasible(schedulePod(t, s, pod))); diff != "" {
		t.Errorf("feasible (-want +got):\n%s", diff)
	}
	fits := s.DeviceFit(context.Background(), pod, "a")
	if len(fits) != 1 || fits[0].String() != "gpus: 3 gpu wanted, 2 of 4 free (2 tainted)" {
		t.Errorf("fit on a = %v", fits)
	}
	tol := testutil.MakePod().Name("q").UID("q").ClaimTemplate("gpus", "tolerant").Obj()
	if diff := cmp.Diff([]string{"a", "c"}, feasible(schedulePod(t, s, tol))); diff != "" {
		t.Errorf("tolerating pod feasible (-want +got):\n%s", diff)
	}
	// The snapshot's slices are not changed.
	for _, rs := range snap.ResourceSlices {
		for _, d := range rs.Spec.Devices {
			if len(d.Taints) > 0 {
				t.Errorf("snapshot slice %s device %s got taints %v", rs.Name, d.Name, d.Taints)
			}
		}
	}
	// Every device of every slice gets the None taint; only a's two get the
	// others.
	tainted := 0
	for _, rs := range framework.TaintDevices(snap.ResourceSlices, snap.DeviceTaintRules) {
		for _, d := range rs.Spec.Devices {
			tainted += len(d.Taints)
		}
	}
	if tainted != 10+2 {
		t.Errorf("taints added = %d, want 12", tainted)
	}
}
