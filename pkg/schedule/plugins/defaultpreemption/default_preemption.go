// Package defaultpreemption is kube-scheduler's DefaultPreemption PostFilter
// plugin as a what-if: when no node fits a pod, it works out which
// lower-priority pods kube-scheduler v1.37 would evict and on which node, and
// writes the "preemption: ..." part of the FailedScheduling message byte for
// byte. It never evicts anything.
package defaultpreemption

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Name is the plugin's name in profiles.
const Name = "DefaultPreemption"

// The messages kube-scheduler's preemption writes, worded as it words them.
const (
	// ReasonPreemptNever is why a pod with preemptionPolicy Never preempts nothing.
	ReasonPreemptNever = "not eligible due to preemptionPolicy=Never."
	// ReasonTerminatingOnNominatedNode is why a pod whose earlier victims are
	// still terminating on its nominated node preempts nothing more.
	ReasonTerminatingOnNominatedNode = "not eligible due to a terminating pod on the nominated node."
	// ReasonNoVictims is a node's verdict when it has no pod of lower priority.
	ReasonNoVictims = "No preemption victims found for incoming pod"
	// ReasonNotHelpful is the verdict for every node preemption was not tried
	// on: nodes rejected as UnschedulableAndUnresolvable.
	ReasonNotHelpful = "Preemption is not helpful for scheduling"
	// MessagePrefix starts the message PostFilter contributes.
	MessagePrefix = "preemption: "
	// noNodeAvailableFormat starts the diagnosis, as kube-scheduler's FitError does.
	noNodeAvailableFormat = "0/%v nodes are available:"
)

// Candidate is a node where evicting Victims would let the pod fit.
type Candidate struct {
	NodeName string
	// Victims are the pods kube-scheduler would evict, most important
	// (highest priority, then longest running) first.
	Victims []*corev1.Pod
	// NumPDBViolations counts the victims whose eviction would go beyond
	// what a PodDisruptionBudget allows.
	NumPDBViolations int
	// EquallyGood are, on the candidate picked, the other candidates that
	// rank as high: kube-scheduler picks among them at random.
	EquallyGood []string
	// rank is how pickOneCandidate compares it, computed once per node
	// outcome (shared with the memo), else (nil) when picking.
	rank *rank
}

// DefaultPreemption is the DefaultPreemption PostFilter plugin.
type DefaultPreemption struct {
	handle framework.Handle
	runner framework.PluginsRunner
	args   Args
	// now stands in for the start time of pods that have not started, as
	// kube-scheduler's time.Now() does.
	now func() time.Time
	// sorted remembers whether the handle's node list (its first element
	// and length: a scheduler's list holds the same nodes in the same
	// places for its life) is in name order, so that a gang's members do
	// not compare every node's name again per cycle.
	sorted struct {
		sync.Mutex
		first *framework.NodeInfo
		n     int
		ok    bool
	}
}

// listSorted reports whether the handle's node list is in name order.
func (pl *DefaultPreemption) listSorted(all []*framework.NodeInfo, byName func(a, b *framework.NodeInfo) int) bool {
	pl.sorted.Lock()
	defer pl.sorted.Unlock()
	if pl.sorted.first != all[0] || pl.sorted.n != len(all) {
		pl.sorted.first, pl.sorted.n, pl.sorted.ok = all[0], len(all), slices.IsSortedFunc(all, byName)
	}
	return pl.sorted.ok
}

var _ framework.PostFilterPlugin = &DefaultPreemption{}

// New builds the plugin from *configv1.DefaultPreemptionArgs (nil means
// kube-scheduler's defaults). The handle must also be a
// framework.PluginsRunner: the what-if removes victims from a copy of a node
// and runs the profile's Filter plugins again.
func New(args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	a, err := ParseArgs(args)
	if err != nil {
		return nil, err
	}
	runner, ok := h.(framework.PluginsRunner)
	if !ok {
		return nil, fmt.Errorf("%s: handle %T does not implement framework.PluginsRunner", Name, h)
	}
	return &DefaultPreemption{handle: h, runner: runner, args: a, now: time.Now}, nil
}

// Name returns the plugin's name.
func (pl *DefaultPreemption) Name() string { return Name }

// PostFilter reports what preemption would do for a pod no node fits: on
// success the node it would nominate and "preemption: found a potential
// placement ...", otherwise Unschedulable (or Error) with the
// "preemption: 0/N nodes are available: ..." message kube-scheduler appends
// to FailedScheduling.
//
// With a Memo in the state, a dry run that weighed every node keeps its
// pick there (pick), and the next pod of the class is answered from it,
// trying again only the nodes that changed: the same answer as Evaluate.
func (pl *DefaultPreemption) PostFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, filteredNodeStatus framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	best, status, ok := pl.pickAgain(ctx, state, pod, filteredNodeStatus)
	if !ok {
		best, _, status = pl.Evaluate(ctx, state, pod, filteredNodeStatus)
		if memo := memoOf(state); memo != nil && best != nil {
			pl.keepPick(memo, filteredNodeStatus, pl.now())
		}
	}
	if msg := status.Message(); msg != "" {
		status = framework.NewStatus(status.Code(), MessagePrefix+msg)
	}
	if best == nil {
		return nil, status
	}
	return &framework.PostFilterResult{NominatedNodeName: best.NodeName, Victims: best.Victims, NumPDBViolations: best.NumPDBViolations,
		EquallyGood: best.EquallyGood}, status
}

// Evaluate runs kube-scheduler's preemption evaluation without acting on it.
// It returns the node kube-scheduler would pick with its victims, every
// candidate the dry run found (those violating no PodDisruptionBudget first,
// each group in node-name order), and the status kube-scheduler's Preempt
// returns, without the "preemption: " prefix PostFilter adds.
//
// Where kube-scheduler is random this is deterministic: the dry run starts
// at the first node by name instead of a random offset, and ties between
// equally good candidates go to the first node by name.
func (pl *DefaultPreemption) Evaluate(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeStatuses framework.NodeToStatus) (*Candidate, []*Candidate, *framework.Status) {
	if nodeStatuses == nil {
		nodeStatuses = absentNodes{}
	}
	if ok, msg := pl.eligibleToPreemptOthers(pod, nodeStatuses); !ok {
		return nil, nil, framework.NewStatus(framework.Unschedulable, msg)
	}

	allNodes := pl.handle.NodeInfos().List()
	if len(allNodes) == 0 {
		return nil, nil, framework.AsStatus(errors.New("no nodes available"))
	}
	// Only nodes a Filter plugin rejected as Unschedulable can be helped by
	// removing pods; UnschedulableAndUnresolvable ones (and nodes without a
	// status) cannot.
	var potential []*framework.NodeInfo
	var places []int // each potential node's place in allNodes
	indexed, _ := nodeStatuses.(IndexedNodeToStatus)
	if indexed != nil && indexed.Len() != len(allNodes) {
		indexed = nil
	}
	for i, ni := range allNodes {
		var st *framework.Status
		if indexed != nil {
			st = indexed.StatusAt(i)
		} else {
			st = nodeStatuses.Get(ni.Name())
		}
		if st.Code() == framework.Unschedulable {
			potential = append(potential, ni)
			places = append(places, i)
		}
	}

	now := pl.now()
	var candidates []*Candidate
	var nodeVerdicts *verdictTally
	if len(potential) > 0 {
		// The handle lists nodes by name already (a scheduler's always
		// does); only another order needs sorting. The potential nodes are
		// in the list's order.
		byName := func(a, b *framework.NodeInfo) int { return strings.Compare(a.Name(), b.Name()) }
		if !pl.listSorted(allNodes, byName) && !slices.IsSortedFunc(potential, byName) {
			order := make([]int, len(potential))
			for k := range order {
				order[k] = k
			}
			slices.SortFunc(order, func(a, b int) int { return byName(potential[a], potential[b]) })
			sorted, sortedPlaces := make([]*framework.NodeInfo, len(order)), make([]int, len(order))
			for k, o := range order {
				sorted[k], sortedPlaces[k] = potential[o], places[o]
			}
			potential, places = sorted, sortedPlaces
		}
		run := &dryRun{
			pl:            pl,
			state:         state,
			preemptor:     pod,
			priority:      corev1helpers.PodPriority(pod),
			pdbs:          newPDBChecker(pl.handle.PodDisruptionBudgets()),
			now:           now,
			numCandidates: int(pl.args.numCandidates(int32(len(potential)))),
		}
		var err error
		candidates, nodeVerdicts, err = run.run(ctx, potential, places)
		if err != nil && len(candidates) == 0 {
			return nil, nil, framework.AsStatus(err)
		}
	}
	if len(candidates) == 0 {
		return nil, nil, framework.NewStatus(framework.Unschedulable, diagnosisMessage(len(allNodes), nodeVerdicts))
	}
	best, ties := pickOneCandidate(candidates, now)
	for _, c := range ties {
		best.EquallyGood = append(best.EquallyGood, c.NodeName)
	}
	return best, candidates, framework.NewStatus(framework.Success,
		fmt.Sprintf("found a potential placement for pod on node %v, preempting %d victims", best.NodeName, len(best.Victims)))
}

// IndexedNodeToStatus is a NodeToStatus that also finds a node's status by
// its place in the handle's node list, which spares a lookup by name per
// node on large clusters.
type IndexedNodeToStatus interface {
	framework.NodeToStatus
	// Len is how many nodes it has statuses for: the handle's, in its
	// order, when it equals the handle's count.
	Len() int
	// StatusAt returns the status of the i-th node of the handle's list.
	StatusAt(i int) *framework.Status
}

// TrackedNodeToStatus is an IndexedNodeToStatus that says how it differs
// from the statuses it was made from: a failed class's retry hands
// PostFilter the statuses of the class's last cycle with the nodes that
// changed since filtered again, and only those nodes' NodeInfos and
// statuses differ. pickAgain then looks at those nodes alone, where it
// compared every node (on 65,000 nodes, for each of 5,000 members).
type TrackedNodeToStatus interface {
	IndexedNodeToStatus
	// Versions returns the number naming these statuses, the number of
	// the statuses they were made from (0: none), and the positions of
	// the nodes whose NodeInfo or status may differ from those.
	Versions() (version, from uint64, changed []int)
}

// eligibleToPreemptOthers is kube-scheduler's PodEligibleToPreemptOthers: a
// pod with preemptionPolicy Never preempts nothing, nor does a pod whose
// nominated node still has a lower-priority pod terminating because of an
// earlier preemption (unless that node has become UnschedulableAndUnresolvable).
func (pl *DefaultPreemption) eligibleToPreemptOthers(pod *corev1.Pod, nodeStatuses framework.NodeToStatus) (bool, string) {
	if p := pod.Spec.PreemptionPolicy; p != nil && *p == corev1.PreemptNever {
		return false, ReasonPreemptNever
	}
	nominated := pod.Status.NominatedNodeName
	if nominated == "" {
		return true, ""
	}
	if nodeStatuses.Get(nominated).Code() == framework.UnschedulableAndUnresolvable {
		return true, ""
	}
	ni, err := pl.handle.NodeInfos().Get(nominated)
	if err != nil {
		return true, ""
	}
	priority := corev1helpers.PodPriority(pod)
	for _, pi := range ni.Pods {
		if p, _ := pl.victimPriority(pi.Pod); p < priority && terminatingByPreemption(pi.Pod) {
			return false, ReasonTerminatingOnNominatedNode
		}
	}
	return true, ""
}

// terminatingByPreemption reports a pod being deleted because kube-scheduler
// preempted it.
func terminatingByPreemption(p *corev1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// verdictTally keeps the verdicts of the nodes preemption was tried on
// without success. They are counted by reason only for the message of a
// preemption that finds no candidate (diagnosisMessage), so a preemption
// that finds one pays no more than an append per node.
type verdictTally struct {
	statuses []*framework.Status
}

func (t *verdictTally) add(s *framework.Status) { t.statuses = append(t.statuses, s) }

// diagnosisMessage is kube-scheduler's FitError message for the nodes
// preemption was tried on: each reason with the number of nodes that gave it,
// nodes without a verdict counted as "Preemption is not helpful for
// scheduling", sorted as strings (so "10 ..." sorts before "2 ...").
func diagnosisMessage(numAllNodes int, verdicts *verdictTally) string {
	if verdicts == nil {
		verdicts = &verdictTally{}
	}
	counts := map[string]int{}
	for _, s := range verdicts.statuses {
		for _, r := range s.Reasons() {
			counts[r]++
		}
	}
	if n := len(verdicts.statuses); n < numAllNodes {
		counts[ReasonNotHelpful] += numAllNodes - n
	}
	msg := fmt.Sprintf(noNodeAvailableFormat, numAllNodes)
	if len(counts) == 0 {
		return msg
	}
	histogram := make([]string, 0, len(counts))
	for reason, n := range counts {
		histogram = append(histogram, fmt.Sprintf("%v %v", n, reason))
	}
	slices.Sort(histogram)
	return msg + " " + strings.Join(histogram, ", ") + "."
}

// absentNodes is the verdict map kube-scheduler starts from: every node
// UnschedulableAndUnresolvable.
type absentNodes struct{}

func (absentNodes) Get(string) *framework.Status {
	return framework.NewStatus(framework.UnschedulableAndUnresolvable)
}
