package nodename_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodename"
)

func newPlugin(t *testing.T) *nodename.NodeName {
	t.Helper()
	pl, err := nodename.New(nil, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return pl.(*nodename.NodeName)
}

// The cases of kube-scheduler's TestNodeName.
func TestFilter(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		want *framework.Status
	}{
		{name: "no host specified", pod: &corev1.Pod{}, node: &corev1.Node{}},
		{name: "host matches", pod: testutil.MakePod().Node("foo").Obj(), node: testutil.MakeNode().Name("foo").Obj()},
		{
			name: "host doesn't match",
			pod:  testutil.MakePod().Node("bar").Obj(),
			node: testutil.MakeNode().Name("foo").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match the requested node name"),
		},
	}
	pl := newPlugin(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pl.Filter(context.Background(), framework.NewCycleState(), tt.pod, framework.NewNodeInfo(tt.node))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

// The cases of kube-scheduler's TestNodeName_PreFilter.
func TestPreFilter(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want *framework.PreFilterResult
	}{
		{
			name: "pod with nodeName set is restricted to that node",
			pod:  testutil.MakePod().Node("foo").Obj(),
			want: &framework.PreFilterResult{NodeNames: sets.New("foo")},
		},
		{name: "pod without nodeName keeps every node", pod: testutil.MakePod().Obj()},
	}
	pl := newPlugin(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, status := pl.PreFilter(context.Background(), framework.NewCycleState(), tt.pod, nil)
			if !status.IsSuccess() {
				t.Fatalf("PreFilter status = %v", status)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PreFilter result (-want +got):\n%s", diff)
			}
		})
	}
	if pl.PreFilterExtensions() != nil {
		t.Error("PreFilterExtensions() != nil")
	}
	if pl.Name() != "NodeName" {
		t.Errorf("Name() = %q", pl.Name())
	}
}
