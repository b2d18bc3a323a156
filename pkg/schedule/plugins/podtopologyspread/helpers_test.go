package podtopologyspread

import (
	"fmt"
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Fixtures in the shape of kube-scheduler's own tests, so cases port line by line.
var (
	ignorePolicy = corev1.NodeInclusionPolicyIgnore
	honorPolicy  = corev1.NodeInclusionPolicyHonor
	fooSelector  = exists("foo")
	barSelector  = exists("bar")
	listArgs     = &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting}
	systemArgs   = &configv1.PodTopologySpreadArgs{DefaultingType: configv1.SystemDefaulting}
)

func exists(keys ...string) *metav1.LabelSelector {
	s := &metav1.LabelSelector{}
	for _, k := range keys {
		s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpExists})
	}
	return s
}

func matchLabels(kv ...string) *metav1.LabelSelector {
	s := &metav1.LabelSelector{MatchLabels: map[string]string{}}
	for i := 0; i < len(kv); i += 2 {
		s.MatchLabels[kv[i]] = kv[i+1]
	}
	return s
}

func ptrTo[T any](v T) *T { return &v }

// node builds a node with exactly the given labels (kube-scheduler's test
// nodes have no hostname label unless a test sets one).
func node(name string, kv ...string) *testutil.NodeWrapper {
	w := testutil.MakeNode()
	w.Node.Name = name
	for i := 0; i < len(kv); i += 2 {
		w.Label(kv[i], kv[i+1])
	}
	return w
}

// pod starts a pod named name with the given labels.
func pod(name string, kv ...string) *testutil.PodWrapper {
	w := testutil.MakePod().Name(name)
	for i := 0; i < len(kv); i += 2 {
		w.Label(kv[i], kv[i+1])
	}
	return w
}

// unschedulableTaint is the taint of kube-scheduler's tests.
func withUnschedulableTaint(w *testutil.NodeWrapper) *testutil.NodeWrapper {
	return w.Taint(corev1.TaintNodeUnschedulable, "", corev1.TaintEffectNoSchedule)
}

func withNodeSelector(p *corev1.Pod, sel map[string]string) *corev1.Pod {
	p.Spec.NodeSelector = sel
	return p
}

func withNodeAffinity(p *corev1.Pod, key string, op corev1.NodeSelectorOperator, values ...string) *corev1.Pod {
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}},
		}}},
	}}
	return p
}

func terminating(p *corev1.Pod) *corev1.Pod {
	t := metav1.NewTime(time.Unix(0, 0))
	p.DeletionTimestamp = &t
	return p
}

// services turns selectors into Services of the default namespace.
func services(selectors []map[string]string) []*corev1.Service {
	var out []*corev1.Service
	for i, s := range selectors {
		out = append(out, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: fmt.Sprintf("svc-%d", i)},
			Spec:       corev1.ServiceSpec{Selector: s},
		})
	}
	return out
}

type fixture struct {
	pl     *PodTopologySpread
	handle *framework.SnapshotHandle
}

// newFixture builds a snapshot of nodes and pods and the plugin over it;
// services, when given, are in the snapshot and select pods for default
// constraints (DefaultSelectorLister).
func newFixture(t testing.TB, args runtime.Object, nodes []*corev1.Node, pods []*corev1.Pod, svcSelectors ...map[string]string) *fixture {
	t.Helper()
	objects := framework.SnapshotObjects{Workloads: Workloads{Services: services(svcSelectors)}}
	h := framework.NewSnapshotHandle(framework.BuildNodeInfos(nodes, pods), objects, 2)
	pl, err := New(args, h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &fixture{pl: pl.(*PodTopologySpread), handle: h}
}

func (f *fixture) nodeInfo(t testing.TB, name string) *framework.NodeInfo {
	t.Helper()
	ni, err := f.handle.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return ni
}

func (f *fixture) nodeInfos(t testing.TB, nodes []*corev1.Node) []*framework.NodeInfo {
	out := make([]*framework.NodeInfo, len(nodes))
	for i, n := range nodes {
		out[i] = f.nodeInfo(t, n.Name)
	}
	return out
}

// constraintView is a constraint in comparable form.
type constraintView struct {
	MaxSkew            int32
	TopologyKey        string
	Selector           string
	MinDomains         int32
	NodeAffinityPolicy corev1.NodeInclusionPolicy
	NodeTaintsPolicy   corev1.NodeInclusionPolicy
}

// selectorString tells "selects nothing" (a nil labelSelector) apart from
// "selects everything" ({}), which print alike.
func selectorString(s labels.Selector) string {
	if _, ok := s.Requirements(); !ok {
		return "<nothing>"
	}
	return s.String()
}

func viewConstraints(cs []topologySpreadConstraint) []constraintView {
	var out []constraintView
	for _, c := range cs {
		out = append(out, constraintView{c.MaxSkew, c.TopologyKey, selectorString(c.Selector), c.MinDomains, c.NodeAffinityPolicy, c.NodeTaintsPolicy})
	}
	return out
}

// tsc is a wanted constraint with kube-scheduler's defaults: minDomains 1,
// node affinity honoured, taints ignored.
func tsc(maxSkew int32, key, selector string) constraintView {
	return constraintView{maxSkew, key, selector, 1, corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore}
}

func (c constraintView) affinity(p corev1.NodeInclusionPolicy) constraintView {
	c.NodeAffinityPolicy = p
	return c
}

func (c constraintView) taints(p corev1.NodeInclusionPolicy) constraintView {
	c.NodeTaintsPolicy = p
	return c
}

// filterView is the PreFilter state in comparable form. MinMatchNum holds
// what kube-scheduler's CriticalPaths[i][0].MatchNum holds.
type filterView struct {
	Constraints       []constraintView
	TpValueToMatchNum []map[string]int
	MinMatchNum       []int
}

func viewFilterState(s *preFilterState) filterView {
	return filterView{Constraints: viewConstraints(s.constraints), TpValueToMatchNum: s.tpValueToMatchNum, MinMatchNum: s.minMatchNum}
}

const maxInt32 = math.MaxInt32
