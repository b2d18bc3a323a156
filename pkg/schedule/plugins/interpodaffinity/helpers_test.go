package interpodaffinity_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/interpodaffinity"
)

// Shorthands for the builders, as kube-scheduler's tests use st.MakePod().
var (
	makePod  = testutil.MakePod
	makeTerm = testutil.MakePodAffinityTerm
)

// node returns a node with exactly the given labels (no hostname label
// unless given), as kube-scheduler's tests build them.
func node(name string, nodeLabels map[string]string) *corev1.Node {
	n := testutil.MakeNode().Obj()
	n.Name = name
	n.Labels = nil
	for k, v := range nodeLabels {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[k] = v
	}
	return n
}

// namespace returns a namespace with labels.
func namespace(name string, nsLabels map[string]string) *corev1.Namespace {
	ns := testutil.MakeNamespace(name)
	ns.Labels = nsLabels
	return ns
}

// testNamespaces are kube-scheduler's test namespaces, two per team.
var testNamespaces = []*corev1.Namespace{
	namespace("subteam1.team1", map[string]string{"team": "team1"}),
	namespace("subteam2.team1", map[string]string{"team": "team1"}),
	namespace("subteam1.team2", map[string]string{"team": "team2"}),
	namespace("subteam2.team2", map[string]string{"team": "team2"}),
	// plain has only the label the API server gives every namespace.
	namespace("plain", map[string]string{corev1.LabelMetadataName: "plain"}),
}

// setup builds a snapshot of nodes with pods and the plugin over it.
func setup(t testing.TB, args *configv1.InterPodAffinityArgs, nodes []*corev1.Node, pods []*corev1.Pod, namespaces []*corev1.Namespace) (*interpodaffinity.InterPodAffinity, *framework.SnapshotHandle) {
	t.Helper()
	infos := framework.BuildNodeInfos(nodes, pods)
	h := framework.NewSnapshotHandle(infos, framework.SnapshotObjects{Namespaces: namespaces}, framework.DefaultParallelism)
	var obj runtime.Object
	if args != nil {
		obj = args
	}
	p, err := interpodaffinity.New(obj, h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*interpodaffinity.InterPodAffinity), h
}

func mustNodeInfo(t testing.TB, h *framework.SnapshotHandle, name string) *framework.NodeInfo {
	t.Helper()
	ni, err := h.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return ni
}

func ptrTo[T any](v T) *T { return &v }

type (
	testutilPod  = testutil.PodWrapper
	testutilTerm = testutil.PodAffinityTermWrapper
)
