package noderesources_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// The resource names kube-scheduler's fit_test.go uses.
const (
	extendedResourceA     corev1.ResourceName = "example.com/aaa"
	extendedResourceB     corev1.ResourceName = "example.com/bbb"
	kubernetesIOResourceA corev1.ResourceName = "kubernetes.io/something"
	kubernetesIOResourceB corev1.ResourceName = "subdomain.kubernetes.io/something"
	hugePageResourceA     corev1.ResourceName = corev1.ResourceHugePagesPrefix + "2Mi"
	// extendedResourceDRA is a resource kube-scheduler's tests back by a
	// DeviceClass; our snapshot has none.
	extendedResourceDRA corev1.ResourceName = "extended.resource.dra.io/something"
	gpu                 corev1.ResourceName = "nvidia.com/gpu"
)

// node returns a node with this allocatable (capacity alike).
func node(name string, allocatable testutil.Res) *corev1.Node {
	return testutil.MakeNode().Name(name).Capacity(allocatable).Obj()
}

// nodeInfos builds a NodeInfo per node holding the pods bound to it.
func nodeInfos(nodes []*corev1.Node, pods []*corev1.Pod) []*framework.NodeInfo {
	out := make([]*framework.NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		ni := framework.NewNodeInfo(n)
		for _, p := range pods {
			if p.Spec.NodeName == n.Name {
				ni.AddPod(p)
			}
		}
		out = append(out, ni)
	}
	return out
}

// onNode binds pods to a node by name.
func onNode(name string, pods ...*testutil.PodWrapper) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Node(name).Obj())
	}
	return out
}

// bare is a pod with no containers, like kube-scheduler's st.MakePod(): no
// non-zero defaults apply to it.
func bare() *testutil.PodWrapper { return testutil.MakePod().Containers() }

func newPlugin[T framework.Plugin](t testing.TB, newFn func(runtime.Object, framework.Handle) (framework.Plugin, error), args runtime.Object) T {
	t.Helper()
	pl, err := newFn(args, nil)
	if err != nil {
		t.Fatalf("creating plugin: %v", err)
	}
	return pl.(T)
}

// scorePlugin is what both score plugins are.
type scorePlugin interface {
	framework.PreScorePlugin
	framework.ScorePlugin
}

// scoreNodes runs PreScore (when preScore is set) and Score on every node,
// as the pipeline does, and returns the PreScore status and the scores.
func scoreNodes(t *testing.T, pl scorePlugin, pod *corev1.Pod, nodes []*framework.NodeInfo, preScore bool) (*framework.Status, framework.NodeScoreList) {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	if preScore {
		if status := pl.PreScore(ctx, state, pod, nodes); !status.IsSuccess() {
			return status, nil
		}
	}
	var scores framework.NodeScoreList
	for _, ni := range nodes {
		score, status := pl.Score(ctx, state, pod, ni)
		if !status.IsSuccess() {
			t.Fatalf("Score on %s: %v", ni.Name(), status)
		}
		scores = append(scores, framework.NodeScore{Name: ni.Name(), Score: score})
	}
	return nil, scores
}
