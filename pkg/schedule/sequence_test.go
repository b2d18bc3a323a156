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

// TestSequenceEqualsFullCycles places random runs of equal pods on random
// clusters twice, once incrementally and once with a full cycle per pod, and
// requires the same node, score and verdict for every pod.
func TestSequenceEqualsFullCycles(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			snap := randomCluster(rng, false)
			var pods []*corev1.Pod
			for c := range 1 + rng.IntN(3) {
				req := randomRequest(rng)
				for k := range 1 + rng.IntN(30) {
					p := testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("m-%d-%02d", c, k)).Req(req)
					if c == 1 {
						p.Toleration("soft", "", corev1.TaintEffectPreferNoSchedule)
					}
					pods = append(pods, p.Obj())
				}
			}
			if hits, _ := compareSequence(t, snap, pods, nil); hits == 0 && len(pods) > 3 {
				t.Errorf("no incremental cycle ran for %d pods", len(pods))
			}
		})
	}
}

// TestSequenceEqualsFullCyclesWithTopology does the same with pods that
// spread over zones and hosts, keep away from each other or want to run
// together, among running pods that count for or against them, sometimes
// confined to a few nodes as a gang's topology domain is.
func TestSequenceEqualsFullCyclesWithTopology(t *testing.T) {
	total, incremental := 0, 0
	for seed := range uint64(120) {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 2))
			snap := randomCluster(rng, true)
			var pods []*corev1.Pod
			readsIndex := false
			for c := range 1 + rng.IntN(3) {
				proto, reads := randomProto(rng, snap, c)
				readsIndex = readsIndex || reads
				for k := range 1 + rng.IntN(40) {
					p := *proto
					p.Pod = *proto.Pod.DeepCopy()
					pods = append(pods, indexed(rng, p.Name(fmt.Sprintf("m-%d-%02d", c, k)).Obj(), k))
				}
			}
			// Running pods and Services whose selectors read the index.
			if rng.IntN(6) == 0 {
				snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("o").Name("reads-index").Node(snap.Nodes[0].Name).
					Req(testutil.Res{"cpu": "1"}).
					RequiredPodAntiAffinity(testutil.MakePodAffinityTerm(pickKey(rng)).MatchLabel(indexLabel, "2").Namespaces("ml")).Obj())
				readsIndex = true
			}
			if rng.IntN(3) == 0 {
				snap.Services = append(snap.Services, &corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "svc-index"},
					Spec:       corev1.ServiceSpec{Selector: map[string]string{indexLabel: "0"}},
				})
				readsIndex = true
			}
			var confine []string
			if rng.IntN(4) == 0 {
				zone := fmt.Sprintf("z-%d", rng.IntN(3))
				for _, n := range snap.Nodes {
					if n.Labels[corev1.LabelTopologyZone] == zone || rng.IntN(10) == 0 {
						confine = append(confine, n.Name)
					}
				}
			}
			hits, scheduled := compareSequence(t, snap, pods, confine)
			if !readsIndex {
				total += scheduled
				incremental += hits
			}
		})
	}
	// Where no selector reads the members' index, most pods that fit are
	// scheduled incrementally, although their labels, hostnames and
	// environments differ (the rest are the first of a run and the classes
	// that need full cycles).
	if incremental < total/2 {
		t.Errorf("only %d of %d scheduled pods were scheduled incrementally", incremental, total)
	}
	t.Logf("%d of %d scheduled pods were scheduled incrementally where no selector reads the index", incremental, total)
}

// randomProto makes the c-th random pod shape of the topology tests: it
// spreads over zones and hosts, keeps away from its kind or wants to run
// with it, sometimes with selectors that read the members' index
// (readsIndex); a Service may select it (added to snap).
func randomProto(rng *rand.Rand, snap *Snapshot, c int) (proto *testutil.PodWrapper, readsIndex bool) {
	req := randomRequest(rng)
	app := fmt.Sprintf("c%d", c)
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	proto = testutil.MakePod().Namespace("ml").Label("app", app).Req(req)
	if rng.IntN(2) == 0 {
		var minDomains *int32
		if rng.IntN(4) == 0 {
			minDomains = new(int32(3 + rng.IntN(2)))
		}
		var taints *corev1.NodeInclusionPolicy
		if rng.IntN(3) == 0 {
			taints = new(corev1.NodeInclusionPolicyHonor)
		}
		proto.SpreadConstraint(int32(1+rng.IntN(2)), corev1.LabelTopologyZone, corev1.DoNotSchedule, selector, minDomains, nil, taints, nil)
	}
	if rng.IntN(3) == 0 {
		proto.SpreadConstraint(int32(1+rng.IntN(3)), corev1.LabelHostname, corev1.DoNotSchedule, selector, nil, nil, nil, nil)
	}
	if rng.IntN(3) == 0 {
		proto.RequiredPodAntiAffinity(testutil.MakePodAffinityTerm(corev1.LabelHostname).MatchLabel("app", app))
	}
	if rng.IntN(4) == 0 {
		proto.RequiredPodAffinity(testutil.MakePodAffinityTerm(corev1.LabelTopologyZone).MatchLabel("app", app))
	}
	// Soft spreading: its scores follow the reserved pods.
	if rng.IntN(4) == 0 {
		proto.SpreadConstraint(int32(1+rng.IntN(3)), pickKey(rng), corev1.ScheduleAnyway, selector, nil, nil, nil, nil)
	}
	// Without constraints of its own, a pod a Service selects
	// gets the system default spreading.
	if rng.IntN(2) == 0 {
		snap.Services = append(snap.Services, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "svc-" + app},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": app}},
		})
	}
	// Preferred pod (anti-)affinity: its scores follow the
	// reserved pods too.
	if rng.IntN(5) == 0 {
		proto.PreferredPodAntiAffinity(int32(1+rng.IntN(100)), testutil.MakePodAffinityTerm(corev1.LabelHostname).MatchLabel("app", app))
	}
	if rng.IntN(4) == 0 {
		proto.PreferredPodAffinity(int32(1+rng.IntN(100)), testutil.MakePodAffinityTerm(pickKey(rng)).MatchLabel("app", app))
	}
	// Selectors that read the members' index label: then the
	// members differ where it matters, and must not share a class.
	if rng.IntN(6) == 0 {
		proto.SpreadConstraint(1, pickKey(rng), corev1.ScheduleAnyway, selector, nil, nil, nil, []string{indexLabel})
		readsIndex = true
	}
	if rng.IntN(8) == 0 {
		proto.PreferredPodAntiAffinity(int32(1+rng.IntN(100)), testutil.MakePodAffinityTerm(corev1.LabelHostname).MatchLabel(indexLabel, "1"))
		readsIndex = true
	}
	return proto, readsIndex
}

// indexLabel is an Indexed Job's completion index label.
const indexLabel = "batch.kubernetes.io/job-completion-index"

// indexed makes pod the k-th member of an indexed workload, most of the
// time: its own index label and annotation, hostname and rank in its
// environment and arguments, which no plugin reads unless a selector reads
// the label.
func indexed(rng *rand.Rand, pod *corev1.Pod, k int) *corev1.Pod {
	if rng.IntN(4) == 0 {
		return pod
	}
	index := fmt.Sprint(k)
	pod.Labels[indexLabel] = index
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[indexLabel] = index
	pod.Spec.Hostname, pod.Spec.Subdomain = "m-"+index, "train"
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		c.Env = append(c.Env, corev1.EnvVar{Name: "RANK", Value: index})
		c.Args = append(c.Args, "--rank="+index)
	}
	return pod
}

func randomRequest(rng *rand.Rand) testutil.Res {
	req := testutil.Res{"cpu": fmt.Sprint(1 + rng.IntN(8)), "memory": fmt.Sprintf("%dGi", 1+rng.IntN(32))}
	if rng.IntN(2) == 0 {
		req["nvidia.com/gpu"] = fmt.Sprint(1 + rng.IntN(4))
	}
	return req
}

// randomCluster makes 5 to 44 nodes in three zones with running pods; with
// topology, some nodes lack a zone, nodes sit in racks, and running pods
// carry the classes' labels and anti-affinity against them.
func randomCluster(rng *rand.Rand, topology bool) *Snapshot {
	snap := &Snapshot{}
	nodes := 5 + rng.IntN(40)
	for i := range nodes {
		n := testutil.MakeNode().Name(fmt.Sprintf("n-%02d", i)).
			Capacity(testutil.Res{"cpu": fmt.Sprint(4 + rng.IntN(60)), "memory": fmt.Sprintf("%dGi", 8+rng.IntN(200)),
				"pods": fmt.Sprint(3 + rng.IntN(20)), "nvidia.com/gpu": fmt.Sprint(rng.IntN(9))})
		if !topology || rng.IntN(12) > 0 {
			n.Label(corev1.LabelTopologyZone, fmt.Sprintf("z-%d", rng.IntN(3)))
		}
		if topology {
			n.Label("rack", fmt.Sprintf("r-%d", rng.IntN(6)))
		}
		switch rng.IntN(6) {
		case 0:
			n.Taint("dedicated", "x", corev1.TaintEffectNoSchedule)
		case 1:
			n.Taint("soft", "x", corev1.TaintEffectPreferNoSchedule)
		case 2:
			if topology {
				n.Taint("soft", "x", corev1.TaintEffectPreferNoSchedule).Taint("softer", "x", corev1.TaintEffectPreferNoSchedule)
			}
		}
		snap.Nodes = append(snap.Nodes, n.Obj())
		for k := range rng.IntN(3) {
			p := testutil.MakePod().Namespace("o").Name(fmt.Sprintf("r-%d-%d", i, k)).Node(n.Obj().Name).
				Req(testutil.Res{"cpu": fmt.Sprint(1 + rng.IntN(4)), "memory": fmt.Sprintf("%dGi", 1+rng.IntN(16))})
			if topology {
				switch rng.IntN(8) {
				case 0:
					p.Namespace("ml").Label("app", fmt.Sprintf("c%d", rng.IntN(3)))
				case 1:
					p.RequiredPodAntiAffinity(testutil.MakePodAffinityTerm(corev1.LabelHostname).
						MatchLabel("app", fmt.Sprintf("c%d", rng.IntN(3))).Namespaces("ml"))
				}
			}
			snap.Pods = append(snap.Pods, p.Obj())
		}
	}
	return snap
}

// cycles runs pods through a Sequence when incremental (the path under
// test), else through full cycles of its scheduler, failing the test on an
// error: the randomized tests compare the two.
type cycles struct {
	t           *testing.T
	s           *Scheduler
	seq         *Sequence
	incremental bool
}

func newCycles(t *testing.T, s *Scheduler, incremental bool) *cycles {
	return &cycles{t: t, s: s, seq: s.NewSequence(), incremental: incremental}
}

func (c *cycles) schedule(pod *corev1.Pod) *Result {
	c.t.Helper()
	var res *Result
	var err error
	if c.incremental {
		res, err = c.seq.Schedule(context.Background(), pod)
	} else {
		res, err = c.s.Schedule(context.Background(), pod)
	}
	if err != nil {
		c.t.Fatal(err)
	}
	return res
}

func (c *cycles) reserve(pod *corev1.Pod, node string) {
	c.t.Helper()
	var err error
	if c.incremental {
		err = c.seq.Reserve(context.Background(), pod, node)
	} else {
		err = c.s.Reserve(pod, node)
	}
	if err != nil {
		c.t.Fatal(err)
	}
}

func (c *cycles) evict(victims []*corev1.Pod, node string) {
	c.t.Helper()
	var err error
	if c.incremental {
		err = c.seq.Evict(victims, node)
	} else {
		err = c.s.Evict(victims, node)
	}
	if err != nil {
		c.t.Fatal(err)
	}
}

// compareSequence schedules and reserves pods one by one with full cycles
// and with a Sequence, requires the same outcome, and returns how many
// cycles the Sequence ran incrementally.
func compareSequence(t *testing.T, snap *Snapshot, pods []*corev1.Pod, confine []string) (hits, scheduled int) {
	t.Helper()
	run := func(incremental bool) []string {
		s, err := NewScheduler(snap, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if confine != nil {
			s.Confine(confine)
		}
		c := newCycles(t, s, incremental)
		var out []string
		for _, pod := range pods {
			res := c.schedule(pod)
			if res.Verdict != VerdictScheduled {
				out = append(out, pod.Name+": "+res.Message)
				continue
			}
			out = append(out, fmt.Sprintf("%s: %s %d", pod.Name, res.SelectedNode, res.SelectedScore))
			if incremental {
				scheduled++
			}
			c.reserve(pod, res.SelectedNode)
		}
		hits += c.seq.hits
		return out
	}
	if diff := cmp.Diff(run(false), run(true)); diff != "" {
		t.Errorf("incremental differs from full cycles (-full +incremental):\n%s", diff)
	}
	return hits, scheduled
}

func pickKey(rng *rand.Rand) string {
	return []string{corev1.LabelTopologyZone, corev1.LabelHostname, "rack"}[rng.IntN(3)]
}

// TestFilterOnEqualsConfinedCycle: FilterOn's status on a node is the one a
// full cycle confined to that node gives it, on random clusters with
// topology, after some reservations.
func TestFilterOnEqualsConfinedCycle(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 3))
		snap := randomCluster(rng, true)
		s, err := NewScheduler(snap, Options{})
		if err != nil {
			t.Fatal(err)
		}
		app := fmt.Sprintf("c%d", rng.IntN(3))
		proto := testutil.MakePod().Namespace("ml").Label("app", app).Req(randomRequest(rng))
		if rng.IntN(2) == 0 {
			proto.SpreadConstraint(1, corev1.LabelTopologyZone, corev1.DoNotSchedule, &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, nil, nil, nil, nil)
		}
		if rng.IntN(3) == 0 {
			proto.RequiredPodAntiAffinity(testutil.MakePodAffinityTerm(corev1.LabelHostname).MatchLabel("app", app))
		}
		for k := range 6 {
			p := *proto
			p.Pod = *proto.Pod.DeepCopy()
			pod := p.Name(fmt.Sprintf("m-%d", k)).Obj()
			for _, n := range snap.Nodes {
				got, err := s.FilterOn(context.Background(), pod, n.Name)
				if err != nil {
					t.Fatal(err)
				}
				c, err := s.Fork()
				if err != nil {
					t.Fatal(err)
				}
				c.Confine([]string{n.Name})
				res, err := c.Schedule(context.Background(), pod)
				if err != nil {
					t.Fatal(err)
				}
				want := res.Nodes[c.byName[n.Name]].Status
				if got.Code() != want.Code() || got.Message() != want.Message() {
					t.Fatalf("seed %d, %s on %s: FilterOn %v %q, confined cycle %v %q", seed, pod.Name, n.Name, got.Code(), got.Message(), want.Code(), want.Message())
				}
			}
			// Reserve it where a full cycle puts it, so later members see it.
			if res, err := s.Schedule(context.Background(), pod); err == nil && res.Verdict == VerdictScheduled {
				if err := s.Reserve(pod, res.SelectedNode); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestSequenceRetriesPreemptionLikeFullCycles follows explain's preemption
// what-if: high-priority members that fit no node each preempt the victims
// kube-scheduler's preemption picks, and take the node it nominates, one
// after another. A Sequence (which filters again only the nodes that
// changed and remembers the dry run's outcome per node) must give every
// member the answer a full cycle gives: verdict, message, nominated node
// and victims.
func TestSequenceRetriesPreemptionLikeFullCycles(t *testing.T) {
	retried := 0
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 4))
		snap := &Snapshot{}
		for i := range 4 + rng.IntN(12) {
			node := fmt.Sprintf("n-%02d", i)
			snap.Nodes = append(snap.Nodes, testutil.MakeNode().Name(node).Label(corev1.LabelTopologyZone, fmt.Sprintf("z-%d", i%3)).
				Capacity(testutil.Res{"cpu": "16", "memory": "64Gi", "pods": "20", "nvidia.com/gpu": "8"}).Obj())
			for k := range 1 + rng.IntN(4) {
				prio := int32(10 * (1 + rng.IntN(3)))
				snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("low").Name(fmt.Sprintf("v-%d-%d", i, k)).Node(node).
					Priority(fmt.Sprintf("p%d", prio), prio).Req(testutil.Res{"cpu": "2", "nvidia.com/gpu": fmt.Sprint(1 + rng.IntN(3))}).Obj())
			}
		}
		gpus := fmt.Sprint(1 + rng.IntN(5))
		var pods []*corev1.Pod
		for k := range 5 + rng.IntN(30) {
			pods = append(pods, indexed(rng, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("m-%02d", k)).Label("app", "train").
				Priority("high", 1000).Req(testutil.Res{"cpu": "4", "nvidia.com/gpu": gpus}).Obj(), k))
		}
		run := func(incremental bool) ([]string, int) {
			s, err := NewScheduler(snap, Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := newCycles(t, s, incremental)
			var out []string
			for _, pod := range pods {
				res := c.schedule(pod)
				node := res.SelectedNode
				var victims []string
				if res.Verdict != VerdictScheduled {
					node = res.NominatedNode
					for _, v := range res.PreemptionVictims {
						victims = append(victims, v.Name)
					}
				}
				out = append(out, fmt.Sprintf("%s: %s %s %v %s", pod.Name, res.Verdict, node, victims, res.Message))
				if node == "" {
					continue
				}
				if len(res.PreemptionVictims) > 0 {
					c.evict(res.PreemptionVictims, node)
				}
				c.reserve(pod, node)
			}
			return out, c.seq.hits
		}
		full, _ := run(false)
		incr, hits := run(true)
		retried += hits
		if diff := cmp.Diff(full, incr); diff != "" {
			t.Errorf("seed %d: incremental differs from full cycles (-full +incremental):\n%s", seed, diff)
		}
	}
	if retried == 0 {
		t.Error("no member was answered without a full cycle")
	}
	t.Logf("%d members answered without a full cycle", retried)
}
