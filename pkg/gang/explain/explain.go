// Package explain says why a pod or a gang is Pending and what would make
// it fit: the node table of one scheduling cycle (the blocked member's, in
// the state the best placement left), the gang's figures, and suggestions,
// each change proven by placing the gang on a changed copy of the snapshot
// (docs/design.md#commands). Gang and Pod are its entry points; suggest*.go
// hold one kind of suggestion each.
package explain

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodedeclaredfeatures"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

// Verdict is what explain concludes about a pod or a gang.
type Verdict string

// The explain verdicts.
const (
	// VerdictSchedulable: the pod has a feasible node, or the gang can be
	// placed all or nothing.
	VerdictSchedulable Verdict = "Schedulable"
	// VerdictUnschedulable: no node fits the pod, or fewer than the gang's
	// minimum fit at once.
	VerdictUnschedulable Verdict = "Unschedulable"
	// VerdictGated: the pod (or a pending member) has scheduling gates, so
	// kube-scheduler does not try it; the rest of the explanation says what
	// would happen once they are removed.
	VerdictGated Verdict = "Gated"
	// VerdictUnverified: everything evaluated says schedulable, but
	// something the pod or gang needs was not evaluated (NotEvaluated says
	// what): never a plain yes (docs/design.md#pipeline).
	VerdictUnverified Verdict = "Unverified"
)

// unverified turns a Schedulable verdict into Unverified when something was
// not evaluated.
func (e *Explanation) unverified() {
	if e.Verdict == VerdictSchedulable && len(e.NotEvaluated) > 0 {
		e.Verdict = VerdictUnverified
		e.Message += fmt.Sprintf("; not verified: %d thing(s) not evaluated", len(e.NotEvaluated))
	}
}

// Options tune Explain.
type Options struct {
	gang.PlaceOptions
	// NoSuggestions leaves out the what-ifs: each costs one or more
	// placements on a changed copy of the snapshot.
	NoSuggestions bool
	// Member is the member the user asked about (explain pod/NAME of a
	// gang's pod): the explanation says first how it does by itself.
	Member *corev1.Pod
}

// MemberAlone is how the member asked about does by itself, before its
// gang: a pending member that fits alone waits for its gang.
type MemberAlone struct {
	Pod *corev1.Pod
	// Fits says a node would take the pod alone; Node and Score are the
	// best one. Message is the cycle's summary otherwise.
	Fits    bool
	Node    string
	Score   int64
	Message string
	// Bound is set when the pod runs already.
	Bound bool
}

// Explanation is the diagnosis of a pod or a gang on one snapshot: a
// verdict, kube-scheduler's summary line, one scheduling cycle's view of
// every node, and for a gang its validity, how much of it fits, per-domain
// figures and what would make it fit.
type Explanation struct {
	Verdict Verdict
	// Queue is where the subject stands in the queue simulation
	// (Position), when it is pending in the snapshot; set by the caller,
	// which knows every scheduler's options.
	Queue *QueuePlace
	// Message is the summary line. When the subject does not fit it is the
	// FailedScheduling message kube-scheduler writes for Pod, byte for byte
	// ("0/N nodes are available: ..."); a gang confined to a topology domain
	// adds the nodes outside it as "node(s) were outside the gang's topology
	// domain".
	Message string
	// Gang is nil when a pod that belongs to no gang is explained.
	Gang *gang.Gang
	// Pod is the pod the node table is about: the pod explained, the gang's
	// first member that does not fit, or (a gang that fits) its largest
	// pending member.
	Pod *corev1.Pod
	// Blocked says Pod is the gang's first member that does not fit; the
	// table's cycle ran after the members before it in queue order were
	// placed (PlacedBefore).
	Blocked      bool
	PlacedBefore []gang.Assignment
	// TopologyKey and Domain are the domain the table's cycle was confined to.
	TopologyKey string
	Domain      string
	// Nodes has one entry per node, in name order.
	Nodes []Node
	// FilterPlugins are the Filter plugins that ran, in the profile's
	// order: the columns of -o wide.
	FilterPlugins []string
	// NotEvaluated lists what the pipeline did not evaluate (the pod's
	// dynamic resource claims, volumes waiting for a consumer, gang fields
	// this build cannot honour), one sentence each.
	NotEvaluated []string
	// Gates are the scheduling gates that hold pending members back.
	Gates []string
	// GatedMembers counts the pending members with scheduling gates.
	GatedMembers int

	// Validity, Placement, Blocking and Domains are set for gangs only.
	Validity  *gang.Validity
	Placement *gang.Placement
	// Blocking is why Pod fits no node, per first failing plugin.
	Blocking []PluginCount
	Domains  []DomainHold
	// Member is how the member asked about does alone (explain pod/NAME of
	// a gang's pod); nil otherwise.
	Member *MemberAlone
	// Quota is why the namespace's ResourceQuota would refuse members that
	// do not exist yet (a what-if); empty when it takes them.
	Quota string
	// Warnings are problems of the explanation itself, for stderr.
	Warnings []string
	// Suggestions say what would make the subject fit, each computed on the
	// snapshot and, where it is a change, proven by placing on a changed
	// copy of it.
	Suggestions []Suggestion
}

// Node is one node as the table's cycle saw it.
type Node struct {
	Name string
	// Domain is the node's value of the topology key, if any.
	Domain   string
	Feasible bool
	Score    int64
	// Fits is how many more pods shaped like the explained pod the node
	// holds at once, in the cycle's state: 0 unless the node is feasible
	// (or, outside the domain, would be). FitsAtMost says it is an upper
	// bound from free resources that was not checked cycle by cycle.
	Fits       int
	FitsAtMost bool
	// Placed counts the gang's members running on the node or put there by
	// the plan (the best attempt when the gang does not fit).
	Placed int
	// Plugin is the first Filter plugin that rejects the node, Reasons its
	// reasons as kube-scheduler words them; both empty when feasible.
	Plugin  string
	Reasons []string
	// OutsideDomain says the node is outside the domain the cycle was
	// confined to; Plugin, Reasons, Fits and Filters then say how the node
	// would do without the confinement.
	OutsideDomain bool
	// Taint is the first taint the pod does not tolerate, spelled out where
	// kube-scheduler's reason hides it.
	Taint *corev1.Taint
	// Insufficient are the resources the node lacks for the pod.
	Insufficient []noderesources.InsufficientResource
	// MissingFeatures are the node features the pod needs that the node
	// does not declare.
	MissingFeatures []string
	// Devices says, when DynamicResources rejects the node, how each
	// device request of the pod's claims does there.
	Devices []dynamicresources.RequestFit
	// Filters holds every Filter plugin's verdict (-o wide).
	Filters []schedule.PluginVerdict
}

// PluginCount is how many nodes one plugin rejects first, with the reasons.
type PluginCount struct {
	// Plugin is empty for nodes outside the topology domain and for nodes
	// a PreFilter result left out.
	Plugin  string
	Nodes   int
	Reasons []string
}

// DomainHold is how many members one topology domain holds at once.
type DomainHold struct {
	Value string
	Nodes int
	// Holds counts running members and the pending members that fit there.
	Holds    int32
	Complete bool
	Skipped  string
	// Usable counts the nodes the members may use; Resource is the gang's
	// binding resource, Free and Allocatable its amounts on those nodes
	// before the placement.
	Usable            int
	Resource          corev1.ResourceName
	Free, Allocatable int64
}

// Pod explains one pod that belongs to no gang. A pod already bound
// is schedulable; a gated pod is Gated, and the rest of the explanation says
// what happens once its gates are removed.
func Pod(ctx context.Context, snap *schedule.Snapshot, pod *corev1.Pod, opts Options) (*Explanation, error) {
	e := &Explanation{Pod: pod}
	if pod.Spec.NodeName != "" {
		e.Verdict = VerdictSchedulable
		e.Message = fmt.Sprintf("pod %s/%s is bound to node %s", pod.Namespace, pod.Name, pod.Spec.NodeName)
		return e, nil
	}
	if why, group, unread := gang.HeldForGroup(snap, pod); unread {
		// Not "create it": it may exist (issue #42).
		e.Verdict = VerdictUnverified
		e.Message = fmt.Sprintf("pod %s/%s: %s", pod.Namespace, pod.Name, why)
		e.NotEvaluated = []string{why}
		return e, nil
	} else if why != "" {
		e.Verdict = VerdictUnschedulable
		e.Message = why
		e.Suggestions = []Suggestion{{Kind: SuggestCreatePodGroup, Message: fmt.Sprintf(
			"create podgroups.%s/%s in namespace %s, or name an existing PodGroup in the pod: its scheduler then takes it up with its gang",
			group.Group, group.Name, group.Namespace)}}
		e.whyFirst()
		return e, nil
	}
	x, err := newExplainer(snap, opts)
	if err != nil {
		return nil, err
	}
	res, err := x.table(ctx, e, gang.Ungated(pod), nil, "", "")
	if err != nil {
		return nil, err
	}
	switch {
	case len(pod.Spec.SchedulingGates) > 0:
		e.Verdict = VerdictGated
		e.GatedMembers = 1
		e.Gates = gang.GateNames([]*corev1.Pod{pod})
		gated, err := x.base.Schedule(ctx, pod)
		if err != nil {
			return nil, err
		}
		e.Message = gated.Message
	case res.Verdict == schedule.VerdictScheduled:
		e.Verdict = VerdictSchedulable
		e.Message = fmt.Sprintf("pod %s/%s fits %d of %d node(s); the best is %s (score %d)",
			pod.Namespace, pod.Name, countFeasible(res), res.NumAllNodes, res.SelectedNode, res.SelectedScore)
	default:
		e.Verdict = VerdictUnschedulable
		e.Message = res.Message
	}
	lone := gang.LonePod(pod)
	// A pod that does not exist yet (a what-if) must get past the
	// namespace's ResourceQuota first; one that could not be read is not
	// evaluated.
	q := gang.Quota(snap, lone)
	if q.Outcome == gang.QuotaUnknown {
		e.NotEvaluated = append(e.NotEvaluated, q.Message)
	}
	e.unverified()
	if q.Outcome == gang.QuotaExceeded {
		e.Quota = q.Message
		if e.Verdict == VerdictSchedulable || e.Verdict == VerdictUnverified {
			e.Verdict = VerdictUnschedulable
			e.Message = fmt.Sprintf("the namespace's ResourceQuota would refuse the pod, so it would never exist: %s", q.Message)
			return e, nil
		}
	}
	if e.Verdict != VerdictSchedulable && e.Verdict != VerdictUnverified && !opts.NoSuggestions {
		// A lone pod knows no topology: the gang flags do not apply.
		x.opts.TopologyKey, x.opts.PreferredTopologyKey = "", ""
		p, err := gang.PlaceOn(ctx, x.snap, x.plain, lone, x.opts.PlaceOptions)
		if err != nil {
			return nil, err
		}
		if e.Suggestions, err = x.suggest(ctx, lone, p, e); err != nil {
			return nil, err
		}
		if q.Outcome == gang.QuotaExceeded {
			e.Suggestions = besideQuota(e.Suggestions, q, pod.Namespace)
		}
	}
	e.whyFirst()
	return e, nil
}

// Gang explains a gang: it is placed all or nothing as Place does;
// when it does not fit, the table shows the cycle of its first member that
// did not fit, in the state the best attempt left (the members before it
// placed, confined to the best domain), so it explains the summary line.
func Gang(ctx context.Context, snap *schedule.Snapshot, g *gang.Gang, opts Options) (*Explanation, error) {
	x, err := newExplainer(snap, opts)
	if err != nil {
		return nil, err
	}
	p, err := x.placeBehindGate(ctx, g)
	if err != nil {
		return nil, err
	}
	v := gang.Validate(g)
	e := &Explanation{Gang: g, Placement: p, Validity: &v, TopologyKey: p.TopologyKey}
	if m := opts.Member; m != nil {
		e.Member = &MemberAlone{Pod: m, Bound: m.Spec.NodeName != ""}
		if m.Spec.NodeName != "" {
			e.Member.Fits, e.Member.Node = true, m.Spec.NodeName
		} else {
			res, err := x.plain.Schedule(ctx, gang.Ungated(m))
			if err != nil {
				return nil, err
			}
			e.Member.Fits, e.Member.Node, e.Member.Score, e.Member.Message = res.Verdict == schedule.VerdictScheduled, res.SelectedNode, res.SelectedScore, res.Message
		}
	}
	for _, u := range g.NotEvaluatedFields {
		e.NotEvaluated = append(e.NotEvaluated, u.String())
	}
	pending := g.Pending()
	e.GatedMembers = g.HeldCount()
	e.Gates = gang.GateNames(pending)
	e.Domains = domainHolds(p)

	if len(pending) > 0 {
		subject, before, domain := largest(pending), []gang.Assignment(nil), ""
		if p.Verdict != gang.VerdictPlaced && p.Blocker != nil {
			subject, e.Blocked = p.Blocker.Pod, true
			before = p.BlockerAfter
			if p.TopologyKey != "" {
				domain = p.Domain
			}
		}
		// Nodes carry their value of the preferred key too, when it was not met.
		res, err := x.table(ctx, e, gang.Ungated(subject), before, cmp.Or(p.TopologyKey, p.PreferredTopologyKey), domain)
		if err != nil {
			return nil, err
		}
		e.PlacedBefore = before
		if e.Blocked {
			e.Blocking = blocking(res)
			if res.Message != p.Blocker.Message {
				// The table's cycle repeats the blocker's; they differ only
				// if placement is not deterministic, which would be a bug.
				e.Warnings = append(e.Warnings, fmt.Sprintf("internal inconsistency (please report it): the node table's cycle for %s/%s says %q, placement said %q",
					subject.Namespace, subject.Name, res.Message, p.Blocker.Message))
			}
		}
	}
	markPlaced(e, p)

	for _, n := range p.NotEvaluated {
		if !slices.Contains(e.NotEvaluated, n) {
			e.NotEvaluated = append(e.NotEvaluated, n)
		}
	}
	// Members that do not exist yet (a what-if) must get past the
	// namespace's ResourceQuota first: pods it refuses are never created,
	// and quotas that could not be read leave the verdict unverified, as
	// place and admit leave theirs (docs/design.md#one-verdict-per-question).
	q := gang.Quota(snap, g)
	if q.Outcome == gang.QuotaUnknown {
		e.NotEvaluated = append(e.NotEvaluated, q.Message)
	}
	e.Verdict, e.Message = gangVerdict(p, v, e.GatedMembers, e.Gates)
	e.unverified()
	if q.Outcome == gang.QuotaExceeded {
		e.Quota = q.Message
		if e.Verdict == VerdictSchedulable || e.Verdict == VerdictUnverified {
			e.Verdict = VerdictUnschedulable
			e.Message = gang.QuotaRefusal(q)
			e.Suggestions = []Suggestion{{Kind: SuggestQuota, Message: fmt.Sprintf("raise the quota or free what it counts; then the gang fits: %s", p.Message)}}
			e.whyFirst()
			return e, nil
		}
	}
	if e.Verdict != VerdictSchedulable && e.Verdict != VerdictUnverified && !opts.NoSuggestions {
		if e.Suggestions, err = x.suggest(ctx, g, p, e); err != nil {
			return nil, err
		}
	}
	if q.Outcome == gang.QuotaExceeded && e.Verdict == VerdictUnschedulable && !opts.NoSuggestions {
		// Neither fits: the refusal beside the capacity fixes (suggest_quota.go).
		e.Suggestions = besideQuota(e.Suggestions, q, g.Namespace)
	}
	e.whyFirst()
	return e, nil
}

// placeBehindGate places g on the snapshot all or nothing, held back if
// its source's own gate would (gang.PlaceOn), as its gang scheduler does.
func (x *explainer) placeBehindGate(ctx context.Context, g *gang.Gang) (*gang.Placement, error) {
	return gang.PlaceOn(ctx, x.snap, x.plain, g, x.opts.PlaceOptions)
}

// gangVerdict is a placed gang's verdict and summary line: gated members
// hold it back whatever fits; otherwise what blocks it (the source's gate,
// the first member that does not fit, its validity).
func gangVerdict(p *gang.Placement, v gang.Validity, gatedMembers int, gates []string) (Verdict, string) {
	switch {
	case gatedMembers > 0:
		return VerdictGated, fmt.Sprintf("%d pending member(s) %s%v", gatedMembers, "waiting for scheduling gates: ", gates)
	case p.Verdict == gang.VerdictPlaced:
		return VerdictSchedulable, p.Message
	case p.Gate != nil:
		return VerdictUnschedulable, p.Message
	case p.Blocker != nil && p.Why != "":
		return VerdictUnschedulable, strings.TrimSuffix(p.Blocker.Message, ".") + "; " + p.Why
	case p.Blocker != nil:
		return VerdictUnschedulable, p.Blocker.Message
	case !v.Valid:
		return VerdictUnschedulable, v.Message
	}
	return VerdictUnschedulable, p.Message
}

// explainer holds what the explanation's cycles share.
type explainer struct {
	snap *schedule.Snapshot
	opts Options
	// plain is the snapshot's scheduler, which placements fork; base runs
	// every Filter plugin on every node, for -o wide.
	plain, base *schedule.Scheduler
	// cycles is what is left of the budget for counting, cycle by cycle,
	// how many more pods fit on a node when free resources cannot tell.
	cycles int
	// dsPods are the snapshot's DaemonSet pods by node, indexed on first use.
	dsPods map[string][]*corev1.Pod
	// nodesByName indexes the snapshot's nodes, on first use.
	nodesByName map[string]*corev1.Node
}

// fitCycleBudget bounds the cycles spent counting pods whose fit depends on
// other pods (affinity, spread, volumes); beyond it counts are upper bounds.
const fitCycleBudget = 64

func newExplainer(snap *schedule.Snapshot, opts Options) (*explainer, error) {
	x, err := newJudge(snap, opts)
	if err != nil {
		return nil, err
	}
	if x.base, err = x.plain.WithAllFilters(); err != nil {
		return nil, err
	}
	// The placements on plain (the subject's own, and the lower minimum's
	// of the same members) share their attempts.
	x.opts.Attempts = gang.NewAttempts(x.plain)
	return x, nil
}

// newJudge is an explainer that only places and schedules (x.plain): no
// node table, so no scheduler that runs every Filter plugin (x.base).
func newJudge(snap *schedule.Snapshot, opts Options) (*explainer, error) {
	if opts.Profile == nil {
		p, err := schedule.DefaultProfile()
		if err != nil {
			return nil, err
		}
		opts.Profile = p
	}
	plain, err := schedule.NewScheduler(snap, schedule.Options{Profile: opts.Profile, Parallelism: opts.Parallelism})
	if err != nil {
		return nil, err
	}
	return &explainer{snap: snap, opts: opts, plain: plain, cycles: fitCycleBudget}, nil
}

// table runs pod's cycle after reserving before, confined to domain (a
// value of key) when one is given, and fills e's node table from it. Nodes
// outside the domain are described by a second, unconfined cycle in the
// same state, so the table says whether they would fit at all.
func (x *explainer) table(ctx context.Context, e *Explanation, pod *corev1.Pod, before []gang.Assignment, key, domain string) (*schedule.Result, error) {
	state, err := x.base.Fork()
	if err != nil {
		return nil, err
	}
	for _, a := range before {
		if err := state.Reserve(a.Pod, a.Node); err != nil {
			return nil, err
		}
	}
	infos := state.NodeInfos()
	var inDomain map[string]bool
	run := state
	if key != "" && domain != "" {
		inDomain = map[string]bool{}
		var names []string
		for _, ni := range infos {
			if ni.Node().Labels[key] == domain {
				inDomain[ni.Name()] = true
				names = append(names, ni.Name())
			}
		}
		if run, err = state.Fork(); err != nil {
			return nil, err
		}
		run.Confine(names)
		e.Domain = domain
	}
	res, err := run.Schedule(ctx, pod)
	if err != nil {
		return nil, fmt.Errorf("scheduling %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	free := res
	if inDomain != nil {
		if free, err = state.Schedule(ctx, pod); err != nil {
			return nil, fmt.Errorf("scheduling %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	e.Pod = pod
	e.NotEvaluated = append(e.NotEvaluated, res.NotEvaluated...)
	podInfo := framework.NewPodInfo(pod)
	fit := noderesources.NewFitCheck(podInfo, state.DRA())
	seen := map[string]bool{}
	e.Nodes = make([]Node, len(res.Nodes))
	for i, n := range res.Nodes {
		ni := infos[i]
		if ni.Name() != n.Name {
			return nil, fmt.Errorf("internal error: node %d is %s in the result and %s in the snapshot", i, n.Name, ni.Name())
		}
		ne := &e.Nodes[i]
		ne.Name, ne.Feasible, ne.Score = n.Name, n.Feasible, n.Score
		if key != "" {
			ne.Domain = ni.Node().Labels[key]
		}
		v := n
		if inDomain != nil && !inDomain[n.Name] {
			ne.OutsideDomain = true
			v = free.Nodes[i]
		}
		if v.Feasible {
			ne.Fits, ne.FitsAtMost = x.fitsMore(ctx, state, pod, podInfo, ni)
		} else {
			ne.Plugin, ne.Reasons = v.Status.Plugin(), v.Status.Reasons()
		}
		ne.Filters = v.Filters
		for _, f := range v.Filters {
			if !seen[f.Plugin] {
				seen[f.Plugin] = true
				e.FilterPlugins = append(e.FilterPlugins, f.Plugin)
			}
		}
		if t, ok := tainttoleration.UntoleratedTaint(pod, ni.Node()); ok {
			ne.Taint = t
		}
		ne.Insufficient = fit.Fits(ni)
		if ne.Plugin == nodedeclaredfeatures.Name {
			ne.MissingFeatures, _ = nodedeclaredfeatures.UnsatisfiedRequirements(pod, ni.Node())
		}
		if ne.Plugin == dynamicresources.Name {
			ne.Devices = run.DeviceFit(ctx, pod, ni.Name())
		}
	}
	return res, nil
}

// fitsMore counts how many more pods like pod fit on a feasible node at
// once: the free resources divided by the pod's requests, one at most when
// it asks for host ports. When the pod's fit depends on other pods
// (affinity, spread, volumes, claims) the count is checked by reserving
// copies on a fork confined to the node, within the cycle budget; past it
// the count is an upper bound.
func (x *explainer) fitsMore(ctx context.Context, state *schedule.Scheduler, pod *corev1.Pod, podInfo *framework.PodInfo, ni *framework.NodeInfo) (int, bool) {
	n := roomFor(pod, &podInfo.Res, ni, state.DRA())
	if n == 0 || nodeLocal(pod, state.DRA()) {
		return n, false
	}
	if x.cycles < n {
		return n, true
	}
	fork, err := state.Fork()
	if err != nil {
		return n, true
	}
	fork.Confine([]string{ni.Name()})
	for k := range n {
		x.cycles--
		c := pod.DeepCopy()
		c.Name = fmt.Sprintf("%s-copy-%d", pod.Name, k)
		c.UID = ""
		res, err := fork.Schedule(ctx, c)
		if err != nil || res.Verdict != schedule.VerdictScheduled {
			return k, err != nil
		}
		if err := fork.Reserve(c, ni.Name()); err != nil {
			return k, true
		}
	}
	return n, false
}

// roomFor is how many pods with these requests the node's free resources
// hold, counting its pod slots too. Extended resources dra backs with
// devices where the node has no allocatable of them are not counted here
// (the devices are: deviceRoom, or fitsMore's trial).
func roomFor(pod *corev1.Pod, req *framework.PodResource, ni *framework.NodeInfo, dra *framework.DRA) int {
	n := int64(ni.Allocatable.AllowedPodNumber - len(ni.Pods))
	fit := func(requested, used, allocatable int64) {
		if requested > 0 {
			n = min(n, (allocatable-used)/requested)
		}
	}
	r := req.Resource
	fit(r.MilliCPU, ni.Requested.MilliCPU, ni.Allocatable.MilliCPU)
	fit(r.Memory, ni.Requested.Memory, ni.Allocatable.Memory)
	fit(r.EphemeralStorage, ni.Requested.EphemeralStorage, ni.Allocatable.EphemeralStorage)
	for name, q := range r.ScalarResources {
		if ni.Allocatable.Get(name) == 0 && dra.ExtendedResourceClass(name) != nil {
			continue
		}
		fit(q, ni.Requested.Get(name), ni.Allocatable.Get(name))
	}
	if len(framework.HostPorts(pod)) > 0 {
		n = min(n, 1)
	}
	return int(max(n, 0))
}

// nodeLocal reports whether a pod's fit on a node depends on nothing but
// that node's free resources, ports and labels: no pod (anti-)affinity, no
// topology spread, no volumes that bind or conflict, no devices (resource
// claims, extended resources a DeviceClass backs).
func nodeLocal(pod *corev1.Pod, dra *framework.DRA) bool {
	spec := &pod.Spec
	if a := spec.Affinity; a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil) {
		return false
	}
	if len(spec.TopologySpreadConstraints) > 0 || dra.UsesDevices(pod) {
		return false
	}
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil || v.GCEPersistentDisk != nil ||
			v.AWSElasticBlockStore != nil || v.ISCSI != nil || v.RBD != nil {
			return false
		}
	}
	return true
}

// largest is the pending member with the largest requests (scalar
// resources, then cpu, then memory), the first in queue order among equals:
// the one most likely to find no room.
func largest(pods []*corev1.Pod) *corev1.Pod {
	var best *corev1.Pod
	var bestKey [3]int64
	for _, pod := range pods {
		r := framework.ComputePodResource(pod).Resource
		var scalars int64
		for _, q := range r.ScalarResources {
			scalars += q
		}
		key := [3]int64{scalars, r.MilliCPU, r.Memory}
		if best == nil || slices.Compare(key[:], bestKey[:]) > 0 {
			best, bestKey = pod, key
		}
	}
	return best
}

// markPlaced counts, per node, the members that run there or that the plan
// puts there, and those the table's cycle ran after that the plan leaves
// out (the blocker's own sub-group when sub-groups are placed whole).
func markPlaced(e *Explanation, p *gang.Placement) {
	if len(e.Nodes) == 0 {
		return
	}
	counts := map[string]int{}
	for _, pod := range p.Running {
		counts[pod.Spec.NodeName]++
	}
	planned := map[*corev1.Pod]bool{}
	for _, a := range p.Planned() {
		counts[a.Node]++
		planned[a.Pod] = true
	}
	for _, a := range e.PlacedBefore {
		if !planned[a.Pod] {
			counts[a.Node]++
		}
	}
	for i := range e.Nodes {
		e.Nodes[i].Placed = counts[e.Nodes[i].Name]
	}
}

// blocking groups the nodes of a failed cycle by the plugin that rejected
// each first: the most nodes first, then by plugin name.
func blocking(res *schedule.Result) []PluginCount {
	byPlugin := map[string]*PluginCount{}
	for _, n := range res.Nodes {
		if n.Feasible {
			continue
		}
		name := n.Status.Plugin()
		c, ok := byPlugin[name]
		if !ok {
			c = &PluginCount{Plugin: name}
			byPlugin[name] = c
		}
		c.Nodes++
		for _, r := range n.Status.Reasons() {
			if !slices.Contains(c.Reasons, r) {
				c.Reasons = append(c.Reasons, r)
			}
		}
	}
	out := make([]PluginCount, 0, len(byPlugin))
	for _, c := range byPlugin {
		slices.Sort(c.Reasons)
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b PluginCount) int {
		return cmp.Or(cmp.Compare(b.Nodes, a.Nodes), cmp.Compare(a.Plugin, b.Plugin))
	})
	return out
}

// domainHolds turns the domains placement tried into how many members each
// holds at once: the members running there and the pending ones that fit.
func domainHolds(p *gang.Placement) []DomainHold {
	var out []DomainHold
	for _, d := range p.Domains {
		out = append(out, DomainHold{Value: d.Value, Nodes: d.Nodes, Holds: int32(d.Running + d.Placed), Complete: d.Complete, Skipped: d.Skipped,
			Usable: d.Usable, Resource: d.Resource, Free: d.Free, Allocatable: d.Allocatable})
	}
	return out
}

func countFeasible(res *schedule.Result) int {
	n := 0
	for _, node := range res.Nodes {
		if node.Feasible {
			n++
		}
	}
	return n
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
