package podtopologyspread

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Cases from kube-scheduler's TestPreFilterStateAddPod and
// TestPreFilterStateRemovePod; MinMatchNum is its CriticalPaths[i][0].
func TestPreFilterExtensions(t *testing.T) {
	zoneFoo, nodeFoo := tsc(1, "zone", "foo"), tsc(1, "node", "foo")
	twoNodes := func() []*corev1.Node {
		return []*corev1.Node{node("node-a", "zone", "zone1", "node", "node-a").Obj(), node("node-b", "zone", "zone1", "node", "node-b").Obj()}
	}
	zoneAX := func() []*corev1.Node {
		return []*corev1.Node{node("node-a", "zone", "zone1", "node", "node-a").Obj(), node("node-x", "zone", "zone2", "node", "node-x").Obj()}
	}
	affinityNodes := func() []*corev1.Node {
		return []*corev1.Node{
			node("node-a", "zone", "zone1", "node", "node-a", "foo", "bar").Obj(),
			node("node-b", "zone", "zone2", "node", "node-b", "foo", "").Obj(),
		}
	}
	bothConstraints := func(lbls ...string) *corev1.Pod {
		return pod("p", lbls...).
			SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).
			SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj()
	}
	zoneOnly := pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj()
	nodeOnly := pod("p", "foo", "").SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj()
	tests := []struct {
		name         string
		preemptor    *corev1.Pod
		nodes        []*corev1.Node
		existingPods []*corev1.Pod
		remove       bool
		changed      *corev1.Pod
		onNode       string
		want         filterView
	}{
		{
			name:      "add: node a and b both impact current min match",
			preemptor: nodeOnly,
			nodes:     twoNodes(),
			changed:   pod("p-a1", "foo", "").Node("node-a").Obj(),
			onNode:    "node-a",
			want:      filterView{[]constraintView{nodeFoo}, []map[string]int{{"node-a": 1, "node-b": 0}}, []int{0}},
		},
		{
			name:         "add: only node a impacts current min match",
			preemptor:    nodeOnly,
			nodes:        twoNodes(),
			existingPods: []*corev1.Pod{pod("p-b1", "foo", "").Node("node-b").Obj()},
			changed:      pod("p-a1", "foo", "").Node("node-a").Obj(),
			onNode:       "node-a",
			want:         filterView{[]constraintView{nodeFoo}, []map[string]int{{"node-a": 1, "node-b": 1}}, []int{1}},
		},
		{
			name:         "add: a pod in a different namespace doesn't change anything",
			preemptor:    nodeOnly,
			nodes:        twoNodes(),
			existingPods: []*corev1.Pod{pod("p-b1", "foo", "").Node("node-b").Obj()},
			changed:      pod("p-a1", "foo", "").Namespace("ns1").Node("node-a").Obj(),
			onNode:       "node-a",
			want:         filterView{[]constraintView{nodeFoo}, []map[string]int{{"node-a": 0, "node-b": 1}}, []int{0}},
		},
		{
			name:         "add: pod on non-critical node",
			preemptor:    nodeOnly,
			nodes:        twoNodes(),
			existingPods: []*corev1.Pod{pod("p-b1", "foo", "").Node("node-b").Obj()},
			changed:      pod("p-b2", "foo", "").Node("node-b").Obj(),
			onNode:       "node-b",
			want:         filterView{[]constraintView{nodeFoo}, []map[string]int{{"node-a": 0, "node-b": 2}}, []int{0}},
		},
		{
			name:      "add: node a and x both impact zone and node",
			preemptor: bothConstraints("foo", ""),
			nodes:     zoneAX(),
			changed:   pod("p-a1", "foo", "").Node("node-a").Obj(),
			onNode:    "node-a",
			want: filterView{[]constraintView{zoneFoo, nodeFoo},
				[]map[string]int{{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}}, []int{0, 0}},
		},
		{
			name:         "add: only node a impacts zone and node",
			preemptor:    bothConstraints("foo", ""),
			nodes:        zoneAX(),
			existingPods: []*corev1.Pod{pod("p-x1", "foo", "").Node("node-x").Obj()},
			changed:      pod("p-a1", "foo", "").Node("node-a").Obj(),
			onNode:       "node-a",
			want: filterView{[]constraintView{zoneFoo, nodeFoo},
				[]map[string]int{{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}}, []int{1, 1}},
		},
		{
			name:      "add: a pod when scheduling a node-affinity-unmatched pod",
			preemptor: withNodeAffinity(zoneOnly.DeepCopy(), "foo", corev1.NodeSelectorOpNotIn, "bar"),
			nodes:     affinityNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
			},
			changed: pod("p-a1", "foo", "").Node("node-a").Obj(),
			onNode:  "node-a",
			want:    filterView{[]constraintView{zoneFoo}, []map[string]int{{"zone2": 1}}, []int{1}},
		},
		{
			name:      "add: a pod when scheduling a node-affinity-matched pod",
			preemptor: zoneOnly,
			nodes:     affinityNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-b2", "foo", "").Node("node-b").Obj(),
			},
			changed: pod("p-b1", "foo", "").Node("node-b").Obj(),
			onNode:  "node-b",
			want:    filterView{[]constraintView{zoneFoo}, []map[string]int{{"zone1": 1, "zone2": 2}}, []int{1}},
		},
		{
			name:      "add: a label-selector-unmatched pod",
			preemptor: zoneOnly,
			nodes:     affinityNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-b2", "foo", "").Node("node-b").Obj(),
			},
			changed: pod("p-b1", "bar", "").Node("node-b").Obj(),
			onNode:  "node-b",
			want:    filterView{[]constraintView{zoneFoo}, []map[string]int{{"zone1": 1, "zone2": 1}}, []int{1}},
		},
		{
			name:      "add: a pod on a node whose taint the pod tolerates",
			preemptor: pod("p", "foo", "").Toleration("foo", "", corev1.TaintEffectNoSchedule).SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, &honorPolicy, nil).Obj(),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a").Taint("foo", "", corev1.TaintEffectNoSchedule).Obj(),
				node("node-b", "zone", "zone2", "node", "node-b").Obj(),
			},
			existingPods: []*corev1.Pod{pod("p-b1", "foo", "").Node("node-b").Obj()},
			changed:      pod("p-a1", "foo", "").Node("node-a").Obj(),
			onNode:       "node-a",
			want:         filterView{[]constraintView{tsc(1, "zone", "foo").taints(honorPolicy)}, []map[string]int{{"zone1": 1, "zone2": 1}}, []int{1}},
		},
		{
			name:      "add: a pod on a node whose taint the pod does not tolerate",
			preemptor: pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, &honorPolicy, nil).Obj(),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a").Taint("foo", "", corev1.TaintEffectNoSchedule).Obj(),
				node("node-b", "zone", "zone2", "node", "node-b").Obj(),
			},
			existingPods: []*corev1.Pod{pod("p-b1", "foo", "").Node("node-b").Obj()},
			changed:      pod("p-a1", "foo", "").Node("node-a").Obj(),
			onNode:       "node-a",
			want:         filterView{[]constraintView{tsc(1, "zone", "foo").taints(honorPolicy)}, []map[string]int{{"zone2": 1}}, []int{1}},
		},
		{
			name:      "remove: one spreadConstraint on zone, minimum unchanged",
			preemptor: zoneOnly,
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a").Obj(),
				node("node-b", "zone", "zone1", "node", "node-b").Obj(),
				node("node-x", "zone", "zone2", "node", "node-x").Obj(),
			},
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-x1", "foo", "").Node("node-x").Obj(),
			},
			remove:  true,
			changed: pod("p-a1", "foo", "").Node("node-a").Obj(),
			onNode:  "node-a",
			want:    filterView{[]constraintView{zoneFoo}, []map[string]int{{"zone1": 1, "zone2": 1}}, []int{1}},
		},
		{
			name:      "remove: one spreadConstraint on zone, minimum changed",
			preemptor: zoneOnly,
			nodes:     fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-x1", "foo", "").Node("node-x").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
			},
			remove:  true,
			changed: pod("p-a1", "foo", "").Node("node-a").Obj(),
			onNode:  "node-a",
			want:    filterView{[]constraintView{zoneFoo}, []map[string]int{{"zone1": 1, "zone2": 2}}, []int{1}},
		},
		{
			name:      "remove: an irrelevant pod won't help",
			preemptor: zoneOnly,
			nodes:     fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a0", "bar", "").Node("node-a").Obj(),
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-x1", "foo", "").Node("node-x").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
			},
			remove:  true,
			changed: pod("p-a0", "bar", "").Node("node-a").Obj(),
			onNode:  "node-a",
			want:    filterView{[]constraintView{zoneFoo}, []map[string]int{{"zone1": 2, "zone2": 2}}, []int{2}},
		},
		{
			name:      "remove: two spreadConstraints",
			preemptor: bothConstraints("foo", ""),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a").Obj(),
				node("node-b", "zone", "zone1", "node", "node-b").Obj(),
				node("node-x", "zone", "zone2", "node", "node-x").Obj(),
			},
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-x1", "foo", "").Node("node-x").Obj(),
				pod("p-x2", "foo", "").Node("node-x").Obj(),
			},
			remove:  true,
			changed: pod("p-x1", "foo", "").Node("node-x").Obj(),
			onNode:  "node-x",
			want: filterView{[]constraintView{zoneFoo, nodeFoo},
				[]map[string]int{{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}}, []int{1, 1}},
		},
		{
			name:      "remove: a pod when scheduling a node-affinity-matched pod",
			preemptor: zoneOnly,
			nodes:     affinityNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-b2", "foo", "").Node("node-b").Obj(),
			},
			remove:  true,
			changed: pod("p-b1", "foo", "").Node("node-b").Obj(),
			onNode:  "node-b",
			want:    filterView{[]constraintView{zoneFoo}, []map[string]int{{"zone1": 1, "zone2": 1}}, []int{1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, listArgs, tt.nodes, tt.existingPods)
			state := framework.NewCycleState()
			if _, s := f.pl.PreFilter(context.Background(), state, tt.preemptor, nil); !s.IsSuccess() {
				t.Fatal(s)
			}
			ext := f.pl.PreFilterExtensions()
			var s *framework.Status
			if tt.remove {
				s = ext.RemovePod(context.Background(), state, tt.preemptor, framework.NewPodInfo(tt.changed), f.nodeInfo(t, tt.onNode))
			} else {
				s = ext.AddPod(context.Background(), state, tt.preemptor, framework.NewPodInfo(tt.changed), f.nodeInfo(t, tt.onNode))
			}
			if !s.IsSuccess() {
				t.Fatal(s)
			}
			got, _ := getPreFilterState(state)
			if diff := cmp.Diff(tt.want, viewFilterState(got)); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

// consistencyCluster is a small cluster with every kind of node the
// extensions must tell apart: three zones, a node the pod's affinity
// excludes, a tainted node, and a node without the hostname label.
func consistencyCluster() []*corev1.Node {
	var nodes []*corev1.Node
	for z := range 3 {
		for n := range 3 {
			name := fmt.Sprintf("node-%d-%d", z, n)
			w := node(name, "zone", fmt.Sprintf("zone%d", z), corev1.LabelHostname, name)
			switch name {
			case "node-1-2":
				w.Label("pool", "excluded")
			case "node-2-1":
				w.Taint("dedicated", "x", corev1.TaintEffectNoSchedule)
			}
			nodes = append(nodes, w.Obj())
		}
	}
	nodes = append(nodes, node("node-nohost", "zone", "zone0").Obj())
	return nodes
}

// gangMember is the pod being scheduled and every member of its gang.
func gangMember(name string) *corev1.Pod {
	p := pod(name, "app", "train", "role", "worker").
		SpreadConstraint(1, "zone", dns, matchLabels("app", "train"), nil, nil, nil, nil).
		SpreadConstraint(2, corev1.LabelHostname, dns, matchLabels("app", "train"), ptrTo[int32](12), nil, &honorPolicy, []string{"role"}).Obj()
	return withNodeAffinity(p, "pool", corev1.NodeSelectorOpNotIn, "excluded")
}

// The state after AddPod (or RemovePod) equals PreFilter recomputed with the
// pod present (or absent), whatever the order, across many nodes: gang
// placement reserves members one by one on different nodes.
func TestExtensionsMatchRecompute(t *testing.T) {
	nodes := consistencyCluster()
	existing := []*corev1.Pod{
		pod("old-1", "app", "train", "role", "worker").Node("node-0-0").Obj(),
		pod("old-2", "app", "train", "role", "worker").Node("node-1-1").Obj(),
		pod("old-3", "app", "train", "role", "ps").Node("node-2-2").Obj(),
		pod("other-ns", "app", "train", "role", "worker").Namespace("elsewhere").Node("node-0-1").Obj(),
	}
	scheduling := gangMember("p")

	recompute := func(pods []*corev1.Pod) (filterView, map[string]*framework.Status) {
		f := newFixture(t, listArgs, nodes, pods)
		state := framework.NewCycleState()
		if _, s := f.pl.PreFilter(context.Background(), state, scheduling, nil); !s.IsSuccess() {
			t.Fatal(s)
		}
		s, _ := getPreFilterState(state)
		return viewFilterState(s), filterAll(t, f, state, scheduling)
	}

	rng := rand.New(rand.NewPCG(1, 37))
	for run := range 20 {
		t.Run(fmt.Sprintf("run-%d", run), func(t *testing.T) {
			f := newFixture(t, listArgs, nodes, existing)
			state := framework.NewCycleState()
			if _, s := f.pl.PreFilter(context.Background(), state, scheduling, nil); !s.IsSuccess() {
				t.Fatal(s)
			}
			present := append([]*corev1.Pod{}, existing...)
			var added []*corev1.Pod
			for step := range 25 {
				// Add a member (or an unrelated pod) on a random node, or take
				// back one added earlier.
				if len(added) > 0 && rng.IntN(4) == 0 {
					i := rng.IntN(len(added))
					p := added[i]
					added = append(added[:i], added[i+1:]...)
					present = without(present, p)
					if s := f.pl.RemovePod(context.Background(), state, scheduling, framework.NewPodInfo(p), f.nodeInfo(t, p.Spec.NodeName)); !s.IsSuccess() {
						t.Fatal(s)
					}
				} else {
					n := nodes[rng.IntN(len(nodes))].Name
					var p *corev1.Pod
					switch rng.IntN(5) {
					case 0:
						p = pod(fmt.Sprintf("unrelated-%d", step), "app", "web").Node(n).Obj()
					case 1:
						p = pod(fmt.Sprintf("ps-%d", step), "app", "train", "role", "ps").Node(n).Obj()
					default:
						p = gangMember(fmt.Sprintf("member-%d", step))
						p.Spec.NodeName = n
					}
					added = append(added, p)
					present = append(present, p)
					if s := f.pl.AddPod(context.Background(), state, scheduling, framework.NewPodInfo(p), f.nodeInfo(t, n)); !s.IsSuccess() {
						t.Fatal(s)
					}
				}
				got, _ := getPreFilterState(state)
				wantView, wantFilter := recompute(present)
				if diff := cmp.Diff(wantView, viewFilterState(got)); diff != "" {
					t.Fatalf("step %d: incremental state differs from PreFilter (-recomputed +incremental):\n%s", step, diff)
				}
				if diff := cmp.Diff(wantFilter, filterAll(t, f, state, scheduling), cmp.Comparer(statusEqual)); diff != "" {
					t.Fatalf("step %d: Filter verdicts differ (-recomputed +incremental):\n%s", step, diff)
				}
			}
		})
	}
}

// kube-scheduler's two critical paths lose the minimum when pods land on
// several domains in turn; the exact minimum does not.
func TestAddPodOnEveryMinimumDomain(t *testing.T) {
	nodes := []*corev1.Node{
		node("node-a", "zone", "a").Obj(), node("node-b", "zone", "b").Obj(), node("node-c", "zone", "c").Obj(),
	}
	p := pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj()
	f := newFixture(t, listArgs, nodes, nil)
	state := framework.NewCycleState()
	if _, s := f.pl.PreFilter(context.Background(), state, p, nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	for i, n := range []string{"node-a", "node-b"} {
		member := pod(fmt.Sprintf("m-%d", i), "foo", "").Node(n).Obj()
		if s := f.pl.AddPod(context.Background(), state, p, framework.NewPodInfo(member), f.nodeInfo(t, n)); !s.IsSuccess() {
			t.Fatal(s)
		}
	}
	// Zones hold 1/1/0: a third pod in zone a would make skew 2.
	want := map[string]*framework.Status{
		"node-a": framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch),
		"node-b": framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch),
		"node-c": nil,
	}
	if diff := cmp.Diff(want, filterAll(t, f, state, p), cmp.Comparer(statusEqual)); diff != "" {
		t.Errorf("Filter (-want +got):\n%s", diff)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	f := newFixture(t, listArgs, fourNodes(), nil)
	p := pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj()
	state := framework.NewCycleState()
	if _, s := f.pl.PreFilter(context.Background(), state, p, nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	orig, _ := getPreFilterState(state)
	before := viewFilterState(orig.Clone().(*preFilterState))
	clone := state.Clone()
	if s := f.pl.AddPod(context.Background(), clone, p, framework.NewPodInfo(pod("q", "foo", "").Node("node-a").Obj()), f.nodeInfo(t, "node-a")); !s.IsSuccess() {
		t.Fatal(s)
	}
	if diff := cmp.Diff(before, viewFilterState(orig)); diff != "" {
		t.Errorf("AddPod on a clone changed the original (-before +after):\n%s", diff)
	}
	cloned, _ := getPreFilterState(clone)
	if got := cloned.tpValueToMatchNum[0]["zone1"]; got != 1 {
		t.Errorf("clone zone1 = %d, want 1", got)
	}
}

func filterAll(t *testing.T, f *fixture, state *framework.CycleState, p *corev1.Pod) map[string]*framework.Status {
	out := map[string]*framework.Status{}
	for _, ni := range f.handle.List() {
		out[ni.Name()] = f.pl.Filter(context.Background(), state, p, ni)
	}
	return out
}

func statusEqual(a, b *framework.Status) bool { return a.Equal(b) }

func without(pods []*corev1.Pod, p *corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, q := range pods {
		if q != p {
			out = append(out, q)
		}
	}
	return out
}
