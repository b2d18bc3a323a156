package bind

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// ns is the namespace of every gang in these tests.
const ns = "ml"

var created = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// member is m-i, a pending member of the native PodGroup trio that takes
// most of a node (3 of its 4 cpus): two members never share one. A Job
// owns it, so --on-partial=delete may take it back (bare pods are left).
func member(i int) *testutil.PodWrapper {
	name := fmt.Sprintf("m-%d", i)
	w := testutil.MakePod().Namespace(ns).Name(name).UID("uid-" + name).Req(testutil.Res{"cpu": "3"}).
		PodGroup("trio").Created(created.Add(time.Duration(i) * time.Second))
	w.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "trio", UID: "uid-job", Controller: ptr.To(true)}}
	return w
}

// members are m-0 .. m-(n-1), pending.
func members(n int) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, member(i).Obj())
	}
	return out
}

// cluster is a snapshot of nodes n-0 .. n-(nodes-1) of 4 cpus each, the
// pods, and the native PodGroup trio with minimum minCount; every object
// has a UID and resource version 1, as the API server gives them.
func cluster(nodes int, minCount int64, pods ...*corev1.Pod) *schedule.Snapshot {
	snap := &schedule.Snapshot{PodGroups: []*unstructured.Unstructured{testutil.MakeNativePodGroup(ns, "trio", minCount).Obj()}}
	for i := range nodes {
		n := testutil.MakeNode().Name(fmt.Sprintf("n-%d", i)).Capacity(testutil.Res{"cpu": "4", "memory": "16Gi"}).Obj()
		n.UID, n.ResourceVersion = types.UID("uid-"+n.Name), "1"
		snap.Nodes = append(snap.Nodes, n)
	}
	for _, pod := range pods {
		pod.ResourceVersion = "1"
		snap.Pods = append(snap.Pods, pod)
	}
	return snap
}

// bindTrio resolves the PodGroup trio in snap and binds it through c.
func bindTrio(t *testing.T, snap *schedule.Snapshot, c Client, opts Options) (*Report, error) {
	t.Helper()
	g, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: ns, Name: "trio"})
	if err != nil {
		t.Fatal(err)
	}
	return Gang(context.Background(), snap, g, c, opts)
}

// memberOutcome and outcome are a Report without its objects, to compare.
type memberOutcome struct {
	Pod, Node string
	Result    Outcome
	Message   string
}

type outcome struct {
	Verdict                 Verdict
	Reason                  Reason
	Message                 string
	Members                 []memberOutcome
	BoundMembers, MinMember int32
	LostEvents              int
}

func outcomeOf(r *Report) outcome {
	out := outcome{Verdict: r.Verdict, Reason: r.Reason, Message: r.Message,
		BoundMembers: r.BoundMembers, MinMember: r.MinMember, LostEvents: r.LostEvents}
	for _, m := range r.Members {
		out.Members = append(out.Members, memberOutcome{Pod: podKey(m.Pod), Node: m.Node, Result: m.Result, Message: m.Message})
	}
	return out
}

// m is member m-i's outcome.
func m(i int, node string, result Outcome, message string) memberOutcome {
	return memberOutcome{Pod: fmt.Sprintf("%s/m-%d", ns, i), Node: node, Result: result, Message: message}
}
