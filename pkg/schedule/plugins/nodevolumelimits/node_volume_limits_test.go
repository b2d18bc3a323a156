package nodevolumelimits_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodevolumelimits"
)

func TestNodeVolumeLimits(t *testing.T) {
	owner := testutil.MakePod().Name("p").UID("p-uid").EphemeralVolume("scratch").Obj()
	objects := framework.SnapshotObjects{
		PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{
			testutil.MakePVC("default", "csi").BoundTo("pv-csi").Obj(),
			testutil.MakePVC("default", "local").BoundTo("pv-local").Obj(),
			testutil.MakePVC("default", "ebs").BoundTo("pv-ebs").Obj(),
			testutil.MakePVC("default", "dangling").BoundTo("pv-gone").Obj(),
			testutil.MakePVC("default", "unbound").StorageClass("wait").Obj(),
			testutil.MakePVC("default", "p-scratch").BoundTo("pv-local").OwnedBy(owner).Obj(),
			testutil.MakePVC("default", "p-foreign").BoundTo("pv-local").Obj(),
		},
		PersistentVolumes: []*corev1.PersistentVolume{
			testutil.MakePV("pv-csi").CSI("ebs.csi.aws.com", "vol-1").Obj(),
			func() *corev1.PersistentVolume {
				pv := testutil.MakePV("pv-local").Obj()
				pv.Spec.Local = &corev1.LocalVolumeSource{Path: "/mnt/disk"}
				return pv
			}(),
			func() *corev1.PersistentVolume {
				pv := testutil.MakePV("pv-ebs").Obj()
				pv.Spec.AWSElasticBlockStore = &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-2"}
				return pv
			}(),
		},
		StorageClasses: []*storagev1.StorageClass{testutil.MakeStorageClass("wait", storagev1.VolumeBindingWaitForFirstConsumer)},
	}
	inlinePD := corev1.Volume{Name: "pd", VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "disk"}}}
	tests := []struct {
		name             string
		pod              *corev1.Pod
		wantPreFilter    *framework.Status
		wantNotEvaluated string
		wantFilter       *framework.Status
	}{
		{name: "no volumes", pod: testutil.MakePod().Name("p").Obj(), wantPreFilter: framework.NewStatus(framework.Skip)},
		{
			name:          "only volumes that attach nothing",
			pod:           testutil.MakePod().Name("p").Volume(corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}).Obj(),
			wantPreFilter: framework.NewStatus(framework.Skip),
		},
		{name: "a claim bound to a local volume counts nothing", pod: testutil.MakePod().Name("p").PVC("local").Obj(), wantPreFilter: framework.NewStatus(framework.Skip)},
		{name: "an ephemeral volume bound to a local volume counts nothing", pod: owner, wantPreFilter: framework.NewStatus(framework.Skip)},
		{
			name:             "a CSI volume is not evaluated",
			pod:              testutil.MakePod().Name("p").PVC("local").PVC("csi").Obj(),
			wantNotEvaluated: `NodeVolumeLimits not evaluated: volume(s) "csi" count against CSI attach limits, which CSINode objects hold and the snapshot does not`,
		},
		{
			name:             "migratable in-tree, unbound, dangling and inline volumes are not evaluated",
			pod:              testutil.MakePod().Name("p").PVC("ebs").PVC("unbound").PVC("dangling").Volume(inlinePD).Obj(),
			wantNotEvaluated: `NodeVolumeLimits not evaluated: volume(s) "ebs", "unbound", "dangling", "pd" count against CSI attach limits, which CSINode objects hold and the snapshot does not`,
		},
		{
			name:       "a missing claim rejects every node, even after a counted volume",
			pod:        testutil.MakePod().Name("p").PVC("csi").PVC("missing").Obj(),
			wantFilter: framework.NewStatus(framework.UnschedulableAndUnresolvable, `looking up PVC default/missing: persistentvolumeclaim "missing" not found`),
		},
		{
			name:       "an ephemeral claim of another pod is an error",
			pod:        testutil.MakePod().Name("p").UID("p-uid").EphemeralVolume("foreign").Obj(),
			wantFilter: framework.AsStatus(errString("PVC default/p-foreign was not created for pod default/p (pod is not owner)")),
		},
		{
			name:       "a claim without a name is an error",
			pod:        testutil.MakePod().Name("p").PVC("").Obj(),
			wantFilter: framework.AsStatus(errString("PersistentVolumeClaim had no name")),
		},
	}
	pl, err := nodevolumelimits.New(nil, framework.NewSnapshotHandle(nil, objects, 1))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	plugin := pl.(*nodevolumelimits.NodeVolumeLimits)
	node := framework.NewNodeInfo(testutil.MakeNode().Name("n").Obj())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			state := framework.NewCycleState()
			_, status := plugin.PreFilter(ctx, state, tt.pod, nil)
			if tt.wantNotEvaluated != "" {
				if !status.IsNotEvaluated() || status.Message() != tt.wantNotEvaluated || !strings.HasPrefix(status.Message(), nodevolumelimits.NotEvaluatedReason) {
					t.Errorf("PreFilter = %v, want not evaluated: %q", status, tt.wantNotEvaluated)
				}
				return
			}
			if diff := cmp.Diff(tt.wantPreFilter, status); diff != "" {
				t.Fatalf("PreFilter (-want +got):\n%s", diff)
			}
			if status.IsSkip() {
				return
			}
			got := plugin.Filter(ctx, state, tt.pod, node)
			if diff := cmp.Diff(tt.wantFilter, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }
