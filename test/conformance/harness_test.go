package conformance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	"github.com/kubectl-gang/kubectl-gang/test/conformance/scenario"
	"github.com/kubectl-gang/kubectl-gang/test/testbed"
)

// Timeouts of one scenario.
const (
	scenarioTimeout = 60 * time.Second
	decisionTimeout = 20 * time.Second
	// scoreLogTimeout bounds the wait for kube-scheduler's bind line after the
	// binding is visible through the API (it is logged right after the call).
	scoreLogTimeout = 3 * time.Second
	apiWorkers      = 16
)

// harness runs scenarios one after another on the shared test bed: it clears
// the previous scenario, creates the next one, lets kube-scheduler decide
// its pending pod, and runs our pipeline on a snapshot taken just before.
type harness struct {
	env  *testbed.Env
	cs   kubernetes.Interface
	log  *schedulerLog
	dump string // directory for the YAML of failing scenarios

	mu        sync.Mutex
	dirty     []string // namespaces that may still hold pods
	nodesLeft bool
	draLeft   bool // resource.k8s.io objects may be left
	stats     stats
}

// maxLogMisses is how many bound pods in a row may lack their bind line in
// kube-scheduler's log, before any was found, until the harness stops
// looking (and waiting scoreLogTimeout for each).
const maxLogMisses = 3

// stats sums up a run, for the agreement rate and the timings.
type stats struct {
	scenarios, agreed, bound, unschedulable int
	scoresCompared, scoresAgreed            int
	claimsCompared, claimsAgreed            int
	extCompared, extAgreed, extNone         int
	logHits, logMisses                      int
	logNote                                 string
	mismatches                              []string
	phases                                  map[string]time.Duration
}

func newHarness(env *testbed.Env) (*harness, error) {
	h := &harness{env: env, cs: env.Clientset(), stats: stats{phases: map[string]time.Duration{}}}
	if env.SchedulerLog != "" && scoreLogging {
		h.log = newSchedulerLog(env.SchedulerLog)
		if err := h.log.skipToEnd(); err != nil {
			return nil, err
		}
	}
	h.dump = os.Getenv("CONFORMANCE_DUMP_DIR")
	if h.dump == "" {
		h.dump = filepath.Join(env.LogDir, "conformance")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, pc := range scenario.PriorityClasses() {
		if _, err := h.cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create priority class %s: %w", pc.Name, err)
		}
	}
	for _, rc := range scenario.RuntimeClasses() {
		if _, err := h.cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create runtime class %s: %w", rc.Name, err)
		}
	}
	return h, nil
}

// kubeDecision is what kube-scheduler did with the pending pod.
type kubeDecision struct {
	Node    string // bound to; empty when unschedulable
	Reason  string // PodScheduled=False reason
	Message string // PodScheduled=False message
	Scores  *schedulerScores
}

func (d kubeDecision) String() string {
	if d.Node != "" {
		return "bound to " + d.Node
	}
	return fmt.Sprintf("%s: %q", d.Reason, d.Message)
}

// run is one scenario: the decisions of both schedulers and the snapshot
// ours decided on.
type run struct {
	sc       *scenario.Scenario
	snap     *schedule.Snapshot
	pending  *corev1.Pod // as the API server stored it (defaulted, admitted)
	kube     kubeDecision
	ours     *schedule.Result
	problems []string // empty when both agree
	// plugins name the filter or score plugins a disagreement points at,
	// when they can be told.
	plugins []string
	// templateClaims names, per pod claim made from a template, the claim
	// the harness made for the pending pod (playing the resourceclaim
	// controller).
	templateClaims map[string]string
	// ourErrors are the errors our plugins give for the pending pod, one
	// per node that errs, when our pipeline's verdict is Error:
	// kube-scheduler reports the first node's to err, which is any of them.
	ourErrors []string
	// kubeClaims are the pending pod's claims as kube-scheduler left them
	// once it bound the pod, by pod claim name; ourClaims are our Reserve's
	// on the same node; claimsCompared tells whether both were compared.
	kubeClaims, ourClaims map[string]*resourcev1.ResourceClaim
	claimsCompared        bool
	// kubeExtClaim is the claim kube-scheduler made for the pending pod's
	// extended resources backed by DRA once it bound the pod (nil: none,
	// as on a node whose device plugin advertises them); ourExtClaim is our
	// Reserve's (dynamicresources.ExtendedClaimName); extCompared tells
	// whether both were compared.
	kubeExtClaim, ourExtClaim *resourcev1.ResourceClaim
	extCompared               bool
}

// Run creates sc on the cluster, lets both schedulers decide and compares.
// An error means the harness or the cluster failed, not the comparison.
func (h *harness) Run(ctx context.Context, sc *scenario.Scenario) (*run, error) {
	ctx, cancel := context.WithTimeout(ctx, scenarioTimeout)
	defer cancel()
	r := &run{sc: sc}
	phase := h.phaseTimer()

	if err := h.reset(ctx); err != nil {
		return nil, fmt.Errorf("clear the previous scenario: %w", err)
	}
	phase("reset")
	if err := h.createCluster(ctx, sc); err != nil {
		return nil, err
	}
	phase("create")
	snap, err := h.snapshot(ctx, sc)
	if err != nil {
		return nil, err
	}
	r.snap = snap
	phase("snapshot")
	if r.pending, r.kube, err = h.decide(ctx, sc.Pending, false, func(p *corev1.Pod) (err error) {
		r.templateClaims, err = h.makeTemplateClaims(ctx, p)
		return err
	}); err != nil {
		return nil, err
	}
	if r.kube.Node != "" && len(r.pending.Spec.ResourceClaims) > 0 {
		if r.kubeClaims, err = h.boundClaims(ctx, r); err != nil {
			return nil, err
		}
	}
	if r.kube.Node != "" && sc.HasDRA() {
		if r.kubeExtClaim, err = h.extendedClaim(ctx, r); err != nil {
			return nil, err
		}
	}
	if r.kube.Node != "" && h.log != nil {
		key := r.pending.Namespace + "/" + r.pending.Name
		s, ok, err := h.log.waitBound(key, scoreLogTimeout)
		if err != nil {
			return nil, fmt.Errorf("kube-scheduler log: %w", err)
		}
		switch {
		case ok && s.Node == r.kube.Node:
			r.kube.Scores = s
			h.stats.logHits++
		case !ok:
			h.stats.logMisses++
			if h.stats.logHits == 0 && h.stats.logMisses >= maxLogMisses {
				h.log = nil
				h.stats.logNote = fmt.Sprintf("kube-scheduler's log (%s) had no bind line for %d pods: per-node scores not compared", h.env.SchedulerLog, maxLogMisses)
			}
		}
	}
	phase("kube-scheduler")
	sched, err := schedule.NewScheduler(snap, schedule.Options{})
	if err != nil {
		return nil, fmt.Errorf("our pipeline: new scheduler: %w", err)
	}
	r.ours, err = sched.Schedule(ctx, r.pending.DeepCopy())
	switch {
	case err == nil && r.ours.Verdict == schedule.VerdictError:
		// A plugin whose PreBind fails on the node chosen
		// (framework.PreBindChecker): the result carries the error.
		r.ourErrors = []string{r.ours.Message}
	case err == nil:
	case r.ours != nil && r.ours.Verdict == schedule.VerdictError:
		// A plugin's error is a decision too (DynamicResources' allocator
		// refuses some claims outright), which kube-scheduler reports as
		// SchedulerError.
		r.ours.Message = err.Error()
		r.ourErrors = pluginErrors(ctx, sched, r.pending, err)
	default:
		return nil, fmt.Errorf("our pipeline: schedule: %w", err)
	}
	phase("pipeline")
	r.compare()
	if r.kube.Node != "" && (r.kubeClaims != nil || r.kubeExtClaim != nil || sched.DRA().ExtendedRequests(r.pending) != nil) {
		r.compareClaims(sched)
	}
	h.record(r)
	return r, nil
}

func (h *harness) phaseTimer() func(string) {
	last := time.Now()
	return func(name string) {
		now := time.Now()
		h.mu.Lock()
		h.stats.phases[name] += now.Sub(last)
		h.mu.Unlock()
		last = now
	}
}

// reset deletes the previous scenario's pods and every node, so the cluster
// holds only the next scenario. Deletes are immediate (grace period 0, no
// finalizers), so the next consistent read no longer sees them. Namespaces
// stay: without a namespace controller their deletion never finishes.
func (h *harness) reset(ctx context.Context) error {
	zero := int64(0)
	now := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	err := parallel(len(h.dirty), apiWorkers, func(i int) error {
		return h.cs.CoreV1().Pods(h.dirty[i]).DeleteCollection(ctx, now, metav1.ListOptions{})
	})
	if err != nil {
		return err
	}
	if h.draLeft {
		if err := h.resetDRA(ctx); err != nil {
			return err
		}
		h.draLeft = false
	}
	h.dirty = nil
	if h.log != nil {
		// Forget the previous scenario's lines (barrier pods and all).
		if err := h.log.skipToEnd(); err != nil {
			return err
		}
	}
	if h.nodesLeft {
		if err := h.cs.CoreV1().Nodes().DeleteCollection(ctx, now, metav1.ListOptions{}); err != nil {
			return err
		}
		h.nodesLeft = false
	}
	return nil
}

// createCluster creates the namespaces, the nodes, the running pods and the
// finished ones (bound, then given their terminal phase). A
// barrier between nodes and pods makes sure kube-scheduler has seen every
// node before it sees the pending pod: see barrier.
func (h *harness) createCluster(ctx context.Context, sc *scenario.Scenario) error {
	for _, ns := range sc.Namespaces {
		if _, err := h.cs.CoreV1().Namespaces().Create(ctx, ns.DeepCopy(), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns.Name, err)
		}
		h.dirty = append(h.dirty, ns.Name)
	}
	// Services first: kube-scheduler's informers for them and for nodes are
	// not ordered, but the node creations and the barrier take long enough.
	for _, svc := range sc.Services {
		if _, err := h.cs.CoreV1().Services(svc.Namespace).Create(ctx, svc.DeepCopy(), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
	}
	h.nodesLeft = true
	// All nodes but the last in parallel, then the last one alone, so its
	// status update is the last node event kube-scheduler receives.
	head, last := sc.Nodes[:len(sc.Nodes)-1], sc.Nodes[len(sc.Nodes)-1]
	if err := parallel(len(head), apiWorkers, func(i int) error {
		if err := h.env.CreateNode(ctx, head[i].DeepCopy()); err != nil {
			return fmt.Errorf("create node %s: %w", head[i].Name, err)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := h.env.CreateNode(ctx, last.DeepCopy()); err != nil {
		return fmt.Errorf("create node %s: %w", last.Name, err)
	}
	early, err := h.barrier(ctx, sc.Namespace(), last, "barrier")
	if err != nil {
		return err
	}
	if early {
		refreshed, err := h.refreshImageNodes(ctx, sc)
		if err != nil {
			return fmt.Errorf("refresh nodes: %w", err)
		}
		if refreshed != nil {
			if _, err := h.barrier(ctx, sc.Namespace(), refreshed, "barrier-refresh"); err != nil {
				return err
			}
		}
	}
	pods := append(slices.Clone(sc.Running), sc.Finished...)
	createdPods := make([]*corev1.Pod, len(pods))
	if err := parallel(len(pods), apiWorkers, func(i int) error {
		p := pods[i]
		created, err := h.cs.CoreV1().Pods(p.Namespace).Create(ctx, p.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		createdPods[i] = created
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			created.Status.Phase = p.Status.Phase
			if _, err := h.cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("finish pod %s/%s: %w", p.Namespace, p.Name, err)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	// Nominated pods, gated, with their nomination written as status.
	for _, p := range sc.Nominated {
		created, err := h.cs.CoreV1().Pods(p.Namespace).Create(ctx, p.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create nominated pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		created.Status.NominatedNodeName = p.Status.NominatedNodeName
		if _, err := h.cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("nominate pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	if sc.HasDRA() {
		h.draLeft = true
		if err := h.createDRA(ctx, sc, createdPods); err != nil {
			return err
		}
	}
	return nil
}

// barrier waits until kube-scheduler's cache holds the node that was written
// last, with its status: it schedules a pod that fits only there (it tolerates
// every taint, cordons included, and requests nothing, but the node has no pod
// room before its status is written). Node events reach the scheduler in
// order, so every earlier node event (this scenario's nodes, the previous
// one's deletions) is in its cache too. The barrier pod is deleted before the
// running pods are created; pod events are ordered as well, so the scheduler
// sees its deletion before the pending pod.
func (h *harness) barrier(ctx context.Context, namespace string, node *corev1.Node, name string) (early bool, err error) {
	pod := barrierPod(namespace, node, name)
	// Should kube-scheduler try the pod before the node's status reached it,
	// the status update requeues the pod: wait for the binding only.
	_, d, err := h.decide(ctx, pod, true, nil)
	if err != nil {
		return false, fmt.Errorf("barrier on node %s: %w", node.Name, err)
	}
	zero := int64(0)
	return d.Message != "", h.cs.CoreV1().Pods(namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
}

// barrierPod is a pod that fits only on node, whatever its taints or
// cordon, and requests nothing.
func barrierPod(namespace string, node *corev1.Node, name string) *corev1.Pod {
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: namespace + "-" + name},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{corev1.LabelHostname: node.Labels[corev1.LabelHostname]},
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			TerminationGracePeriodSeconds: &zero,
			Containers:                    []corev1.Container{{Name: "barrier", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

// refreshImageNodes makes kube-scheduler copy every node that lists images
// into its snapshot again. It counts, per image, the nodes holding it when
// it copies a node, and re-copies only nodes that change: a scheduling
// attempt made while it had seen only some of the scenario's nodes (the
// barrier pod's first try) leaves those nodes with too small a count, and
// ImageLocality scores them differently from a fresh snapshot. An
// annotation is a change that no plugin reads.
func (h *harness) refreshImageNodes(ctx context.Context, sc *scenario.Scenario) (*corev1.Node, error) {
	var nodes []*corev1.Node
	for _, n := range sc.Nodes {
		if len(n.Status.Images) > 0 {
			nodes = append(nodes, n)
		}
	}
	patch := []byte(`{"metadata":{"annotations":{"conformance.kubectl-gang.io/refreshed":"true"}}}`)
	err := parallel(len(nodes), apiWorkers, func(i int) error {
		_, err := h.cs.CoreV1().Nodes().Patch(ctx, nodes[i].Name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
	if err != nil || len(nodes) == 0 {
		return nil, err
	}
	return nodes[len(nodes)-1], nil
}

// snapshot reads the live snapshot our pipeline decides on and checks that it
// holds exactly this scenario.
func (h *harness) snapshot(ctx context.Context, sc *scenario.Scenario) (*schedule.Snapshot, error) {
	snap, _, err := snapshot.Live(ctx, h.env.Config, snapshot.LiveOptions{})
	if err != nil {
		return nil, fmt.Errorf("live snapshot: %w", err)
	}
	// Earlier scenarios' namespaces are empty but still there; keep the
	// snapshot (and its dump) to this scenario's.
	own := map[string]bool{}
	for _, ns := range sc.Namespaces {
		own[ns.Name] = true
	}
	snap.Namespaces = slices.DeleteFunc(snap.Namespaces, func(ns *corev1.Namespace) bool { return !own[ns.Name] })

	var problems []string
	if got, want := names(snap.Nodes), names(sc.Nodes); !slices.Equal(got, want) {
		problems = append(problems, fmt.Sprintf("nodes %v, want %v", got, want))
	}
	if got, want := names(snap.Pods), names(append(slices.Clone(sc.Running), sc.Nominated...)); !slices.Equal(got, want) {
		problems = append(problems, fmt.Sprintf("pods %v, want %v", got, want))
	}
	problems = append(problems, draSnapshotProblems(snap, sc)...)
	if len(problems) > 0 {
		return nil, fmt.Errorf("snapshot does not hold exactly the scenario: %s", strings.Join(problems, "; "))
	}
	return snap, nil
}

type named interface {
	GetNamespace() string
	GetName() string
}

func names[T named](objs []T) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

// decide creates pod and waits until kube-scheduler binds it or (unless
// untilBound) marks it PodScheduled=False. afterCreate, when given, runs
// once the pod exists (and is being watched). It returns the pod as created
// and the decision.
func (h *harness) decide(ctx context.Context, pod *corev1.Pod, untilBound bool, afterCreate func(*corev1.Pod) error) (*corev1.Pod, kubeDecision, error) {
	pods := h.cs.CoreV1().Pods(pod.Namespace)
	created, err := pods.Create(ctx, pod.DeepCopy(), metav1.CreateOptions{})
	if err != nil {
		return nil, kubeDecision{}, fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, decisionTimeout)
	defer cancel()
	w, err := pods.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", pod.Name).String(),
		ResourceVersion: created.ResourceVersion,
	})
	if err != nil {
		return nil, kubeDecision{}, fmt.Errorf("watch pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	defer w.Stop()
	if afterCreate != nil {
		if err := afterCreate(created); err != nil {
			return nil, kubeDecision{}, err
		}
	}
	last := "no scheduling attempt seen"
	for {
		select {
		case <-ctx.Done():
			return nil, kubeDecision{}, fmt.Errorf("kube-scheduler did not decide on pod %s/%s within %v (%s)", pod.Namespace, pod.Name, decisionTimeout, last)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, kubeDecision{}, fmt.Errorf("watch of pod %s/%s closed", pod.Namespace, pod.Name)
			}
			if ev.Type == watch.Error {
				return nil, kubeDecision{}, fmt.Errorf("watch of pod %s/%s: %v", pod.Namespace, pod.Name, ev.Object)
			}
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if p.Spec.NodeName != "" {
				// Message keeps the last failed attempt before the binding
				// (untilBound only), for the barrier.
				msg := ""
				if last != "no scheduling attempt seen" {
					msg = last
				}
				return created, kubeDecision{Node: p.Spec.NodeName, Message: msg}, nil
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
					if !untilBound {
						return created, kubeDecision{Reason: c.Reason, Message: c.Message}, nil
					}
					last = fmt.Sprintf("last attempt: %s: %s", c.Reason, c.Message)
				}
			}
		}
	}
}

// compare fills problems: kube-scheduler's pick must be among our top-scored
// feasible nodes (it breaks ties at random, we by name), its failure message
// must be ours byte for byte, a scheduling error must be one our plugins give
// too, and when its score log is there, the feasible set and every node's
// final and per-plugin scores must be ours.
func (r *run) compare() {
	ours := r.ours
	byName := map[string]*schedule.NodeResult{}
	for i := range ours.Nodes {
		byName[ours.Nodes[i].Name] = &ours.Nodes[i]
	}
	fail := func(format string, args ...any) { r.problems = append(r.problems, fmt.Sprintf(format, args...)) }

	if r.kube.Reason == corev1.PodReasonSchedulerError || ours.Verdict == schedule.VerdictError {
		switch {
		case r.kube.Reason != corev1.PodReasonSchedulerError:
			fail("kube-scheduler: %s\nours: error %q", r.kube, ours.Message)
		case ours.Verdict != schedule.VerdictError:
			fail("kube-scheduler: %s\nours: %s %s %q", r.kube, ours.Verdict, ours.SelectedNode, ours.Message)
		case !slices.Contains(r.ourErrors, r.kubeMessage()):
			fail("error differs:\n  kube-scheduler: %s\n  ours:           %s", r.kube.Message, strings.Join(r.ourErrors, "\n                  "))
		default:
			return
		}
		r.blame(pluginOfError(r.kube.Message))
		r.blame(pluginOfError(ours.Message))
		return
	}

	if r.kube.Node == "" {
		switch {
		case ours.Verdict != schedule.VerdictUnschedulable:
			fail("kube-scheduler: %s\nours: %s on %s; feasible for us: %s", r.kube, ours.Verdict, ours.SelectedNode, listSome(feasible(ours), 10))
			r.blameMessage()
		case ours.Message != r.kubeMessage():
			fail("message differs:\n  kube-scheduler: %s\n  ours:           %s", r.kube.Message, ours.Message)
			r.blameMessage()
		}
		return
	}

	x := r.kube.Node
	if ours.Verdict != schedule.VerdictScheduled {
		fail("kube-scheduler bound to %s; ours: %s %q", x, ours.Verdict, ours.Message)
	}
	if n := byName[x]; n == nil || !n.Feasible {
		status := "not in our result"
		if n != nil {
			status = fmt.Sprintf("infeasible: %v", n.Status)
			r.blame(pluginOf(n.Status))
		}
		fail("kube-scheduler bound to %s, which we find %s", x, status)
	}
	if s := r.kube.Scores; s != nil {
		r.compareScores(byName, s)
	}
	if top := ours.TopNodes(); !slices.Contains(top, x) {
		n := byName[x]
		score := int64(-1)
		if n != nil {
			score = n.Score
		}
		fail("kube-scheduler bound to %s (our score %d), not among our top nodes %v (score %d)", x, score, top, topScore(ours))
	}
}

// kubeMessage is kube-scheduler's message with the names of the claims the
// harness made from templates replaced by the names our pipeline gives
// them: it decides before they exist, and their real names end in random
// characters.
func (r *run) kubeMessage() string {
	msg := r.kube.Message
	for podClaim, name := range r.templateClaims {
		ns := r.pending.Namespace + "/"
		msg = strings.ReplaceAll(msg, ns+name, ns+dynamicresources.ClaimNameFromTemplate(r.pending, podClaim))
	}
	return msg
}

func (r *run) compareScores(byName map[string]*schedule.NodeResult, s *schedulerScores) {
	fail := func(format string, args ...any) { r.problems = append(r.problems, fmt.Sprintf(format, args...)) }
	// Kube-scheduler scores only when two or more nodes are feasible; its
	// bind line says how many were.
	kubeFeasible := slices.Sorted(maps.Keys(s.Final))
	if len(kubeFeasible) == 0 {
		kubeFeasible = []string{s.Node}
	}
	ourFeasible := feasible(r.ours)
	if s.FeasibleNodes != 0 && s.FeasibleNodes != len(kubeFeasible) {
		// The log is incomplete; say so rather than compare half of it.
		fail("kube-scheduler log: %d feasible nodes but %d scored (log incomplete?)", s.FeasibleNodes, len(kubeFeasible))
		return
	}
	if !slices.Equal(kubeFeasible, ourFeasible) {
		onlyKube, onlyOurs := difference(kubeFeasible, ourFeasible), difference(ourFeasible, kubeFeasible)
		fail("feasible nodes differ: only kube-scheduler's %v, only ours %v", onlyKube, onlyOurs)
		for _, name := range onlyKube {
			if n := byName[name]; n != nil {
				fail("  %s: we say %v", name, n.Status)
				r.blame(pluginOf(n.Status))
			}
		}
	}
	if len(s.Final) == 0 {
		return
	}
	shown, hidden := 0, 0
	for _, name := range kubeFeasible {
		n := byName[name]
		if n == nil || !n.Feasible {
			continue
		}
		want := s.Final[name]
		var diffs []string
		ours := pluginScores(n)
		for _, plugin := range slices.Sorted(maps.Keys(union(s.Plugins[name], ours))) {
			k, o := s.Plugins[name][plugin], ours[plugin]
			if k != o {
				diffs = append(diffs, fmt.Sprintf("%s kube %d ours %d", plugin, k, o))
				r.blame(plugin)
			}
		}
		if want != n.Score || len(diffs) > 0 {
			if shown++; shown > maxNodeLines {
				hidden++
				continue
			}
			fail("node %s: final score kube %d ours %d; %s", name, want, n.Score, strings.Join(diffs, ", "))
		}
	}
	if hidden > 0 {
		fail("... and %d more nodes with other scores", hidden)
	}
}

// pluginScores is a node's score per plugin (summed, should a plugin appear
// twice).
func pluginScores(n *schedule.NodeResult) map[string]int64 {
	out := make(map[string]int64, len(n.Scores))
	for _, s := range n.Scores {
		out[s.Plugin] += s.Score
	}
	return out
}

// maxNodeLines bounds the per-node lines of one report.
const maxNodeLines = 10

func feasible(r *schedule.Result) []string {
	var out []string
	for _, n := range r.Nodes {
		if n.Feasible {
			out = append(out, n.Name)
		}
	}
	return out
}

// listSome prints at most n names, then how many more.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return fmt.Sprintf("%v", names)
	}
	return fmt.Sprintf("%v and %d more", names[:n], len(names)-n)
}

// blame records a plugin a disagreement points at.
func (r *run) blame(plugin string) {
	if plugin != "" && !slices.Contains(r.plugins, plugin) {
		r.plugins = append(r.plugins, plugin)
	}
}

// blameMessage blames the plugins whose reasons appear in one message and
// not the other, or with other counts, in filter order: a filter that wrongly
// passes or fails a node shifts it to a later filter's count, so the first
// one listed is the likelier culprit. The preemption part is blamed only when
// the filter part agrees, as it follows from the filter verdicts.
func (r *run) blameMessage() {
	kube, ours := reasonCounts(r.kube.Message), reasonCounts(r.ours.Message)
	var plugins []string
	for reason := range union(kube, ours) {
		if kube[reason] != ours[reason] && !strings.HasPrefix(reason, "preemption: ") {
			if p := pluginOfReason(reason); !slices.Contains(plugins, p) {
				plugins = append(plugins, p)
			}
		}
	}
	if len(plugins) == 0 {
		plugins = []string{"DefaultPreemption"}
	}
	slices.SortFunc(plugins, func(a, b string) int { return cmp.Compare(filterOrder(a), filterOrder(b)) })
	for _, p := range plugins {
		r.blame(p)
	}
}

// filterOrder is a plugin's place in the default profile (unknown last).
func filterOrder(plugin string) int {
	if i := slices.Index(defaultPluginOrder, plugin); i >= 0 {
		return i
	}
	return len(defaultPluginOrder)
}

var defaultPluginOrder = func() []string {
	p, err := schedule.DefaultProfile()
	if err != nil {
		return nil
	}
	var out []string
	for _, pl := range p.Plugins.MultiPoint.Enabled {
		out = append(out, pl.Name)
	}
	return out
}()

func pluginOf(s *framework.Status) string { return s.Plugin() }

// pluginOfError is the plugin a scheduling error names ("running
// \"DynamicResources\" filter plugin: ..."; "running PreBind plugin
// \"DynamicResources\": ...").
func pluginOfError(msg string) string {
	_, rest, ok := strings.Cut(msg, "\"")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "\"")
	return name
}

// pluginErrors returns the distinct errors our plugins give for pod, the
// one the cycle gave first, then each node's (PreFilter's once).
func pluginErrors(ctx context.Context, sched *schedule.Scheduler, pod *corev1.Pod, cycle error) []string {
	out := []string{cycle.Error()}
	for _, n := range sched.NodeInfos() {
		if _, err := sched.FilterOn(ctx, pod.DeepCopy(), n.Name()); err != nil && !slices.Contains(out, err.Error()) {
			out = append(out, err.Error())
		}
	}
	return out
}

// reasonCounts parses "0/N nodes are available: 3 reason a, 2 reason b.
// preemption: ..." into reason -> count (the preemption part as one entry,
// another PostFilter plugin's message before it as another).
func reasonCounts(msg string) map[string]int64 {
	out := map[string]int64{}
	if msg == "" {
		return out
	}
	main, post, hasPost := strings.Cut(msg, " preemption: ")
	if hasPost {
		out["preemption: "+post]++
	}
	_, list, ok := strings.Cut(main, "nodes are available: ")
	if !ok {
		out[main]++
		return out
	}
	// Other PostFilter plugins' messages come after the filters' list, and
	// before preemption's ("deallocation of ResourceClaim completed,").
	list, other, hasOther := strings.Cut(list, ". ")
	if hasOther {
		out["postfilter: "+strings.TrimSuffix(other, ",")]++
	}
	list = strings.TrimSuffix(list, ".")
	for _, item := range strings.Split(list, ", ") {
		var n int64
		var reason string
		if _, err := fmt.Sscanf(item, "%d", &n); err == nil {
			_, reason, _ = strings.Cut(item, " ")
		} else {
			reason = item
		}
		out[reason] += n
	}
	return out
}

// pluginOfReason maps kube-scheduler's reason strings to their plugin.
func pluginOfReason(reason string) string {
	switch {
	case strings.HasPrefix(reason, "preemption: "):
		return "DefaultPreemption"
	case strings.HasPrefix(reason, "Insufficient "), reason == "Too many pods":
		return "NodeResourcesFit"
	case strings.Contains(reason, "untolerated taint"):
		return "TaintToleration"
	case strings.Contains(reason, "were unschedulable"):
		return "NodeUnschedulable"
	case strings.Contains(reason, "node affinity/selector"):
		return "NodeAffinity"
	case strings.Contains(reason, "free ports"):
		return "NodePorts"
	case strings.Contains(reason, "topology spread"):
		return "PodTopologySpread"
	case strings.Contains(reason, "affinity rules"), strings.Contains(reason, "anti-affinity"):
		return "InterPodAffinity"
	case strings.Contains(reason, "claim"), strings.Contains(reason, "ResourceClaim"), strings.Contains(reason, "device class"),
		reason == dynamicresources.ReasonCannotFitResource:
		return "DynamicResources"
	case strings.HasPrefix(reason, "postfilter: "):
		return "(a PostFilter plugin)"
	}
	return "(unknown reason " + fmt.Sprintf("%q", reason) + ")"
}

func topScore(r *schedule.Result) int64 {
	for _, n := range r.Nodes {
		if n.Feasible && slices.Contains(r.TopNodes(), n.Name) {
			return n.Score
		}
	}
	return -1
}

func difference(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func union[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// record adds a run to the statistics.
func (h *harness) record(r *run) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &h.stats
	s.scenarios++
	if r.kube.Node != "" {
		s.bound++
	} else {
		s.unschedulable++
	}
	if r.kube.Scores != nil && len(r.kube.Scores.Final) > 0 {
		s.scoresCompared++
		if !slices.ContainsFunc(r.problems, func(p string) bool { return strings.Contains(p, "score") }) {
			s.scoresAgreed++
		}
	}
	if r.claimsCompared {
		s.claimsCompared++
		if !slices.ContainsFunc(r.problems, func(p string) bool { return strings.HasPrefix(p, claimProblem) }) {
			s.claimsAgreed++
		}
	}
	if r.extCompared {
		s.extCompared++
		if r.kubeExtClaim == nil {
			s.extNone++
		}
		if !slices.ContainsFunc(r.problems, func(p string) bool { return strings.HasPrefix(p, extClaimProblem) }) {
			s.extAgreed++
		}
	}
	if len(r.problems) == 0 {
		s.agreed++
		return
	}
	s.mismatches = append(s.mismatches, fmt.Sprintf("%s (%s)", r.sc.Name, strings.Join(r.plugins, ", ")))
}

// Summary is the one-line agreement report.
func (h *harness) Summary() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stats
	if s.scenarios == 0 {
		return "no scenarios ran"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d scenarios agree with kube-scheduler (%.1f%%): %d bound, %d unschedulable",
		s.agreed, s.scenarios, 100*float64(s.agreed)/float64(s.scenarios), s.bound, s.unschedulable)
	if s.scoresCompared > 0 {
		fmt.Fprintf(&b, "; per-node scores compared in %d, equal in %d", s.scoresCompared, s.scoresAgreed)
	}
	if s.claimsCompared > 0 {
		fmt.Fprintf(&b, "; device allocations compared in %d, equal in %d", s.claimsCompared, s.claimsAgreed)
	}
	if s.extCompared > 0 {
		fmt.Fprintf(&b, "; extended-resource claims compared in %d (kube-scheduler made none in %d), equal in %d", s.extCompared, s.extNone, s.extAgreed)
	}
	if s.logMisses > 0 {
		fmt.Fprintf(&b, "; %d bound pods without a bind line in the scheduler log", s.logMisses)
	}
	if s.logNote != "" {
		fmt.Fprintf(&b, " (%s)", s.logNote)
	}
	var total time.Duration
	for _, d := range s.phases {
		total += d
	}
	fmt.Fprintf(&b, "; %v in all, per scenario", total.Round(time.Millisecond))
	for _, p := range slices.SortedFunc(maps.Keys(s.phases), func(a, b string) int { return cmp.Compare(a, b) }) {
		fmt.Fprintf(&b, " %s %v", p, (s.phases[p] / time.Duration(s.scenarios)).Round(100*time.Microsecond))
	}
	if len(s.mismatches) > 0 {
		fmt.Fprintf(&b, "; mismatches: %s", strings.Join(s.mismatches, ", "))
	}
	return b.String()
}

// dumpRun writes the scenario as a snapshot file our CLI reads back
// (kubectl gang explain pod/NS/NAME --snapshot FILE), with the pending pod as
// created and both decisions in a header. It returns the file's path.
func (h *harness) dumpRun(r *run) (string, error) {
	if err := os.MkdirAll(h.dump, 0o755); err != nil {
		return "", err
	}
	list, err := snapshot.ToList(r.snap)
	if err != nil {
		return "", err
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r.pending)
	if err != nil {
		return "", err
	}
	u := unstructured.Unstructured{Object: obj}
	u.SetManagedFields(nil)
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	list.Items = append(list.Items, u)
	data, err := yaml.Marshal(list.UnstructuredContent())
	if err != nil {
		return "", err
	}
	var header strings.Builder
	fmt.Fprintf(&header, "# conformance scenario %s (seed %d): %s\n", r.sc.Name, r.sc.Seed, r.sc.Summary())
	fmt.Fprintf(&header, "# pending pod: %s/%s\n", r.pending.Namespace, r.pending.Name)
	fmt.Fprintf(&header, "# kube-scheduler: %s\n", r.kube)
	if r.ours != nil {
		fmt.Fprintf(&header, "# ours: %s %s %q top %v\n", r.ours.Verdict, r.ours.SelectedNode, r.ours.Message, r.ours.TopNodes())
	}
	for _, p := range r.problems {
		for _, line := range strings.Split(p, "\n") {
			fmt.Fprintf(&header, "# %s\n", line)
		}
	}
	path := filepath.Join(h.dump, r.sc.Name+".yaml")
	return path, os.WriteFile(path, append([]byte(header.String()), data...), 0o644)
}

// replayDump decides the pending pod again from the file dumpRun wrote, to
// tell whether the file reproduces our side of the disagreement offline.
func replayDump(ctx context.Context, path string, r *run) string {
	snap, _, err := snapshot.LoadFiles(path, nil)
	if err != nil {
		return "the file does not load: " + err.Error()
	}
	var pending *corev1.Pod
	snap.Pods = slices.DeleteFunc(snap.Pods, func(p *corev1.Pod) bool {
		if p.Namespace == r.pending.Namespace && p.Name == r.pending.Name {
			pending = p
			return true
		}
		return false
	})
	if pending == nil {
		return "the file lacks the pending pod"
	}
	sched, err := schedule.NewScheduler(snap, schedule.Options{})
	if err != nil {
		return "our pipeline fails on the file: " + err.Error()
	}
	res, err := sched.Schedule(ctx, pending)
	if err != nil {
		if r.ours.Verdict == schedule.VerdictError && err.Error() == r.ours.Message {
			return "the file reproduces our decision (an error) offline"
		}
		return "our pipeline fails on the file: " + err.Error()
	}
	if res.Verdict != r.ours.Verdict || res.Message != r.ours.Message || !slices.Equal(res.TopNodes(), r.ours.TopNodes()) {
		return fmt.Sprintf("the file does NOT reproduce our decision offline: %s %q top %v", res.Verdict, res.Message, res.TopNodes())
	}
	return "the file reproduces our decision offline"
}

// parallel runs f(0..n-1) on at most workers goroutines and joins the errors.
func parallel(n, workers int, f func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, workers)
	)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
