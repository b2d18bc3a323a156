package explain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/kueue"
)

// Pending is one line of `explain` without a subject: a gang with pending
// members, or a pending pod that belongs to none (or whose PodGroup does
// not exist).
type Pending struct {
	Namespace string
	// Gang is nil for a pod alone; Pod is then the pod.
	Gang *gang.Gang
	Pod  *corev1.Pod
	// Group names the PodGroup a pod alone asks for that the snapshot does
	// not hold (every gang scheduler holds such a pod back).
	Group string
	// PendingMembers and Members count the gang's members (1 and 1 for a pod).
	PendingMembers, Members int
	Verdict                 Verdict
	// Reason is what blocks it, one line: the summary line of explain.
	Reason string
	// Position is its place in the queue (1 first), counted over every
	// namespace; Outcome what the queue simulation found for it.
	Position int
	Outcome  Outcome
	// Scheduler is the pods' schedulerName, Queue the gang's queue (Volcano,
	// Kueue), Priority and Since its queue key (gang.QueueKey).
	Scheduler string
	Queue     string
	Priority  int32
	Since     time.Time
	// Nodes are the nodes a starting entry's pending pods go to, in order
	// (one per pod).
	Nodes []string
	// Behind names the entries ahead that start and take the room it would
	// use (OutcomeWaits).
	Behind []string
	// Raced says a waiting entry is behind only by an order its scheduler
	// may not keep (docs/design.md#the-queue): it may start in the place
	// of an entry ahead of it.
	Raced bool
	// hold, for a Coscheduling gang that does not start, are the nodes of
	// the members that fit: Coscheduling holds them at Permit while it
	// tries the gang, until PostFilter rejects them (markUnsettled).
	hold map[string]bool
	// unsettled, for a start, says why the real scheduler may not make it
	// where it is planned: an entry ahead holds or may take its nodes
	// first, or one of another order may go first; brief says it in a few
	// words. held says that is a hold only, which lasts while the gang
	// holding it is tried (markUnsettled).
	unsettled, brief string
	held             bool
	// qualified says PodGroups of two kinds share the gang's name.
	qualified bool
	// tiedQueues, for a Volcano gang, are the queues whose next job
	// Volcano's allocate could have taken as well when it took this one
	// (equal priority and share: volcanoNext).
	tiedQueues []string
	// room are the nodes a waiting or blocked entry would use: on the
	// cluster as it is (Waits), or with every other pod gone (Blocked).
	room map[string]bool
	// short are the resources its blocking cycle on the state the entries
	// ahead left found insufficient; shortOther says it found another
	// reason too (ports, affinity, ...).
	short      []corev1.ResourceName
	shortOther bool
	// waiting says the entry is a workload a queueing layer holds whose
	// pods do not exist yet (gang.Waiting): the layer decides it first,
	// and its pods enter the scheduler's queue once it is admitted, by
	// their priority, after every pod of theirs there now; queuedAt is
	// when it entered the layer's queue.
	waiting  bool
	queuedAt time.Time
	// Admission is, for a waiting workload, its queueing layer's decision
	// on the state the entries ahead left.
	Admission *gang.Admission
	// admittedBy names, for a waiting workload its layer admits, the
	// layer and its queue: "Kueue (ClusterQueue)".
	admittedBy string
	// undecided says no queueing layer decided its queued workload.
	undecided bool
	// tie orders entries of one priority and time: namespace/name, and for
	// a Coscheduling gang its first pending member's (Coscheduling.Less
	// compares pods).
	tie string
}

// Outcome is what the queue simulation finds for an entry.
type Outcome string

// The queue outcomes (docs/design.md#the-queue).
const (
	// OutcomeStarts: it is placed on the state the entries ahead left.
	OutcomeStarts Outcome = "Starts"
	// OutcomeUnverified: it is placed, but something it needs was not
	// evaluated: never a plain yes.
	OutcomeUnverified Outcome = "Unverified"
	// OutcomeWaits: it fits the cluster as it is, but not after the
	// entries ahead of it take their room.
	OutcomeWaits Outcome = "Waits"
	// OutcomeBlocked: it does not fit the cluster as it is, even first.
	OutcomeBlocked Outcome = "Blocked"
	// OutcomeNeverFits: it does not fit even with every pod gone but
	// DaemonSet and static pods.
	OutcomeNeverFits Outcome = "NeverFits"
	// OutcomeHeld: something outside the pipeline holds it (scheduling
	// gates, a missing PodGroup or members, its source's gate, no scheduler
	// by its schedulerName); it takes no room.
	OutcomeHeld Outcome = "Held"
)

// pendingPods are the entry's pending pods (a pod alone: the pod) and its
// gang's source (none for a pod alone), as QueueOptions.PlaceFor takes
// them.
func (p *Pending) pendingPods() (gang.Source, []*corev1.Pod) {
	if p.Gang == nil {
		return "", []*corev1.Pod{p.Pod}
	}
	return p.Gang.Source, p.Gang.Pending()
}

// Name is the subject as explain takes it: pod/NAME, or podgroup/NAME
// (podgroups.<group>/NAME when PodGroups of two kinds share the name); a
// Kueue pod group by its first pending member.
func (p *Pending) Name() string {
	switch {
	case p.Gang == nil:
		return "pod/" + p.Pod.Name
	case p.Gang.Subject != "":
		return p.Gang.Subject
	case p.Gang.Source == kueue.Source:
		// No object names a Kueue pod group: explain takes it by a member.
		for _, pod := range p.Gang.Members {
			if gang.StateOf(pod) == gang.MemberPending {
				return "pod/" + pod.Name
			}
		}
		return "pod/" + p.Gang.Members[0].Name
	case p.qualified:
		return "podgroups." + string(p.Gang.Source) + "/" + p.Gang.Name
	}
	return "podgroup/" + p.Gang.Name
}

// QueueOptions are how ListPending places what it finds.
type QueueOptions struct {
	Parallelism int
	// PlaceFor gives the placement options for the pending pods of an
	// entry of source (the empty Source for a pod of no gang): the profile of
	// their schedulerName, Volcano's node order for a Volcano gang. held,
	// when not empty, says no scheduler would take them: the entry is held
	// outside the pipeline and takes no room. The same profile must come
	// back as the same pointer: the simulation keeps one working copy per
	// profile.
	PlaceFor func(source gang.Source, pods []*corev1.Pod) (opts gang.PlaceOptions, held string)
	// Selector, when set, keeps the lines with a pending pod it matches
	// (the simulation still takes every entry).
	Selector func(pod *corev1.Pod) bool
}

// ListPending simulates the queue (docs/design.md#the-queue): it finds
// every gang with a pending member and every pending pod of no gang, in
// every namespace, orders them as their schedulers' queues take them
// (QueueKey: priority, then the time they entered the queue, then
// namespace/name) and places each, all or nothing, on the state the ones
// before it left: a gang that starts holds its nodes for those behind it.
// Each line then says whether it starts now (and where), waits behind
// named entries that take the room it would use, is blocked by itself
// (it does not fit the cluster as it is, the explain reason), never fits
// even on the cluster without its pods, or is held outside the pipeline
// (scheduling gates, a missing PodGroup or members, its source's gate, no
// scheduler by its schedulerName). Lines of namespace (every one when
// empty) are returned in queue order, positions counted over every
// namespace. No suggestions are made: that is what explaining one of them
// is for.
func ListPending(ctx context.Context, snap *schedule.Snapshot, namespace string, q QueueOptions) ([]Pending, error) {
	out, err := queueEntries(snap)
	if err != nil {
		return nil, err
	}
	if _, err := simulate(ctx, snap, q, out, nil); err != nil {
		return nil, err
	}
	kept := out[:0]
	for _, l := range out {
		if (namespace == "" || l.Namespace == namespace) && (q.Selector == nil || l.matches(q.Selector)) {
			kept = append(kept, l)
		}
	}
	return kept, nil
}

// simulate takes entries, in queue order, each on the state the ones
// before it left, then takes back the starts the real scheduler may not
// make in that order (markUnsettled) and those a preemption may undo. The
// Volcano gangs among them are taken in the order Volcano's allocate takes
// them (volcanoNext): the entries are reordered, and numbered again. With
// until, it stops after the entry until reports true for, and returns its
// index; when that entry starts or waits, the rest are taken too: whether
// its start is certain, or its wait, depends on who comes behind it (an
// entry of another scheduler or of equal priority that waits for the room
// of a start: race; one that may take its room while a Coscheduling gang
// holds it: markUnsettled).
func simulate(ctx context.Context, snap *schedule.Snapshot, q QueueOptions, entries []Pending, until func(*Pending) bool) (int, error) {
	sim := newQueueSim(snap, q)
	n, at, found := len(entries), len(entries)-1, false
	for i := range entries {
		if volcanoGang(&entries[i]) && entries[i].Outcome != OutcomeHeld {
			if err := sim.volcanoNext(entries, i); err != nil {
				return 0, err
			}
		}
		entries[i].Position = i + 1
		if err := sim.take(ctx, entries[:i], &entries[i]); err != nil {
			return 0, err
		}
		if until != nil && !found && until(&entries[i]) {
			at, found = i, true
			if o := entries[i].Outcome; o == OutcomeHeld || o == OutcomeBlocked || o == OutcomeNeverFits {
				n = i + 1
				break
			}
		}
	}
	if err := sim.markUnsettled(ctx, entries[:n]); err != nil {
		return 0, err
	}
	markPreemption(snap, entries[:n])
	return at, nil
}

// QueuePlace is where a subject stands in the queue (Position).
type QueuePlace struct {
	// Entry is the subject's own line; Of counts every entry of the queue.
	Entry Pending
	Of    int
	// Ahead are the entries before it that start.
	Ahead []Pending
}

// Position simulates the queue (ListPending) up to the first entry match
// reports true for, or on to the end when that entry starts or waits
// (simulate), and says where it stands, its line as the list's; nil when
// no pending entry matches.
func Position(ctx context.Context, snap *schedule.Snapshot, q QueueOptions, match func(*Pending) bool) (*QueuePlace, error) {
	out, err := queueEntries(snap)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(out, func(l Pending) bool { return match(&l) }) {
		return nil, nil
	}
	// Volcano's allocate may take a Volcano gang of the list before an
	// earlier one (volcanoNext): the simulation runs until the subject is
	// taken, wherever that is.
	at, err := simulate(ctx, snap, q, out, match)
	if err != nil {
		return nil, err
	}
	place := &QueuePlace{Entry: out[at], Of: len(out)}
	for _, l := range out[:at] {
		if l.Outcome == OutcomeStarts || l.Outcome == OutcomeUnverified {
			place.Ahead = append(place.Ahead, l)
		}
	}
	return place, nil
}

// queueEntries finds every gang with a pending member and every pending
// pod of no gang, with their queue keys, in queue order (positions set).
func queueEntries(snap *schedule.Snapshot) ([]Pending, error) {
	type groupKey struct {
		group           string
		namespace, name string
	}
	gangs := map[groupKey]*gang.Gang{}
	missing := map[groupKey]bool{}
	var out []Pending
	for _, pod := range snap.Pods {
		if gang.StateOf(pod) != gang.MemberPending {
			continue
		}
		var g *gang.Gang
		group := ""
		for _, ref := range gang.GroupsOf(pod) {
			name := ref.Name
			key := groupKey{ref.Group, pod.Namespace, name}
			if found, ok := gangs[key]; ok {
				g = found
				break
			}
			if missing[key] {
				group = cmp.Or(group, name)
				continue
			}
			found, err := gang.ResolvePodGroup(snap, ref)
			var nf *gang.NotFoundError
			if errors.As(err, &nf) {
				missing[key] = true
				group = cmp.Or(group, name)
				continue
			}
			if err != nil {
				return nil, err
			}
			gangs[key] = found
			out = append(out, Pending{Namespace: pod.Namespace, Gang: found})
			g = found
			break
		}
		if name := gang.GroupNameOf(pod, kueue.Source); g == nil && group == "" && name != "" {
			key := groupKey{string(kueue.Source), pod.Namespace, name}
			if g = gangs[key]; g == nil {
				found, err := kueue.ResolveGroup(snap, pod.Namespace, name)
				if err != nil {
					// Kueue's webhook refuses such a pod; say why.
					out = append(out, Pending{Namespace: pod.Namespace, Pod: pod, PendingMembers: 1, Members: 1,
						Verdict: VerdictUnschedulable, Outcome: OutcomeHeld, Reason: err.Error()})
					continue
				}
				gangs[key], g = found, found
				out = append(out, Pending{Namespace: pod.Namespace, Gang: found})
			}
		}
		if g != nil {
			continue
		}
		if held := gang.HeldPod(snap, pod); held != nil && group == "" {
			// A pod a queueing layer holds as a workload of its own.
			out = append(out, Pending{Namespace: pod.Namespace, Gang: held})
			continue
		}
		out = append(out, Pending{Namespace: pod.Namespace, Pod: pod, Group: group, PendingMembers: 1, Members: 1})
	}
	for _, g := range gang.Waiting(snap) {
		q := g.Queued[0]
		out = append(out, Pending{Namespace: g.Namespace, Gang: g, waiting: true, queuedAt: q.Created, Queue: q.Queue})
	}
	named := map[[2]string]int{}
	for _, l := range out {
		if l.Gang != nil {
			named[[2]string{l.Namespace, l.Gang.Name}]++
		}
	}
	for i := range out {
		l := &out[i]
		l.qualified = l.Gang != nil && named[[2]string{l.Namespace, l.Gang.Name}] > 1
		pods := []*corev1.Pod{l.Pod}
		if l.Gang != nil {
			pods = l.Gang.Pending()
			l.PendingMembers, l.Members = len(pods), len(l.Gang.Members)
			// A waiting workload's pods, created once its layer admits it,
			// enter the scheduler's queue by their priority after every
			// pod of theirs there now (Since is a new pod's); among
			// themselves by the time each was queued, then UID.
			l.Priority, l.Since = gang.QueueKey(snap, l.Gang)
			if !l.waiting {
				l.Queue = l.Gang.Queue
			}
		} else {
			l.Priority, l.Since = gang.PodQueueKey(l.Pod)
		}
		if len(pods) > 0 {
			l.Scheduler = cmp.Or(pods[0].Spec.SchedulerName, corev1.DefaultSchedulerName)
		}
		switch {
		case l.waiting:
			l.tie = string(l.Gang.Queued[0].Object.GetUID())
		case l.Gang == nil:
			l.tie = l.Pod.Namespace + "/" + l.Pod.Name
		case l.Gang.Source == coscheduling.Source && len(pods) > 0:
			l.tie = pods[0].Namespace + "/" + pods[0].Name
		default:
			l.tie = l.Gang.Namespace + "/" + l.Gang.Name
		}
	}
	slices.SortStableFunc(out, func(a, b Pending) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), a.Since.Compare(b.Since), a.queuedAt.Compare(b.queuedAt), strings.Compare(a.tie, b.tie))
	})
	for i := range out {
		out[i].Position = i + 1
		if out[i].waiting {
			// Its age is its time in the layer's queue.
			out[i].Since = out[i].queuedAt
		}
	}
	return out, nil
}

// matches reports whether one of the line's pending pods matches sel.
func (p *Pending) matches(sel func(*corev1.Pod) bool) bool {
	if p.Gang == nil {
		return sel(p.Pod)
	}
	return slices.ContainsFunc(p.Gang.Pending(), sel)
}

// nodeVerdicts words a cycle that found no node briefly for one line:
// the nodes grouped by their reasons, the largest group first
// ("30 Insufficient nvidia.com/gpu; 4 node(s) had untolerated taint(s)"),
// nodes outside a gang's domain left out. A cycle that stopped in
// PreFilter has no per-node reasons: its message says it all.
func nodeVerdicts(res *schedule.Result) string {
	counts := map[string]int{}
	var order []string
	// Nodes in a row often have the same reasons: their key is made once.
	var last []string
	lastKey := ""
	for _, n := range res.Nodes {
		if n.Feasible || n.Status == nil {
			continue
		}
		reasons := n.Status.Reasons()
		if slices.Contains(reasons, schedule.NotInDomainReason) || len(reasons) == 0 {
			continue
		}
		if !slices.Equal(reasons, last) {
			last, lastKey = reasons, CompactReasons(reasons)
		}
		key := lastKey
		if counts[key] == 0 {
			order = append(order, key)
		}
		counts[key]++
	}
	if len(order) == 0 {
		return res.Message
	}
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(counts[b], counts[a]) })
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return strings.Join(parts, "; ")
}

// topologyBlocks says, for a gang confined to one value of a topology key
// that does not fit there, whether the whole cluster would hold it: then
// the topology, not the capacity, is the blocker, and the reason leads
// with it. "" when the cluster would not hold it either.
func topologyBlocks(ctx context.Context, snap *schedule.Snapshot, plain *schedule.Scheduler, opts gang.PlaceOptions, g *gang.Gang, p *gang.Placement) (string, error) {
	free := *g
	free.TopologyKey = ""
	opts.TopologyKey = ""
	then, err := gang.PlaceOn(ctx, snap, plain, &free, opts)
	if err != nil || then.Verdict != gang.VerdictPlaced {
		return "", err
	}
	best := ""
	if p.Domain != "" {
		best = ", best " + p.Domain
	}
	return fmt.Sprintf("%d/%d fit in one %s, all %d without that required topology%s: %s", p.MaxPlaceable, p.MinMember, p.TopologyKey,
		then.MaxPlaceable, best, nodeVerdicts(p.Blocker)), nil
}

// CompactReasons joins reasons, saying "Insufficient" once:
// "Insufficient cpu, memory, nvidia.com/gpu".
func CompactReasons(reasons []string) string {
	const insufficient = "Insufficient "
	out := slices.Clone(reasons)
	seen := false
	for i, r := range out {
		if strings.HasPrefix(r, insufficient) {
			if seen {
				out[i] = strings.TrimPrefix(r, insufficient)
			}
			seen = true
		}
	}
	return strings.Join(out, ", ")
}
