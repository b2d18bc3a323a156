package defaultpreemption_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// fakeRunner is a Handle that is also a PluginsRunner, running a small
// resource-fit filter written here (so these tests do not depend on the real
// runner or the real NodeResourcesFit):
//   - a node labelled filter=unresolvable rejects every pod as
//     UnschedulableAndUnresolvable;
//   - otherwise pods, cpu and memory must fit, each shortfall a reason worded
//     as NodeResourcesFit words it.
//
// Its PreFilter extensions count added and removed pods in the cycle state
// (so tests can see the state was cloned), and fail on nodes labelled
// error=true, as kube-scheduler's test plugin does.
type fakeRunner struct {
	*framework.SnapshotHandle
	filterCalls atomic.Int64
	// requests caches each pod's requests, so benchmarks measure the
	// plugin rather than this filter.
	requests sync.Map // *corev1.Pod -> *framework.Resource
}

var _ framework.PluginsRunner = &fakeRunner{}

func newFakeRunner(nodes []*corev1.Node, pods []*corev1.Pod, pdbs []*policyv1.PodDisruptionBudget) *fakeRunner {
	infos := framework.BuildNodeInfos(nodes, pods)
	return &fakeRunner{SnapshotHandle: framework.NewSnapshotHandle(infos, framework.SnapshotObjects{PodDisruptionBudgets: pdbs}, framework.DefaultParallelism)}
}

const fakeStateKey framework.StateKey = "PreFilterFakeFit"

// fakeState counts the pods PreFilter extensions saw come and go.
type fakeState struct{ added, removed int }

func (s *fakeState) Clone() framework.StateData { c := *s; return &c }

func newFakeCycleState() *framework.CycleState {
	state := framework.NewCycleState()
	state.Write(fakeStateKey, &fakeState{})
	return state
}

func (f *fakeRunner) extension(state *framework.CycleState, op string, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if nodeInfo.Node().Labels["error"] == "true" {
		return framework.AsStatus(fmt.Errorf("running %s on PreFilter plugin %q: failed to remove pod: %s", op, "test-plugin", pod.Name))
	}
	data, err := state.Read(fakeStateKey)
	if err != nil {
		return nil
	}
	s := data.(*fakeState)
	if op == "AddPod" {
		s.added++
	} else {
		s.removed++
	}
	return nil
}

func (f *fakeRunner) RunPreFilterExtensionAddPod(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return f.extension(state, "AddPod", pod, nodeInfo)
}

func (f *fakeRunner) RunPreFilterExtensionRemovePod(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return f.extension(state, "RemovePod", pod, nodeInfo)
}

func (f *fakeRunner) RunFilterPlugins(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	f.filterCalls.Add(1)
	if nodeInfo.Node().Labels["filter"] == "unresolvable" {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match Pod's node affinity/selector").WithPlugin("NodeAffinity")
	}
	cached, ok := f.requests.Load(pod)
	if !ok {
		cached, _ = f.requests.LoadOrStore(pod, framework.ComputePodResource(pod).Resource)
	}
	req := cached.(*framework.Resource)
	var reasons []string
	if len(nodeInfo.Pods)+1 > nodeInfo.Allocatable.AllowedPodNumber {
		reasons = append(reasons, "Too many pods")
	}
	if req.MilliCPU > 0 && req.MilliCPU > nodeInfo.Allocatable.MilliCPU-nodeInfo.Requested.MilliCPU {
		reasons = append(reasons, "Insufficient cpu")
	}
	if req.Memory > 0 && req.Memory > nodeInfo.Allocatable.Memory-nodeInfo.Requested.Memory {
		reasons = append(reasons, "Insufficient memory")
	}
	if len(reasons) > 0 {
		return framework.NewStatus(framework.Unschedulable, reasons...).WithPlugin("NodeResourcesFit")
	}
	return nil
}

// filterAll runs the fake filter on every node, as the runner's Filter phase
// would, and returns the verdicts PostFilter receives.
func (f *fakeRunner) filterAll(pod *corev1.Pod) statusMap {
	m := statusMap{}
	for _, ni := range f.List() {
		if s := f.RunFilterPlugins(context.Background(), nil, pod, ni); !s.IsSuccess() {
			m[ni.Name()] = s
		}
	}
	f.filterCalls.Store(0)
	return m
}

// statusMap is the Filter verdict per node; a node without one is
// UnschedulableAndUnresolvable, as in kube-scheduler's NodeToStatus.
type statusMap map[string]*framework.Status

func (m statusMap) Get(name string) *framework.Status {
	if s, ok := m[name]; ok {
		return s
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable)
}

// unschedulable marks nodes Unschedulable with no reason, as kube-scheduler's
// tests do.
func unschedulable(names ...string) statusMap {
	m := statusMap{}
	for _, n := range names {
		m[n] = framework.NewStatus(framework.Unschedulable)
	}
	return m
}

// Small pod mutators the shared builders do not have.

func started(p *corev1.Pod, t time.Time) *corev1.Pod {
	p.Status.StartTime = &metav1.Time{Time: t}
	return p
}

func preemptNever(p *corev1.Pod) *corev1.Pod {
	never := corev1.PreemptNever
	p.Spec.PreemptionPolicy = &never
	return p
}

func nominated(p *corev1.Pod, node string) *corev1.Pod {
	p.Status.NominatedNodeName = node
	return p
}

// terminating marks a pod deleted; byPreemption adds the DisruptionTarget
// condition kube-scheduler sets on the pods it preempts.
func terminating(p *corev1.Pod, byPreemption bool) *corev1.Pod {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	if byPreemption {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler,
		})
	}
	return p
}

func makePDB(name string, matchLabels map[string]string, allowed int32, disrupted ...string) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: matchLabels}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
	for _, p := range disrupted {
		if pdb.Status.DisruptedPods == nil {
			pdb.Status.DisruptedPods = map[string]metav1.Time{}
		}
		pdb.Status.DisruptedPods[p] = metav1.Now()
	}
	return pdb
}
