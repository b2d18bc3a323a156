package schedule

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// TestClassStoreEqualsFullCycles simulates a queue on random clusters: gangs
// of a few random shapes (spreading, pod (anti-)affinity, Services; each
// gang its own Job, PodGroup and priority, which a class shares across
// gangs), each placed on a fork of the current working copy twice, with a
// full cycle per member and with a sequence that borrows classes from a
// ClassStore, which must give the same node, score, verdict and
// not-evaluated list for every member. Between gangs the current copy takes
// some of them (as the queue simulation commits a gang that starts), and
// now and then changes in ways the store must notice: a running pod with
// required anti-affinity added, pods evicted, a fork confined to a domain,
// and foreign pods started (a host port, which some shapes ask for too, the
// labels a class's terms and spreading count, preferred anti-affinity).
func TestClassStoreEqualsFullCycles(t *testing.T) {
	lent, total := 0, 0
	for seed := range uint64(80) {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			snap := randomCluster(rng, true)
			var protos []*testutil.PodWrapper
			for c := range 1 + rng.IntN(3) {
				proto, _ := randomProto(rng, snap, c)
				if rng.IntN(4) == 0 {
					// A host port: NodePorts reads the nodes' pods.
					proto.Pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{HostPort: 8080, ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
				}
				protos = append(protos, proto)
			}
			cur, err := NewScheduler(snap, Options{})
			if err != nil {
				t.Fatal(err)
			}
			store := NewClassStore()
			ctx := context.Background()
			// run schedules and reserves pods one after another on s, with
			// seq (withStore) or full cycles, and says what each got.
			run := func(s *Scheduler, seq *Sequence, pods []*corev1.Pod, withStore bool, placed func(*corev1.Pod, string)) (out []string) {
				for _, pod := range pods {
					var res *Result
					var err error
					if withStore {
						res, err = seq.Schedule(ctx, pod)
					} else {
						res, err = s.Schedule(ctx, pod)
					}
					if err != nil {
						t.Fatal(err)
					}
					if res.Verdict != VerdictScheduled {
						out = append(out, fmt.Sprintf("%s: %s %v", pod.Name, res.Message, res.NotEvaluated))
						continue
					}
					out = append(out, fmt.Sprintf("%s: %s %d %v", pod.Name, res.SelectedNode, res.SelectedScore, res.NotEvaluated))
					if placed != nil {
						placed(pod, res.SelectedNode)
					}
					if withStore {
						err = seq.Reserve(ctx, pod, res.SelectedNode)
					} else {
						err = s.Reserve(pod, res.SelectedNode)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				return out
			}
			// prev is the gang placed before: its two working copies and
			// the sequence that borrowed from the store.
			type placement struct {
				full, store *Scheduler
				seq         *Sequence
			}
			var prev *placement
			// terms: a foreign pod with pod affinity terms started since
			// the last gang of the shape; that gang is not counted.
			terms := map[*testutil.PodWrapper]bool{}
			for g := range 12 {
				proto := protos[rng.IntN(len(protos))]
				name := fmt.Sprintf("g-%02d", g)
				prio := int32(rng.IntN(3) * 100)
				var pods []*corev1.Pod
				for k := range 1 + rng.IntN(12) {
					p := *proto
					p.Pod = *proto.Pod.DeepCopy()
					p.Name(fmt.Sprintf("%s-%d", name, k)).UID(fmt.Sprintf("%s-%d", name, k)).
						Priority(fmt.Sprintf("p%d", prio), prio).PodGroup(name).Label("job-name", name)
					p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: name, UID: "job-" + "name", Controller: new(true)}}
					pods = append(pods, indexed(rng, p.Obj(), k))
				}
				var confine []string
				if rng.IntN(8) == 0 {
					for _, n := range snap.Nodes {
						if rng.IntN(2) == 0 {
							confine = append(confine, n.Name)
						}
					}
				}
				var fullCopy, storeCopy *Scheduler
				var storeSeq *Sequence
				place := func(withStore bool) (out []string, plan [][2]string) {
					s, err := cur.Fork()
					if err != nil {
						t.Fatal(err)
					}
					if confine != nil {
						s.Confine(confine)
					}
					seq := s.NewSequenceIn(store)
					if withStore {
						storeCopy, storeSeq = s, seq
					} else {
						fullCopy = s
					}
					out = run(s, seq, pods, withStore, func(pod *corev1.Pod, node string) { plan = append(plan, [2]string{pod.Name, node}) })
					return out, plan
				}
				full, plan := place(false)
				before := store.Hits()
				withStore, _ := place(true)
				if diff := cmp.Diff(full, withStore); diff != "" {
					t.Fatalf("gang %s: the store's classes differ from full cycles (-full +store):\n%s", name, diff)
				}
				if prev != nil && rng.IntN(3) == 0 {
					// The sequence before this one goes on, its class
					// taken over by this one's: it must not use it.
					var more []*corev1.Pod
					proto := protos[rng.IntN(len(protos))]
					for k := range 1 + rng.IntN(3) {
						p := *proto
						p.Pod = *proto.Pod.DeepCopy()
						more = append(more, p.Name(fmt.Sprintf("late-%02d-%d", g, k)).UID(fmt.Sprintf("late-%02d-%d", g, k)).Obj())
					}
					a := run(prev.full, nil, more, false, nil)
					b := run(prev.store, prev.seq, more, true, nil)
					if diff := cmp.Diff(a, b); diff != "" {
						t.Fatalf("after gang %s, the sequence before it differs from full cycles (-full +store):\n%s", name, diff)
					}
				}
				prev = &placement{full: fullCopy, store: storeCopy, seq: storeSeq}
				counted := !terms[proto]
				terms[proto] = false
				if af := proto.Spec.Affinity; counted && confine == nil && (af == nil || af.PodAffinity == nil && af.PodAntiAffinity == nil) {
					total++
					if store.Hits() > before {
						lent++
					}
				}
				// The gang starts, most of the time: the next gangs see it.
				if rng.IntN(4) > 0 {
					next, err := cur.Fork()
					if err != nil {
						t.Fatal(err)
					}
					byName := map[string]*corev1.Pod{}
					for _, p := range pods {
						byName[p.Name] = p
					}
					for _, a := range plan {
						if err := next.Reserve(byName[a[0]], a[1]); err != nil {
							t.Fatal(err)
						}
					}
					cur = next
				}
				switch rng.IntN(10) {
				case 2, 3, 4:
					// Foreign pods without terms start (a pod of no gang,
					// a gang of another shape): a host port, the labels of
					// a class (its spreading and affinity count them),
					// another namespace, preferred anti-affinity.
					next, err := cur.Fork()
					if err != nil {
						t.Fatal(err)
					}
					for k := range 1 + rng.IntN(4) {
						name := fmt.Sprintf("f-%02d-%d", g, k)
						p := testutil.MakePod().Namespace("ml").Name(name).UID(name).Req(testutil.Res{"cpu": "500m", "memory": "1Gi"})
						if rng.IntN(2) == 0 {
							p.Label("app", fmt.Sprintf("c%d", rng.IntN(3)))
						}
						if rng.IntN(3) == 0 {
							p.Namespace("o")
						}
						if rng.IntN(5) == 0 {
							// The store refuses the classes that followed
							// the nodes before it.
							for _, p := range protos {
								terms[p] = true
							}
							p.PreferredPodAntiAffinity(10, testutil.MakePodAffinityTerm(corev1.LabelHostname).MatchLabel("app", fmt.Sprintf("c%d", rng.IntN(3))))
						}
						pod := p.Obj()
						if rng.IntN(2) == 0 {
							pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{HostPort: 8080, ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
						}
						if err := next.Reserve(pod, snap.Nodes[rng.IntN(len(snap.Nodes))].Name); err != nil {
							t.Fatal(err)
						}
					}
					cur = next
				case 0:
					// A pod that keeps every pod of one shape off its zone.
					next, err := cur.Fork()
					if err != nil {
						t.Fatal(err)
					}
					node := snap.Nodes[rng.IntN(len(snap.Nodes))].Name
					anti := testutil.MakePod().Namespace("o").Name(fmt.Sprintf("anti-%d", g)).UID(fmt.Sprintf("anti-%d", g)).
						Req(testutil.Res{"cpu": "100m"}).
						RequiredPodAntiAffinity(testutil.MakePodAffinityTerm(corev1.LabelTopologyZone).MatchLabel("app", fmt.Sprintf("c%d", rng.IntN(3))).Namespaces("ml")).Obj()
					if err := next.Reserve(anti, node); err == nil {
						cur = next
					}
				case 1:
					// Running pods of a node go (a preemption what-if).
					next, err := cur.Fork()
					if err != nil {
						t.Fatal(err)
					}
					ni := next.NodeInfos()[rng.IntN(len(snap.Nodes))]
					if len(ni.Pods) > 0 {
						if err := next.Evict([]*corev1.Pod{ni.Pods[0].Pod}, ni.Name()); err != nil {
							t.Fatal(err)
						}
						cur = next
					}
				}
			}
		})
	}
	// Gangs without pod (anti-)affinity borrow the class of their shape
	// when one was placed before (the first of each shape cannot; a pod
	// with anti-affinity added, or evicted pods, make the store refuse).
	if lent < total/3 {
		t.Errorf("the store lent a class to %d of %d gangs", lent, total)
	}
	t.Logf("the store lent a class to %d of %d gangs", lent, total)
}

// TestClassKeyIgnoresWhatFilterAndScoreDoNotRead: pods of equal shape of
// different Jobs, PodGroups and priorities share a score key, not a full
// key; a ReplicaSet's pods of different ReplicaSets share neither (default
// spreading selects by the ReplicaSet).
func TestClassKeyIgnoresWhatFilterAndScoreDoNotRead(t *testing.T) {
	sk := &selectedKeys{version: 1}
	pod := func(group string, prio int32, kind, owner string) *corev1.Pod {
		p := testutil.MakePod().Namespace("ml").Name(group+"-0").Req(testutil.Res{"cpu": "1"}).Priority(fmt.Sprint(prio), prio).PodGroup(group).Obj()
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: map[string]string{"Job": "batch/v1", "ReplicaSet": "apps/v1"}[kind], Kind: kind, Name: owner, Controller: new(true)}}
		return p
	}
	a, af, _ := classKey(pod("a", 10, "Job", "a"), sk)
	b, bf, _ := classKey(pod("b", 20, "Job", "b"), sk)
	if a != b {
		t.Errorf("pods of equal shape of two Jobs have different score keys:\n%s\n%s", a, b)
	}
	if af == bf {
		t.Errorf("pods of different priorities and PodGroups share a full key")
	}
	c, _, _ := classKey(pod("c", 10, "ReplicaSet", "c"), sk)
	d, _, _ := classKey(pod("c", 10, "ReplicaSet", "d"), sk)
	if c == d {
		t.Errorf("pods of two ReplicaSets share a score key")
	}
}

// TestClassStoreRangeAfterNoNodeFit: a class lent after a cycle in which
// no node was feasible must not keep the raw scores of the nodes that went
// infeasible then in a RangeNormalizer's range (InterPodAffinity's here).
// Gang a fills zone z1, the only one its required affinity allows; gang b
// finds no node (its class's last step has no feasible node); pods of the
// app start in z2, whose nodes become feasible; gang c borrows the class
// and must score them as full cycles do (the range over n2 and n3 only,
// not the old score of n1b, full since a).
func TestClassStoreRangeAfterNoNodeFit(t *testing.T) {
	ctx := context.Background()
	node := func(name, zone, cpu string) *corev1.Node {
		return testutil.MakeNode().Name(name).Label(corev1.LabelTopologyZone, zone).Capacity(testutil.Res{"cpu": cpu, "memory": "64Gi", "pods": "20"}).Obj()
	}
	app := func(name, nodeName, cpu string) *corev1.Pod {
		return testutil.MakePod().Namespace("ml").Name(name).UID(name).Label("app", "c0").Req(testutil.Res{"cpu": cpu}).Node(nodeName).Obj()
	}
	snap := &Snapshot{
		Nodes: []*corev1.Node{node("n1", "z1", "2"), node("n1b", "z1", "1"), node("n2", "z2", "2"), node("n3", "z2", "8")},
		Pods: []*corev1.Pod{app("r", "n1", "1"), app("r-0", "n1b", "0"), app("r-1", "n1b", "0"), app("r-2", "n1b", "0"),
			// Terms that read the label key app from the start: the key
			// set, and with it the class key, stays the same.
			testutil.MakePod().Namespace("o").Name("k").Node("n3").
				RequiredPodAntiAffinity(testutil.MakePodAffinityTerm(corev1.LabelHostname).MatchLabel("app", "none")).Obj()},
		// A Service: default spreading scores the members, a normalizer
		// that is no RangeNormalizer, before InterPodAffinity.
		Services: []*corev1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "c0"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "c0"}}}},
	}
	member := func(name string) *corev1.Pod {
		return testutil.MakePod().Namespace("ml").Name(name).UID(name).Label("app", "c0").Req(testutil.Res{"cpu": "1"}).
			RequiredPodAffinity(testutil.MakePodAffinityTerm(corev1.LabelTopologyZone).MatchLabel("app", "c0")).
			PreferredPodAffinity(10, testutil.MakePodAffinityTerm(corev1.LabelHostname).MatchLabel("app", "c0")).Obj()
	}
	cur, err := NewScheduler(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	store := NewClassStore()
	// place places the members on forks of cur with full cycles and with a
	// sequence that borrows from the store, and returns both outcomes and
	// the plan.
	place := func(names ...string) (full, withStore []string, plan [][2]string) {
		for _, useStore := range []bool{false, true} {
			s, err := cur.Fork()
			if err != nil {
				t.Fatal(err)
			}
			seq := s.NewSequenceIn(store)
			var out []string
			for _, n := range names {
				pod := member(n)
				var res *Result
				if useStore {
					res, err = seq.Schedule(ctx, pod)
				} else {
					res, err = s.Schedule(ctx, pod)
				}
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != VerdictScheduled {
					out = append(out, n+": -")
					continue
				}
				out = append(out, fmt.Sprintf("%s: %s %d", n, res.SelectedNode, res.SelectedScore))
				if useStore {
					err = seq.Reserve(ctx, pod, res.SelectedNode)
				} else {
					plan = append(plan, [2]string{n, res.SelectedNode})
					err = s.Reserve(pod, res.SelectedNode)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if useStore {
				withStore = out
			} else {
				full = out
			}
		}
		return full, withStore, plan
	}
	commit := func(pods map[string]*corev1.Pod, plan [][2]string) {
		next, err := cur.Fork()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range plan {
			if err := next.Reserve(pods[a[0]], a[1]); err != nil {
				t.Fatal(err)
			}
		}
		cur = next
	}
	full, withStore, plan := place("a-0")
	if diff := cmp.Diff(full, withStore); diff != "" {
		t.Fatalf("gang a (-full +store):\n%s", diff)
	}
	if len(plan) != 1 || plan[0][1] != "n1b" {
		t.Fatalf("gang a: %v, want a-0 on n1b", full)
	}
	commit(map[string]*corev1.Pod{"a-0": member("a-0")}, plan)
	// A pod of no gang takes the rest of n1.
	commit(map[string]*corev1.Pod{"o": testutil.MakePod().Namespace("o").Name("o").UID("o").Req(testutil.Res{"cpu": "1"}).Obj()}, [][2]string{{"o", "n1"}})
	full, withStore, _ = place("b-0")
	if diff := cmp.Diff(full, withStore); diff != "" || full[0] != "b-0: -" {
		t.Fatalf("gang b: %v (-full +store):\n%s", full, diff)
	}
	// Pods of the app start in z2 (a gang of another shape).
	commit(map[string]*corev1.Pod{"f-0": app("f-0", "", "100m"), "f-1": app("f-1", "", "100m"), "f-2": app("f-2", "", "100m")},
		[][2]string{{"f-0", "n2"}, {"f-1", "n2"}, {"f-2", "n3"}})
	before := store.Hits()
	full, withStore, _ = place("c-0", "c-1", "c-2")
	if store.Hits() == before {
		t.Fatalf("gang c did not borrow the class")
	}
	if diff := cmp.Diff(full, withStore); diff != "" {
		t.Errorf("gang c: the store's class differs from full cycles (-full +store):\n%s", diff)
	}
}
