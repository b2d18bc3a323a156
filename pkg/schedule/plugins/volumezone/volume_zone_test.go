package volumezone_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/volumezone"
)

const (
	betaZone   = corev1.LabelFailureDomainBetaZone
	betaRegion = corev1.LabelFailureDomainBetaRegion
	zone       = corev1.LabelTopologyZone
	region     = corev1.LabelTopologyRegion
)

func podWithClaim(claim string) *corev1.Pod {
	return testutil.MakePod().Name("pod_1").PVC(claim).Obj()
}

func labeledNode(labels ...string) *corev1.Node {
	w := testutil.MakeNode()
	w.Node.Name = "host1"
	for i := 0; i+1 < len(labels); i += 2 {
		w.Label(labels[i], labels[i+1])
	}
	return w.Obj()
}

func newPlugin(t *testing.T, objects framework.SnapshotObjects) *volumezone.VolumeZone {
	t.Helper()
	pl, err := volumezone.New(nil, framework.NewSnapshotHandle(nil, objects, 1))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return pl.(*volumezone.VolumeZone)
}

type zoneCase struct {
	name          string
	pod           *corev1.Pod
	node          *corev1.Node
	wantPreFilter *framework.Status
	want          *framework.Status
}

func run(t *testing.T, objects framework.SnapshotObjects, tests []zoneCase) {
	t.Helper()
	pl := newPlugin(t, objects)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			state := framework.NewCycleState()
			_, status := pl.PreFilter(ctx, state, tt.pod, nil)
			if diff := cmp.Diff(tt.wantPreFilter, status); diff != "" {
				t.Errorf("PreFilter (-want +got):\n%s", diff)
			}
			got := pl.Filter(ctx, state, tt.pod, framework.NewNodeInfo(tt.node))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

var conflict = framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had no available volume zone")

// The cases of kube-scheduler's TestSingleZone.
func TestSingleZone(t *testing.T) {
	objects := framework.SnapshotObjects{
		PersistentVolumes: []*corev1.PersistentVolume{
			testutil.MakePV("Vol_1").Label(betaZone, "us-west1-a").Obj(),
			testutil.MakePV("Vol_2").Label(betaRegion, "us-west1").Label("uselessLabel", "none").Obj(),
			testutil.MakePV("Vol_3").Label(betaRegion, "us-west1").Obj(),
			testutil.MakePV("Vol_Stable_1").Label(zone, "us-west1-a").Obj(),
			testutil.MakePV("Vol_Stable_2").Label(region, "us-west1").Label("uselessLabel", "none").Obj(),
			testutil.MakePV("Vol_Stable_3").Label(zone, "us-west1-a").Label(region, "us-west1-a").Obj(),
		},
		PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{
			testutil.MakePVC("default", "PVC_1").VolumeName("Vol_1").Obj(),
			testutil.MakePVC("default", "PVC_2").VolumeName("Vol_2").Obj(),
			testutil.MakePVC("default", "PVC_3").VolumeName("Vol_3").Obj(),
			testutil.MakePVC("default", "PVC_4").VolumeName("Vol_not_exist").Obj(),
			testutil.MakePVC("default", "PVC_Stable_1").VolumeName("Vol_Stable_1").Obj(),
			testutil.MakePVC("default", "PVC_Stable_2").VolumeName("Vol_Stable_2").Obj(),
			testutil.MakePVC("default", "PVC_Stable_3").VolumeName("Vol_Stable_3").Obj(),
		},
	}
	run(t, objects, []zoneCase{
		{name: "pod without volume", pod: testutil.MakePod().Name("pod_1").Obj(), node: labeledNode(betaZone, "us-west1-a"), wantPreFilter: framework.NewStatus(framework.Skip)},
		{name: "node without labels", pod: podWithClaim("PVC_1"), node: labeledNode()},
		{name: "beta zone label matched", pod: podWithClaim("PVC_1"), node: labeledNode(betaZone, "us-west1-a", "uselessLabel", "none")},
		{name: "beta region label matched", pod: podWithClaim("PVC_2"), node: labeledNode(betaRegion, "us-west1", "uselessLabel", "none")},
		{name: "beta region label doesn't match", pod: podWithClaim("PVC_2"), node: labeledNode(betaRegion, "no_us-west1", "uselessLabel", "none"), want: conflict},
		{name: "beta zone label doesn't match", pod: podWithClaim("PVC_1"), node: labeledNode(betaZone, "no_us-west1-a", "uselessLabel", "none"), want: conflict},
		{name: "zone label matched", pod: podWithClaim("PVC_Stable_1"), node: labeledNode(zone, "us-west1-a", "uselessLabel", "none")},
		{name: "region label matched", pod: podWithClaim("PVC_Stable_2"), node: labeledNode(region, "us-west1", "uselessLabel", "none")},
		{name: "region label doesn't match", pod: podWithClaim("PVC_Stable_2"), node: labeledNode(region, "no_us-west1", "uselessLabel", "none"), want: conflict},
		{name: "zone label doesn't match", pod: podWithClaim("PVC_Stable_1"), node: labeledNode(zone, "no_us-west1-a", "uselessLabel", "none"), want: conflict},
		{name: "pv with zone and region, node with only zone", pod: podWithClaim("PVC_Stable_3"), node: labeledNode(zone, "us-west1-a"), want: conflict},
		{name: "pv with zone, node with beta zone", pod: podWithClaim("PVC_Stable_1"), node: labeledNode(betaZone, "us-west1-a"), want: conflict},
		{name: "pv with beta label, node with ga label, matched", pod: podWithClaim("PVC_1"), node: labeledNode(zone, "us-west1-a")},
		{name: "pv with beta label, node with ga label, don't match", pod: podWithClaim("PVC_1"), node: labeledNode(zone, "us-west1-b"), want: conflict},
		{
			name:          "claim bound to a volume missing from the snapshot",
			pod:           podWithClaim("PVC_4"),
			node:          labeledNode(zone, "us-west1-a"),
			wantPreFilter: framework.NewStatus(framework.UnschedulableAndUnresolvable, `persistentvolume "Vol_not_exist" not found`),
			want:          framework.NewStatus(framework.UnschedulableAndUnresolvable, `persistentvolume "Vol_not_exist" not found`),
		},
		{
			name:          "claim missing from the snapshot",
			pod:           podWithClaim("missing"),
			node:          labeledNode(zone, "us-west1-a"),
			wantPreFilter: framework.NewStatus(framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "missing" not found`),
			want:          framework.NewStatus(framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "missing" not found`),
		},
		{
			name:          "volume with an empty claim name",
			pod:           podWithClaim(""),
			node:          labeledNode(zone, "us-west1-a"),
			wantPreFilter: framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name"),
			want:          framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name"),
		},
	})
}

// The cases of kube-scheduler's TestMultiZone.
func TestMultiZone(t *testing.T) {
	objects := framework.SnapshotObjects{
		PersistentVolumes: []*corev1.PersistentVolume{
			testutil.MakePV("Vol_1").Label(betaZone, "us-west1-a").Obj(),
			testutil.MakePV("Vol_2").Label(betaZone, "us-west1-b").Label("uselessLabel", "none").Obj(),
			testutil.MakePV("Vol_3").Label(betaZone, "us-west1-c__us-west1-a").Obj(),
			testutil.MakePV("Vol_Stable_1").Label(zone, "us-west1-a").Obj(),
			testutil.MakePV("Vol_Stable_2").Label(zone, "us-west1-c__us-west1-a").Obj(),
			testutil.MakePV("Vol_Bad").Label(zone, "us-west1-c____us-west1-a").Obj(),
		},
		PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{
			testutil.MakePVC("default", "PVC_1").VolumeName("Vol_1").Obj(),
			testutil.MakePVC("default", "PVC_2").VolumeName("Vol_2").Obj(),
			testutil.MakePVC("default", "PVC_3").VolumeName("Vol_3").Obj(),
			testutil.MakePVC("default", "PVC_Stable_1").VolumeName("Vol_Stable_1").Obj(),
			testutil.MakePVC("default", "PVC_Stable_2").VolumeName("Vol_Stable_2").Obj(),
			testutil.MakePVC("default", "PVC_Bad").VolumeName("Vol_Bad").Obj(),
		},
	}
	run(t, objects, []zoneCase{
		{name: "node without labels", pod: podWithClaim("PVC_3"), node: labeledNode()},
		{name: "beta zone label matched", pod: podWithClaim("PVC_3"), node: labeledNode(betaZone, "us-west1-a", "uselessLabel", "none")},
		{name: "beta zone label doesn't match", pod: podWithClaim("PVC_1"), node: labeledNode(betaZone, "us-west1-b", "uselessLabel", "none"), want: conflict},
		{name: "zone label matched", pod: podWithClaim("PVC_Stable_2"), node: labeledNode(zone, "us-west1-a", "uselessLabel", "none")},
		{name: "zone label doesn't match", pod: podWithClaim("PVC_Stable_1"), node: labeledNode(zone, "us-west1-b", "uselessLabel", "none"), want: conflict},
		{
			name:          "a label value with an empty zone is ignored",
			pod:           podWithClaim("PVC_Bad"),
			node:          labeledNode(zone, "us-west1-b"),
			wantPreFilter: framework.NewStatus(framework.Skip),
		},
	})
}

// The cases of kube-scheduler's TestWithBinding. Its fake lister names the
// resource storageclasses; the real informer lister, whose message users see,
// names it storageclass.
func TestWithBinding(t *testing.T) {
	noMode := testutil.MakeStorageClass("Class_Immediate", "")
	objects := framework.SnapshotObjects{
		StorageClasses: []*storagev1.StorageClass{
			noMode,
			testutil.MakeStorageClass("Class_Wait", storagev1.VolumeBindingWaitForFirstConsumer),
			testutil.MakeStorageClass("Class_Set_Immediate", storagev1.VolumeBindingImmediate),
		},
		PersistentVolumes: []*corev1.PersistentVolume{testutil.MakePV("Vol_1").Label(betaZone, "us-west1-a").Obj()},
		PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{
			testutil.MakePVC("default", "PVC_1").VolumeName("Vol_1").Obj(),
			testutil.MakePVC("default", "PVC_NoSC").StorageClass("Class_0").Obj(),
			testutil.MakePVC("default", "PVC_EmptySC").Obj(),
			testutil.MakePVC("default", "PVC_WaitSC").StorageClass("Class_Wait").Obj(),
			testutil.MakePVC("default", "PVC_ImmediateSC").StorageClass("Class_Immediate").Obj(),
			testutil.MakePVC("default", "PVC_SetImmediateSC").StorageClass("Class_Set_Immediate").Obj(),
			testutil.MakePVC("default", "PVC_BetaAnnotation").Annotation(corev1.BetaStorageClassAnnotation, "Class_Wait").StorageClass("Class_0").Obj(),
		},
	}
	node := labeledNode(betaZone, "us-west1-a", "uselessLabel", "none")
	rejected := func(msg string) *framework.Status {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, msg)
	}
	run(t, objects, []zoneCase{
		{name: "label zone failure domain matched", pod: podWithClaim("PVC_1"), node: node},
		{
			name:          "unbound volume empty storage class",
			pod:           podWithClaim("PVC_EmptySC"),
			node:          node,
			wantPreFilter: rejected("PersistentVolumeClaim had no pv name and storageClass name"),
			want:          rejected("PersistentVolumeClaim had no pv name and storageClass name"),
		},
		{
			name:          "unbound volume no storage class",
			pod:           podWithClaim("PVC_NoSC"),
			node:          node,
			wantPreFilter: rejected(`storageclass.storage.k8s.io "Class_0" not found`),
			want:          rejected(`storageclass.storage.k8s.io "Class_0" not found`),
		},
		{
			name:          "unbound volume, class without binding mode",
			pod:           podWithClaim("PVC_ImmediateSC"),
			node:          node,
			wantPreFilter: rejected(`VolumeBindingMode not set for StorageClass "Class_Immediate"`),
			want:          rejected(`VolumeBindingMode not set for StorageClass "Class_Immediate"`),
		},
		{
			name:          "unbound volume immediate binding mode",
			pod:           podWithClaim("PVC_SetImmediateSC"),
			node:          node,
			wantPreFilter: rejected("PersistentVolume had no name"),
			want:          rejected("PersistentVolume had no name"),
		},
		{name: "unbound volume wait binding mode", pod: podWithClaim("PVC_WaitSC"), node: node, wantPreFilter: framework.NewStatus(framework.Skip)},
		{name: "the beta class annotation wins over the field", pod: podWithClaim("PVC_BetaAnnotation"), node: node, wantPreFilter: framework.NewStatus(framework.Skip)},
	})
}
