package volumebinding_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/volumebinding"
)

const (
	waitSC      = "wait-sc"
	immediateSC = "immediate-sc"
	noModeSC    = "no-mode-sc"
)

var classes = []*storagev1.StorageClass{
	testutil.MakeStorageClass(waitSC, storagev1.VolumeBindingWaitForFirstConsumer),
	testutil.MakeStorageClass(immediateSC, storagev1.VolumeBindingImmediate),
	testutil.MakeStorageClass(noModeSC, ""),
}

func rejected(reason string) *framework.Status {
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, reason)
}

func newPlugin(t *testing.T, args runtime.Object, objects framework.SnapshotObjects) *volumebinding.VolumeBinding {
	t.Helper()
	pl, err := volumebinding.New(args, framework.NewSnapshotHandle(nil, objects, 1))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return pl.(*volumebinding.VolumeBinding)
}

// The cases of kube-scheduler's TestVolumeBinding that a snapshot can decide
// (its binding and provisioning cases are not evaluated here), and the
// errors of its podHasPVCs.
func TestVolumeBinding(t *testing.T) {
	podA := func() *testutil.PodWrapper { return testutil.MakePod().Name("pod-a").UID("pod-a-uid") }
	ephemeralOwner := podA().EphemeralVolume("scratch").Obj()
	tests := []struct {
		name             string
		pod              *corev1.Pod
		nodes            []*corev1.Node
		pvcs             []*corev1.PersistentVolumeClaim
		pvs              []*corev1.PersistentVolume
		wantPreFilter    *framework.Status
		wantNotEvaluated string
		wantFilter       []*framework.Status
	}{
		{
			name:          "pod has no pvcs",
			pod:           podA().Obj(),
			nodes:         []*corev1.Node{testutil.MakeNode().Name("node-a").Obj()},
			wantPreFilter: framework.NewStatus(framework.Skip),
		},
		{
			name:       "all bound",
			pod:        podA().PVC("pvc-a").Obj(),
			nodes:      []*corev1.Node{testutil.MakeNode().Name("node-a").Obj()},
			pvcs:       []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").StorageClass(waitSC).BoundTo("pv-a").Obj()},
			pvs:        []*corev1.PersistentVolume{testutil.MakePV("pv-a").StorageClass(waitSC).Obj()},
			wantFilter: []*framework.Status{nil},
		},
		{
			name:          "PVC does not exist",
			pod:           podA().PVC("pvc-a").Obj(),
			wantPreFilter: rejected(`persistentvolumeclaim "pvc-a" not found`),
		},
		{
			name:          "part of the PVCs do not exist",
			pod:           podA().PVC("pvc-a").PVC("pvc-b").Obj(),
			pvcs:          []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").StorageClass(waitSC).BoundTo("pv-a").Obj()},
			wantPreFilter: rejected(`persistentvolumeclaim "pvc-b" not found`),
		},
		{
			name:          "immediate claims not bound",
			pod:           podA().PVC("pvc-a").Obj(),
			pvcs:          []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").StorageClass(immediateSC).Obj()},
			wantPreFilter: rejected("pod has unbound immediate PersistentVolumeClaims"),
		},
		{
			name:          "a claim without a class binds immediately",
			pod:           podA().PVC("pvc-a").Obj(),
			pvcs:          []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").Obj()},
			wantPreFilter: rejected("pod has unbound immediate PersistentVolumeClaims"),
		},
		{
			name:          "a claim whose class is not in the snapshot binds immediately",
			pod:           podA().PVC("pvc-a").Obj(),
			pvcs:          []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").StorageClass("gone").Obj()},
			wantPreFilter: rejected("pod has unbound immediate PersistentVolumeClaims"),
		},
		{
			name:          "a claim pre-bound to a volume but not confirmed counts as immediate",
			pod:           podA().PVC("pvc-a").Obj(),
			pvcs:          []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").StorageClass(waitSC).VolumeName("pv-a").Obj()},
			pvs:           []*corev1.PersistentVolume{testutil.MakePV("pv-a").Obj()},
			wantPreFilter: rejected("pod has unbound immediate PersistentVolumeClaims"),
		},
		{
			name:          "a class without a binding mode is an error",
			pod:           podA().PVC("pvc-a").Obj(),
			pvcs:          []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").StorageClass(noModeSC).Obj()},
			wantPreFilter: framework.AsStatus(errString(`VolumeBindingMode not set for StorageClass "no-mode-sc"`)),
		},
		{
			name:             "an unbound claim waiting for its first consumer is not evaluated",
			pod:              podA().PVC("pvc-a").Obj(),
			pvcs:             []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").StorageClass(waitSC).Obj()},
			wantNotEvaluated: `VolumeBinding not evaluated: PersistentVolumeClaim(s) "pvc-a" wait for their first consumer; binding them to a PersistentVolume or provisioning one is not evaluated`,
		},
		{
			name: "bound and unbound: not evaluated",
			pod:  podA().PVC("pvc-a").PVC("pvc-b").PVC("pvc-c").Obj(),
			pvcs: []*corev1.PersistentVolumeClaim{
				testutil.MakePVC("default", "pvc-a").StorageClass(waitSC).BoundTo("pv-a").Obj(),
				testutil.MakePVC("default", "pvc-b").StorageClass(waitSC).Obj(),
				testutil.MakePVC("default", "pvc-c").Annotation(corev1.BetaStorageClassAnnotation, waitSC).Obj(),
			},
			pvs:              []*corev1.PersistentVolume{testutil.MakePV("pv-a").NodeAffinityIn("foo", "bar").Obj()},
			wantNotEvaluated: `VolumeBinding not evaluated: PersistentVolumeClaim(s) "pvc-b", "pvc-c" wait for their first consumer; binding them to a PersistentVolume or provisioning one is not evaluated`,
		},
		{
			name: "an unbound immediate claim wins over one waiting for its consumer",
			pod:  podA().PVC("pvc-a").PVC("pvc-b").Obj(),
			pvcs: []*corev1.PersistentVolumeClaim{
				testutil.MakePVC("default", "pvc-a").StorageClass(waitSC).Obj(),
				testutil.MakePVC("default", "pvc-b").StorageClass(immediateSC).Obj(),
			},
			wantPreFilter: rejected("pod has unbound immediate PersistentVolumeClaims"),
		},
		{
			name: "pv not found",
			pod:  podA().PVC("pvc-a").Obj(),
			nodes: []*corev1.Node{
				testutil.MakeNode().Name("node-a").Obj(),
			},
			pvcs:       []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").StorageClass(waitSC).BoundTo("pv-a").Obj()},
			wantFilter: []*framework.Status{rejected("node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)")},
		},
		{
			name:          "pv not found, claim lost",
			pod:           podA().PVC("pvc-a").Obj(),
			pvcs:          []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").StorageClass(waitSC).BoundTo("pv-a").Phase(corev1.ClaimLost).Obj()},
			wantPreFilter: rejected(`persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"`),
		},
		{
			name:          "claim being deleted",
			pod:           podA().PVC("pvc-a").Obj(),
			pvcs:          []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").BoundTo("pv-a").Deleting().Obj()},
			wantPreFilter: rejected(`persistentvolumeclaim "pvc-a" is being deleted`),
		},
		{
			name:          "ephemeral volume whose claim is not created yet",
			pod:           podA().EphemeralVolume("scratch").Obj(),
			wantPreFilter: rejected(`waiting for ephemeral volume controller to create the persistentvolumeclaim "pod-a-scratch"`),
		},
		{
			name:          "ephemeral volume whose claim belongs to another pod",
			pod:           podA().EphemeralVolume("scratch").Obj(),
			pvcs:          []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pod-a-scratch").BoundTo("pv-a").Obj()},
			wantPreFilter: rejected("PVC default/pod-a-scratch was not created for pod default/pod-a (pod is not owner)"),
		},
		{
			name:       "ephemeral volume with its own bound claim",
			pod:        ephemeralOwner,
			nodes:      []*corev1.Node{testutil.MakeNode().Name("node-a").Label("zone", "a").Obj(), testutil.MakeNode().Name("node-b").Label("zone", "b").Obj()},
			pvcs:       []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pod-a-scratch").BoundTo("pv-a").OwnedBy(ephemeralOwner).Obj()},
			pvs:        []*corev1.PersistentVolume{testutil.MakePV("pv-a").NodeAffinityIn("zone", "a").Obj()},
			wantFilter: []*framework.Status{nil, rejected("node(s) didn't match PersistentVolume's node affinity")},
		},
		{
			name: "bound volume node affinity",
			pod:  podA().PVC("pvc-a").Obj(),
			nodes: []*corev1.Node{
				testutil.MakeNode().Name("node-a").Label("foo", "barbar").Obj(),
				testutil.MakeNode().Name("node-b").Label("foo", "bar").Obj(),
				testutil.MakeNode().Name("node-c").Obj(),
			},
			pvcs:       []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").StorageClass(waitSC).BoundTo("pv-a").Obj()},
			pvs:        []*corev1.PersistentVolume{testutil.MakePV("pv-a").NodeAffinityIn("foo", "bar").Obj()},
			wantFilter: []*framework.Status{rejected("node(s) didn't match PersistentVolume's node affinity"), nil, rejected("node(s) didn't match PersistentVolume's node affinity")},
		},
		{
			name: "the first failing claim decides",
			pod:  podA().PVC("pvc-a").PVC("pvc-b").Obj(),
			nodes: []*corev1.Node{
				testutil.MakeNode().Name("node-a").Label("foo", "x").Obj(),
				testutil.MakeNode().Name("node-b").Label("foo", "bar").Obj(),
			},
			pvcs: []*corev1.PersistentVolumeClaim{
				testutil.MakePVC("default", "pvc-a").BoundTo("pv-a").Obj(),
				testutil.MakePVC("default", "pvc-b").BoundTo("pv-missing").Obj(),
			},
			pvs: []*corev1.PersistentVolume{testutil.MakePV("pv-a").NodeAffinityIn("foo", "bar").Obj()},
			wantFilter: []*framework.Status{
				rejected("node(s) didn't match PersistentVolume's node affinity"),
				rejected("node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"),
			},
		},
		{
			name:  "matchFields in a volume's node affinity are ignored",
			pod:   podA().PVC("pvc-a").Obj(),
			nodes: []*corev1.Node{testutil.MakeNode().Name("node-a").Obj()},
			pvcs:  []*corev1.PersistentVolumeClaim{testutil.MakePVC("default", "pvc-a").BoundTo("pv-a").Obj()},
			pvs: []*corev1.PersistentVolume{func() *corev1.PersistentVolume {
				pv := testutil.MakePV("pv-a").Obj()
				pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchFields: []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{"node-z"}}},
				}}}}
				return pv
			}()},
			wantFilter: []*framework.Status{nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := newPlugin(t, nil, framework.SnapshotObjects{PersistentVolumeClaims: tt.pvcs, PersistentVolumes: tt.pvs, StorageClasses: classes})
			ctx := context.Background()
			state := framework.NewCycleState()
			res, status := pl.PreFilter(ctx, state, tt.pod, nil)
			if res != nil {
				t.Errorf("PreFilter result = %v, want nil", res)
			}
			if tt.wantNotEvaluated != "" {
				if !status.IsNotEvaluated() || !status.IsSkip() || status.Message() != tt.wantNotEvaluated ||
					!strings.HasPrefix(status.Message(), volumebinding.NotEvaluatedReason) {
					t.Errorf("PreFilter = %v, want not evaluated: %q", status, tt.wantNotEvaluated)
				}
				return
			}
			if diff := cmp.Diff(tt.wantPreFilter, status); diff != "" {
				t.Fatalf("PreFilter (-want +got):\n%s", diff)
			}
			if status.IsNotEvaluated() {
				t.Errorf("PreFilter status is marked not evaluated: %v", status)
			}
			if !status.IsSuccess() && !status.IsSkip() {
				return
			}
			if !status.IsSkip() {
				for i, n := range tt.nodes {
					got := pl.Filter(ctx, state, tt.pod, framework.NewNodeInfo(n))
					if diff := cmp.Diff(tt.wantFilter[i], got); diff != "" {
						t.Errorf("Filter on %s (-want +got):\n%s", n.Name, diff)
					}
				}
			}
			if s := pl.PreScore(ctx, state, tt.pod, nil); !s.IsSuccess() {
				t.Errorf("PreScore = %v, want success", s)
			}
			for _, n := range tt.nodes {
				if score, s := pl.Score(ctx, state, tt.pod, framework.NewNodeInfo(n)); score != 0 || !s.IsSuccess() {
					t.Errorf("Score on %s = %d, %v; want 0", n.Name, score, s)
				}
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestWithoutPreFilterState(t *testing.T) {
	pl := newPlugin(t, nil, framework.SnapshotObjects{})
	ctx := context.Background()
	n := framework.NewNodeInfo(testutil.MakeNode().Name("n").Obj())
	if s := pl.Filter(ctx, framework.NewCycleState(), &corev1.Pod{}, n); s.Code() != framework.Error {
		t.Errorf("Filter without PreFilter = %v, want an Error", s)
	}
	if s := pl.PreScore(ctx, framework.NewCycleState(), &corev1.Pod{}, nil); s.Code() != framework.Error {
		t.Errorf("PreScore without PreFilter = %v, want an Error", s)
	}
}

func TestNew(t *testing.T) {
	timeout := func(v int64) *int64 { return &v }
	tests := []struct {
		name    string
		args    runtime.Object
		wantErr string
	}{
		{name: "nil args"},
		{name: "typed nil args", args: (*configv1.VolumeBindingArgs)(nil)},
		{name: "zero timeout", args: &configv1.VolumeBindingArgs{BindTimeoutSeconds: timeout(0)}},
		{name: "wrong type", args: &configv1.NodeAffinityArgs{}, wantErr: "want args to be of type VolumeBindingArgs, got *v1.NodeAffinityArgs"},
		{
			name:    "negative timeout",
			args:    &configv1.VolumeBindingArgs{BindTimeoutSeconds: timeout(-10)},
			wantErr: "bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative value",
		},
		{
			name: "valid custom shape",
			args: &configv1.VolumeBindingArgs{Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 80, Score: 10}}},
		},
		{
			name:    "shape not sorted",
			args:    &configv1.VolumeBindingArgs{Shape: []configv1.UtilizationShapePoint{{Utilization: 50, Score: 1}, {Utilization: 50, Score: 2}}},
			wantErr: "shape[1].utilization: Invalid value: 50: values must be sorted in increasing order",
		},
		{
			name:    "shape out of range",
			args:    &configv1.VolumeBindingArgs{Shape: []configv1.UtilizationShapePoint{{Utilization: -1, Score: 11}}},
			wantErr: "[shape[0].utilization: Invalid value: -1: not in valid range [0, 100], shape[0].score: Invalid value: 11: not in valid range [0, 10]]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := volumebinding.New(tt.args, framework.NewSnapshotHandle(nil, framework.SnapshotObjects{}, 1))
			var got string
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("New error = %q, want %q", got, tt.wantErr)
			}
		})
	}
}
