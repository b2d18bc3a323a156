package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// The device plugin repair names what was lost; cpu and memory below
// capacity are reserved by design (system-reserved, kube-reserved), not a
// repair.
func TestLostDevices(t *testing.T) {
	snap, pod := rowsDevicePlugin()
	e, err := Pod(context.Background(), snap, pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := find(e.Suggestions, SuggestRepairDevicePlugin)
	if s == nil || len(s.Lost) != 1 || s.Lost[0] != (LostDevices{Node: "g2", Name: "nvidia.com/gpu", Capacity: 8, Allocatable: 0}) {
		t.Errorf("device plugin repair %+v, want g2's 8 nvidia.com/gpu lost", s)
	}
	node := snap.Nodes[0].DeepCopy()
	node.Status.Allocatable["cpu"] = resource.MustParse("90")
	node.Status.Capacity["hugepages-2Mi"] = resource.MustParse("1Gi")
	if got := lostDevices(node, map[corev1.ResourceName]int64{"cpu": 1000, "hugepages-2Mi": 1, "nvidia.com/gpu": 8}); len(got) != 0 {
		t.Errorf("lost on a node with reserved cpu and hugepages: %+v, want none", got)
	}
	for name, want := range map[corev1.ResourceName]bool{"nvidia.com/gpu": true, "example.com/foo": true, "cpu": false,
		"hugepages-2Mi": false, "kubernetes.io/foo": false, "node.kubernetes.io/foo": false} {
		if got := isExtended(name); got != want {
			t.Errorf("isExtended(%s) = %v, want %v", name, got, want)
		}
	}
}

// A near miss is corrected in place; a taint no toleration comes near gets
// a toleration of its own; a toleration whose effect differs is kept and
// one with the taint's effect added; a key that differs only by case is
// corrected (operator Exists too); an Exists toleration without a key, or
// one that differs in both effect and value, is no near miss.
func TestNearMisses(t *testing.T) {
	_, pod := rowsNearMiss()
	taints := []corev1.Taint{{Key: "gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}, {Key: "ib", Effect: corev1.TaintEffectNoSchedule}}
	got := corrected(pod.Spec.Tolerations, taints)
	want := []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "present", Effect: corev1.TaintEffectNoSchedule},
		{Key: "ib", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("corrected tolerations (-want +got):\n%s", diff)
	}
	if m := nearMisses(pod, taints); len(m) != 1 || m[0].Taint.Key != "gpu" {
		t.Errorf("near misses %+v, want the gpu one", m)
	}
	tol := func(key string, op corev1.TolerationOperator, value string, effect corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: op, Value: value, Effect: effect}
	}
	gpu := taints[0]
	for _, tc := range []struct {
		name    string
		tol     corev1.Toleration
		differs []string
		fixed   []corev1.Toleration
	}{
		{"another effect", tol("gpu", corev1.TolerationOpEqual, "present", corev1.TaintEffectNoExecute), []string{"effect"},
			[]corev1.Toleration{tol("gpu", corev1.TolerationOpEqual, "present", corev1.TaintEffectNoExecute), tol("gpu", corev1.TolerationOpEqual, "present", corev1.TaintEffectNoSchedule)}},
		{"Exists with the key in another case", tol("GPU", corev1.TolerationOpExists, "", ""), []string{"key"},
			[]corev1.Toleration{tol("gpu", corev1.TolerationOpExists, "", "")}},
		{"key case and value", tol("Gpu", corev1.TolerationOpEqual, "true", corev1.TaintEffectNoSchedule), []string{"key", "value"},
			[]corev1.Toleration{tol("gpu", corev1.TolerationOpEqual, "present", corev1.TaintEffectNoSchedule)}},
		{"effect and value both", tol("gpu", corev1.TolerationOpEqual, "true", corev1.TaintEffectNoExecute), nil, nil},
		{"Exists without a key", tol("", corev1.TolerationOpExists, "", corev1.TaintEffectNoExecute), nil, nil},
		{"another key", tol("gpus", corev1.TolerationOpExists, "", ""), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod.DeepCopy()
			p.Spec.Tolerations = []corev1.Toleration{tc.tol}
			m := nearMisses(p, []corev1.Taint{gpu})
			if tc.differs == nil {
				if len(m) != 0 {
					t.Errorf("near misses %+v, want none", m)
				}
				return
			}
			if len(m) != 1 || !slices.Equal(m[0].Differs, tc.differs) {
				t.Fatalf("near misses %+v, want one differing in %v", m, tc.differs)
			}
			if diff := cmp.Diff(tc.fixed, corrected(p.Spec.Tolerations, []corev1.Taint{gpu})); diff != "" {
				t.Errorf("corrected (-want +got):\n%s", diff)
			}
		})
	}
}

// The init container that sets the pod's request, as PodRequests
// (k8s.io/component-helpers/resource) computes it: a sidecar started before
// it counts with it, and with the containers.
func TestInitContainerSets(t *testing.T) {
	_, pod := rowsInit()
	if got := initContainerSets(pod, "cpu"); got != "init container prepare asks 40 cpu, which sets the pod's request (the largest init container or the sum of the containers, here 4 cpu)" {
		t.Errorf("cpu: %q", got)
	}
	always := corev1.ContainerRestartPolicyAlways
	side := pod.DeepCopy()
	side.Spec.InitContainers = append([]corev1.Container{{Name: "proxy", RestartPolicy: &always,
		Resources: corev1.ResourceRequirements{Requests: testutil.Res{"cpu": "2"}.List()}}}, side.Spec.InitContainers...)
	if got := initContainerSets(side, "cpu"); !strings.Contains(got, "init container prepare asks 40 cpu") || !strings.Contains(got, "here 6 cpu") {
		t.Errorf("with a sidecar: %q", got)
	}
	if got := initContainerSets(pod, "memory"); got != "" {
		t.Errorf("memory set by the containers, got %q", got)
	}
	small := pod.DeepCopy()
	small.Spec.InitContainers[0].Resources.Requests = testutil.Res{"cpu": "3"}.List()
	if got := initContainerSets(small, "cpu"); got != "" {
		t.Errorf("init container below the containers' sum named: %q", got)
	}
}

// Beside the quota, a preemption whose victims run in the gang's namespace
// says their eviction may free what the quota counts; it is not verified.
func TestQuotaBesidePreemption(t *testing.T) {
	snap, g := rowsQuota()
	snap.Nodes = testutil.GPUNodes("zone-a", 6)
	for i, node := range []string{"zone-a-4", "zone-a-5"} {
		snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("low-%d", i)).Node(node).
			Priority("low", 10).Req(testutil.Res{"nvidia.com/gpu": "8"}).Obj())
	}
	for _, p := range g.Members {
		p.Spec.PriorityClassName, p.Spec.Priority = "high", ptrTo(int32(1000))
	}
	e, err := Gang(context.Background(), snap, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Suggestions) == 0 || e.Suggestions[0].Kind != SuggestQuota {
		t.Fatalf("suggestions %v, want the quota first", kinds(e.Suggestions))
	}
	pre := find(e.Suggestions, SuggestPreempt)
	if pre == nil || pre.Verified || !strings.HasSuffix(pre.Message, "(proven by placing, but the quota would still refuse the new members, unless evicting the victims in ml frees enough of it)") {
		t.Errorf("preemption %+v, want it not verified, saying the quota may be freed by its victims", pre)
	}
}

// The move's choice: nodes whose clearing moves fewer pods, then pods a
// PodDisruptionBudget allows to go, pods a controller recreates; a pod that
// finds no room again is named as evicted.
func TestMoveChoice(t *testing.T) {
	t.Run("fewest pods", func(t *testing.T) {
		snap, g := rowsFragmented()
		// Even nodes hold two 2-GPU pods instead of one 4-GPU pod.
		var pods []*corev1.Pod
		for i, p := range snap.Pods {
			if i%2 == 1 {
				pods = append(pods, p)
				continue
			}
			for j := range 2 {
				q := p.DeepCopy()
				q.Name = fmt.Sprintf("%s-%d", p.Name, j)
				q.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("2")
				pods = append(pods, q)
			}
		}
		snap.Pods = pods
		e, err := Gang(context.Background(), snap, g, Options{})
		s := firstSuggestion(t, e, err)
		wantWords(t, s, SuggestMove, true, "moving 10 lower-priority pod(s) would free 10 whole node(s)")
		for _, m := range s.Moves {
			if m.Pod.Spec.Containers[0].Resources.Requests.Name("nvidia.com/gpu", resource.DecimalSI).Value() != 4 {
				t.Errorf("moved %s, a 2-GPU pod: a node of one 4-GPU pod moves fewer", m.Pod.Name)
			}
		}
	})
	t.Run("budgets and controllers", func(t *testing.T) {
		snap, g := rowsFragmented()
		for i, p := range snap.Pods {
			switch {
			case i < 20:
				p.Labels["tier"] = "guarded" // a budget that allows no disruption
			case i < 30:
				p.OwnerReferences = nil // no controller
			case i < 35:
				p.Labels["scheduling.x-k8s.io/pod-group"] = "infer" // a gang's members: moved last
			}
		}
		snap.PodDisruptionBudgets = []*policyv1.PodDisruptionBudget{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "serving", Name: "guarded"},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "guarded"}}},
		}}
		e, err := Gang(context.Background(), snap, g, Options{})
		s := firstSuggestion(t, e, err)
		wantWords(t, s, SuggestMove, true, "no controller owns serving/infer-20, serving/infer-21, serving/infer-22 and 2 more: nothing recreates them")
		var orphans int
		for _, m := range s.Moves {
			if m.Pod.Labels["tier"] == "guarded" || m.Gang != "" {
				t.Errorf("moved %s, which its budget protects or a gang holds (%q)", m.Pod.Name, m.Gang)
			}
			if m.NoController {
				orphans++
			}
		}
		// The 5 pods a controller owns and no budget or gang holds, then 5
		// without a controller rather than members of a gang.
		if s.PDBViolations != 0 || orphans != 5 {
			t.Errorf("%d budget violation(s), %d pod(s) without a controller moved: want 0 and 5", s.PDBViolations, orphans)
		}
	})
	t.Run("members of a gang", func(t *testing.T) {
		snap, g := rowsFragmented()
		for _, p := range snap.Pods {
			p.Labels["scheduling.x-k8s.io/pod-group"] = "infer"
		}
		e, err := Gang(context.Background(), snap, g, Options{})
		s := firstSuggestion(t, e, err)
		wantWords(t, s, SuggestMove, true, "moved pods are members of PodGroup(s) serving/infer, which a move disturbs (each pod is placed again alone here, not as its gang)")
	})
	t.Run("no room again", func(t *testing.T) {
		// Three 8-GPU nodes, each with a 5-GPU pod: 9 GPUs free in 3-GPU
		// holes; the one moved finds no 5 GPUs free after the member.
		snap, g := rowsFragmented()
		snap.Nodes, snap.Pods = snap.Nodes[:3], snap.Pods[:3]
		for _, p := range snap.Pods {
			p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("5")
		}
		g.Members, g.MinMember = g.Members[:1], 1
		e, err := Gang(context.Background(), snap, g, Options{})
		s := firstSuggestion(t, e, err)
		wantWords(t, s, SuggestMove, true, "serving/infer-00 (priority 10, low) off zone-a-0",
			"1 of them (serving/infer-00) would find no room once the gang is placed and stay Pending: for them it is an eviction, not a move")
	})
}
