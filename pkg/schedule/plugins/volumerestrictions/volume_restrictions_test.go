package volumerestrictions_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/volumerestrictions"
)

var (
	diskConflict = framework.NewStatus(framework.Unschedulable, "node(s) had no available disk")
	rwopConflict = framework.NewStatus(framework.Unschedulable, "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod")
	skip         = framework.NewStatus(framework.Skip)
)

func newPlugin(t *testing.T, nodes []*framework.NodeInfo, claims ...*corev1.PersistentVolumeClaim) *volumerestrictions.VolumeRestrictions {
	t.Helper()
	h := framework.NewSnapshotHandle(nodes, framework.SnapshotObjects{PersistentVolumeClaims: claims}, 1)
	pl, err := volumerestrictions.New(nil, h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return pl.(*volumerestrictions.VolumeRestrictions)
}

func podWithVolumes(name string, volumes ...corev1.Volume) *corev1.Pod {
	w := testutil.MakePod().Name(name)
	for _, v := range volumes {
		w.Volume(v)
	}
	return w.Obj()
}

func nodeWith(pods ...*corev1.Pod) *framework.NodeInfo {
	n := testutil.MakeNode().Name("node-1").Obj()
	ni := framework.NewNodeInfo(n)
	for _, p := range pods {
		p.Spec.NodeName = n.Name
		ni.AddPod(p)
	}
	return ni
}

// The cases of kube-scheduler's TestGCEDiskConflicts, TestAWSDiskConflicts,
// TestRBDDiskConflicts and TestISCSIDiskConflicts, plus read-only mounts.
func TestDiskConflicts(t *testing.T) {
	kinds := []struct {
		name                string
		volume, other       corev1.Volume
		readOnly, readOnly2 corev1.Volume
		// readOnlyConflicts is set where two read-only mounts still clash (EBS).
		readOnlyConflicts bool
	}{
		{
			name:      "GCE PD",
			volume:    corev1.Volume{VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "foo"}}},
			other:     corev1.Volume{VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "bar"}}},
			readOnly:  corev1.Volume{VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "foo", ReadOnly: true}}},
			readOnly2: corev1.Volume{VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "foo", ReadOnly: true}}},
		},
		{
			name:              "AWS EBS",
			volume:            corev1.Volume{VolumeSource: corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "foo"}}},
			other:             corev1.Volume{VolumeSource: corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "bar"}}},
			readOnly:          corev1.Volume{VolumeSource: corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "foo", ReadOnly: true}}},
			readOnly2:         corev1.Volume{VolumeSource: corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "foo", ReadOnly: true}}},
			readOnlyConflicts: true,
		},
		{
			name:      "RBD",
			volume:    corev1.Volume{VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: []string{"a", "b"}, RBDPool: "foo", RBDImage: "bar", FSType: "ext4"}}},
			other:     corev1.Volume{VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: []string{"c", "d"}, RBDPool: "foo", RBDImage: "bar", FSType: "ext4"}}},
			readOnly:  corev1.Volume{VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: []string{"b", "x", "y"}, RBDPool: "foo", RBDImage: "bar", ReadOnly: true}}},
			readOnly2: corev1.Volume{VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: []string{"a", "b"}, RBDPool: "foo", RBDImage: "bar", ReadOnly: true}}},
		},
		{
			name:      "iSCSI",
			volume:    corev1.Volume{VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "127.0.0.1:3260", IQN: "iqn.2016-12.server:storage.target01", FSType: "ext4"}}},
			other:     corev1.Volume{VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "127.0.0.1:3260", IQN: "iqn.2017-12.server:storage.target01", FSType: "ext4"}}},
			readOnly:  corev1.Volume{VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{IQN: "iqn.2016-12.server:storage.target01", ReadOnly: true}}},
			readOnly2: corev1.Volume{VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{IQN: "iqn.2016-12.server:storage.target01", ReadOnly: true}}},
		},
	}
	for _, kind := range kinds {
		var readOnlyWant *framework.Status
		if kind.readOnlyConflicts {
			readOnlyWant = diskConflict
		}
		tests := []struct {
			name          string
			pod           *corev1.Pod
			nodeInfo      *framework.NodeInfo
			wantPreFilter *framework.Status
			want          *framework.Status
		}{
			{name: "nothing", pod: &corev1.Pod{}, nodeInfo: nodeWith(), wantPreFilter: skip},
			{name: "one state", pod: &corev1.Pod{}, nodeInfo: nodeWith(podWithVolumes("running", kind.volume)), wantPreFilter: skip},
			{name: "same state", pod: podWithVolumes("p", kind.volume), nodeInfo: nodeWith(podWithVolumes("running", kind.volume)), want: diskConflict},
			{name: "different state", pod: podWithVolumes("p", kind.other), nodeInfo: nodeWith(podWithVolumes("running", kind.volume))},
			{name: "both read-only", pod: podWithVolumes("p", kind.readOnly), nodeInfo: nodeWith(podWithVolumes("running", kind.readOnly2)), want: readOnlyWant},
			{name: "one read-only", pod: podWithVolumes("p", kind.readOnly), nodeInfo: nodeWith(podWithVolumes("running", kind.volume)), want: diskConflict},
			{
				name:          "a volume without restrictions",
				pod:           podWithVolumes("p", corev1.Volume{Name: "volume with no restriction"}),
				nodeInfo:      nodeWith(podWithVolumes("running", kind.volume)),
				wantPreFilter: skip,
			},
		}
		for _, tt := range tests {
			t.Run(kind.name+"/"+tt.name, func(t *testing.T) {
				pl := newPlugin(t, []*framework.NodeInfo{tt.nodeInfo})
				ctx := context.Background()
				state := framework.NewCycleState()
				_, status := pl.PreFilter(ctx, state, tt.pod, nil)
				if diff := cmp.Diff(tt.wantPreFilter, status); diff != "" {
					t.Fatalf("PreFilter (-want +got):\n%s", diff)
				}
				if !status.IsSuccess() {
					return
				}
				got := pl.Filter(ctx, state, tt.pod, tt.nodeInfo)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Filter (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// The cases of kube-scheduler's TestAccessModeConflicts, plus a conflict on
// another node and the preemption extensions.
func TestAccessModeConflicts(t *testing.T) {
	rwop1 := testutil.MakePVC("default", "claim-with-rwop-1").AccessModes(corev1.ReadWriteOncePod).Obj()
	rwop2 := testutil.MakePVC("default", "claim-with-rwop-2").AccessModes(corev1.ReadWriteOncePod).Obj()
	rwx := testutil.MakePVC("default", "claim-with-rwx").AccessModes(corev1.ReadWriteMany).Obj()

	podWithOnePVC := func() *corev1.Pod { return testutil.MakePod().Name("pod-with-one-pvc").PVC("claim-with-rwop-1").Obj() }
	podWithTwoPVCs := func() *corev1.Pod {
		return testutil.MakePod().Name("pod-with-two-pvcs").PVC("claim-with-rwop-1").PVC("claim-with-rwop-2").Obj()
	}
	podWithRWX := func() *corev1.Pod { return testutil.MakePod().Name("pod-with-rwx").PVC("claim-with-rwx").Obj() }
	podWithOneConflict := testutil.MakePod().Name("pod-with-one-conflict").PVC("claim-with-rwop-1").Obj()
	podWithTwoConflicts := testutil.MakePod().Name("pod-with-two-conflicts").PVC("claim-with-rwop-1").PVC("claim-with-rwop-2").Obj()

	otherNode := func(pods ...*corev1.Pod) *framework.NodeInfo {
		ni := framework.NewNodeInfo(testutil.MakeNode().Name("node-2").Obj())
		for _, p := range pods {
			p.Spec.NodeName = "node-2"
			ni.AddPod(p)
		}
		return ni
	}
	tests := []struct {
		name          string
		pod           *corev1.Pod
		nodes         []*framework.NodeInfo
		claims        []*corev1.PersistentVolumeClaim
		wantPreFilter *framework.Status
		want          *framework.Status
	}{
		{name: "nothing", pod: &corev1.Pod{}, nodes: []*framework.NodeInfo{nodeWith()}, wantPreFilter: skip},
		{
			name:          "failed to get PVC",
			pod:           podWithOnePVC(),
			nodes:         []*framework.NodeInfo{nodeWith()},
			wantPreFilter: framework.NewStatus(framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "claim-with-rwop-1" not found`),
		},
		{
			name:          "no access mode conflict",
			pod:           podWithOnePVC(),
			nodes:         []*framework.NodeInfo{nodeWith(podWithRWX())},
			claims:        []*corev1.PersistentVolumeClaim{rwop1, rwx},
			wantPreFilter: skip,
		},
		{
			name:   "access mode conflict, unschedulable",
			pod:    podWithOneConflict,
			nodes:  []*framework.NodeInfo{nodeWith(podWithOnePVC(), podWithRWX())},
			claims: []*corev1.PersistentVolumeClaim{rwop1, rwx},
			want:   rwopConflict,
		},
		{
			name:   "two conflicts, unschedulable",
			pod:    podWithTwoConflicts,
			nodes:  []*framework.NodeInfo{nodeWith(podWithTwoPVCs(), podWithRWX())},
			claims: []*corev1.PersistentVolumeClaim{rwop1, rwop2, rwx},
			want:   rwopConflict,
		},
		{
			name:   "a conflict on another node rejects this one too",
			pod:    podWithOneConflict,
			nodes:  []*framework.NodeInfo{nodeWith(), otherNode(podWithOnePVC())},
			claims: []*corev1.PersistentVolumeClaim{rwop1},
			want:   rwopConflict,
		},
		{
			name:   "the same claim name in another namespace is no conflict",
			pod:    testutil.MakePod().Namespace("other").Name("p").PVC("claim-with-rwop-1").Obj(),
			nodes:  []*framework.NodeInfo{nodeWith(podWithOnePVC())},
			claims: []*corev1.PersistentVolumeClaim{rwop1, testutil.MakePVC("other", "claim-with-rwop-1").AccessModes(corev1.ReadWriteOncePod).Obj()},
			// PreFilter skips: nothing conflicts.
			wantPreFilter: skip,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := newPlugin(t, tt.nodes, tt.claims...)
			ctx := context.Background()
			state := framework.NewCycleState()
			_, status := pl.PreFilter(ctx, state, tt.pod, tt.nodes)
			if diff := cmp.Diff(tt.wantPreFilter, status); diff != "" {
				t.Fatalf("PreFilter (-want +got):\n%s", diff)
			}
			if !status.IsSuccess() {
				return
			}
			got := pl.Filter(ctx, state, tt.pod, tt.nodes[0])
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

// Removing the pod that holds a ReadWriteOncePod claim (a preemption
// what-if) clears the conflict, adding it back restores it, and a clone keeps
// its own count.
func TestPreFilterExtensions(t *testing.T) {
	rwop := testutil.MakePVC("default", "data").AccessModes(corev1.ReadWriteOncePod).Obj()
	holder := testutil.MakePod().Name("holder").PVC("data").Obj()
	ni := nodeWith(holder)
	pod := testutil.MakePod().Name("p").PVC("data").Obj()
	pl := newPlugin(t, []*framework.NodeInfo{ni}, rwop)
	ctx := context.Background()
	state := framework.NewCycleState()
	if _, s := pl.PreFilter(ctx, state, pod, nil); !s.IsSuccess() {
		t.Fatalf("PreFilter = %v", s)
	}
	if diff := cmp.Diff(rwopConflict, pl.Filter(ctx, state, pod, ni)); diff != "" {
		t.Fatalf("Filter before removal (-want +got):\n%s", diff)
	}
	ext := pl.PreFilterExtensions()
	clone := state.Clone()
	if s := ext.RemovePod(ctx, clone, pod, framework.NewPodInfo(holder), ni); !s.IsSuccess() {
		t.Fatalf("RemovePod = %v", s)
	}
	if got := pl.Filter(ctx, clone, pod, ni); got != nil {
		t.Errorf("Filter after RemovePod = %v, want success", got)
	}
	if diff := cmp.Diff(rwopConflict, pl.Filter(ctx, state, pod, ni)); diff != "" {
		t.Errorf("the original state changed with its clone (-want +got):\n%s", diff)
	}
	if s := ext.AddPod(ctx, clone, pod, framework.NewPodInfo(holder), ni); !s.IsSuccess() {
		t.Fatalf("AddPod = %v", s)
	}
	if diff := cmp.Diff(rwopConflict, pl.Filter(ctx, clone, pod, ni)); diff != "" {
		t.Errorf("Filter after AddPod (-want +got):\n%s", diff)
	}
	if s := ext.AddPod(ctx, framework.NewCycleState(), pod, framework.NewPodInfo(holder), ni); s.Code() != framework.Error {
		t.Errorf("AddPod without PreFilter state = %v, want an Error", s)
	}
}
