package nodedeclaredfeatures_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodedeclaredfeatures"
)

const (
	restartAll   = "RestartAllContainersOnContainerExits"
	userNSHost   = "UserNamespacesHostNetworkSupport"
	bindMountOpt = "VolumeBindMountOptions"
)

func nodeDeclaring(features ...string) *corev1.Node {
	n := testutil.MakeNode().Name("node-1").Obj()
	n.Status.DeclaredFeatures = features
	return n
}

func podRestartingAll() *corev1.Pod {
	p := testutil.MakePod().Name("p").Obj()
	p.Spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestartAllContainers}}
	return p
}

func podUserNSHostNetwork() *corev1.Pod {
	p := testutil.MakePod().Name("p").Obj()
	hostUsers := false
	p.Spec.HostNetwork, p.Spec.HostUsers = true, &hostUsers
	return p
}

func podNeedingBoth() *corev1.Pod {
	p := podRestartingAll()
	p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/v", BindMountOptions: []string{"ro"}}}}}
	return p
}

func TestNodeDeclaredFeatures(t *testing.T) {
	rejected := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match Pod's required features")
	tests := []struct {
		name            string
		pod             *corev1.Pod
		node            *corev1.Node
		wantPreFilter   *framework.Status
		want            *framework.Status
		wantUnsatisfied []string
	}{
		{name: "pod needing no feature", pod: testutil.MakePod().Name("p").Obj(), node: nodeDeclaring(), wantPreFilter: framework.NewStatus(framework.Skip)},
		{
			name: "a plain restart rule needs no feature",
			pod: func() *corev1.Pod {
				p := podRestartingAll()
				p.Spec.Containers[0].RestartPolicyRules[0].Action = corev1.ContainerRestartRuleActionRestart
				return p
			}(),
			node:          nodeDeclaring(),
			wantPreFilter: framework.NewStatus(framework.Skip),
		},
		{name: "RestartAllContainers on a node declaring it", pod: podRestartingAll(), node: nodeDeclaring(restartAll)},
		{name: "RestartAllContainers on a node declaring nothing", pod: podRestartingAll(), node: nodeDeclaring(), want: rejected, wantUnsatisfied: []string{restartAll}},
		{name: "host network in a user namespace on a node declaring it", pod: podUserNSHostNetwork(), node: nodeDeclaring(userNSHost)},
		{name: "host network in a user namespace on another node", pod: podUserNSHostNetwork(), node: nodeDeclaring(restartAll), want: rejected, wantUnsatisfied: []string{userNSHost}},
		{name: "unknown declared features are ignored", pod: podRestartingAll(), node: nodeDeclaring("AAAUnknown", restartAll, "ZZZUnknown")},
		{name: "two features, both declared", pod: podNeedingBoth(), node: nodeDeclaring(restartAll, bindMountOpt)},
		{name: "two features, one declared", pod: podNeedingBoth(), node: nodeDeclaring(bindMountOpt), want: rejected, wantUnsatisfied: []string{restartAll}},
	}
	pl, err := nodedeclaredfeatures.New(nil, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	plugin := pl.(*nodedeclaredfeatures.NodeDeclaredFeatures)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			state := framework.NewCycleState()
			_, status := plugin.PreFilter(ctx, state, tt.pod, nil)
			if diff := cmp.Diff(tt.wantPreFilter, status); diff != "" {
				t.Fatalf("PreFilter (-want +got):\n%s", diff)
			}
			if status.IsSkip() {
				return
			}
			got := plugin.Filter(ctx, state, tt.pod, framework.NewNodeInfo(tt.node))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
			unsatisfied, err := nodedeclaredfeatures.UnsatisfiedRequirements(tt.pod, tt.node)
			if err != nil {
				t.Fatalf("UnsatisfiedRequirements: %v", err)
			}
			if diff := cmp.Diff(tt.wantUnsatisfied, unsatisfied); diff != "" {
				t.Errorf("UnsatisfiedRequirements (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterWithoutPreFilter(t *testing.T) {
	pl, _ := nodedeclaredfeatures.New(nil, nil)
	s := pl.(framework.FilterPlugin).Filter(context.Background(), framework.NewCycleState(), podRestartingAll(), framework.NewNodeInfo(nodeDeclaring()))
	if s.Code() != framework.Error {
		t.Errorf("Filter without PreFilter = %v, want an Error", s)
	}
}
