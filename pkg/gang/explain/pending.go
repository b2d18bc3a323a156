package explain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
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
	// qualified says PodGroups of two kinds share the gang's name.
	qualified bool
}

// Name is the subject as explain takes it: pod/NAME, or podgroup/NAME
// (podgroups.<group>/NAME when PodGroups of two kinds share the name); a
// Kueue pod group by its first pending member.
func (p *Pending) Name() string {
	switch {
	case p.Gang == nil:
		return "pod/" + p.Pod.Name
	case p.Gang.Source == gang.SourceKueue:
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

// SourceOptions are the placement options for the gangs of one source
// in ListPending.
type SourceOptions struct {
	Source  gang.Source
	Options gang.PlaceOptions
}

// sourceJudge places the gangs of one source: its options and the
// scheduler built with them, on first use.
type sourceJudge struct {
	opts  gang.PlaceOptions
	plain *schedule.Scheduler
}

// ListPending finds what waits for a node in namespace (every namespace
// when empty): each gang with a pending member, placed all or nothing as
// explain places it, and each pending pod of no gang, scheduled alone. All
// are judged on the same snapshot, none assuming the others placed.
// Lines come in namespace and name order. No suggestions are made: that is
// what explaining one of them is for. The gangs of a source in bySource
// are placed with its options instead of opts (a Volcano gang with
// Volcano's node order, docs/design.md#volcanos-node-order).
func ListPending(ctx context.Context, snap *schedule.Snapshot, namespace string, opts gang.PlaceOptions, bySource ...SourceOptions) ([]Pending, error) {
	x, err := newJudge(snap, Options{PlaceOptions: opts})
	if err != nil {
		return nil, err
	}
	for _, so := range bySource {
		if x.bySource == nil {
			x.bySource = map[gang.Source]*sourceJudge{}
		}
		x.bySource[so.Source] = &sourceJudge{opts: so.Options}
	}
	type groupKey struct {
		group           string
		namespace, name string
	}
	gangs := map[groupKey]*gang.Gang{}
	missing := map[groupKey]bool{}
	var out []Pending
	for _, pod := range snap.Pods {
		if (namespace != "" && pod.Namespace != namespace) || gang.StateOf(pod) != gang.MemberPending {
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
		if name := gang.GroupNameOf(pod, gang.SourceKueue); g == nil && group == "" && name != "" {
			key := groupKey{string(gang.SourceKueue), pod.Namespace, name}
			if g = gangs[key]; g == nil {
				found, err := gang.ResolveKueueGroup(snap, pod.Namespace, name)
				if err != nil {
					// Kueue's webhook refuses such a pod; say why.
					out = append(out, Pending{Namespace: pod.Namespace, Pod: pod, PendingMembers: 1, Members: 1,
						Verdict: VerdictUnschedulable, Reason: err.Error()})
					continue
				}
				gangs[key], g = found, found
				out = append(out, Pending{Namespace: pod.Namespace, Gang: found})
			}
		}
		if g != nil {
			continue
		}
		line := Pending{Namespace: pod.Namespace, Pod: pod, Group: group, PendingMembers: 1, Members: 1}
		if err := x.judgePod(ctx, &line); err != nil {
			return nil, err
		}
		out = append(out, line)
	}
	for i := range out {
		if out[i].Gang == nil {
			continue
		}
		if err := x.judgeGang(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	named := map[[2]string]int{}
	for _, l := range out {
		if l.Gang != nil {
			named[[2]string{l.Namespace, l.Gang.Name}]++
		}
	}
	for i := range out {
		out[i].qualified = out[i].Gang != nil && named[[2]string{out[i].Namespace, out[i].Gang.Name}] > 1
	}
	slices.SortStableFunc(out, func(a, b Pending) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name(), b.Name()))
	})
	return out, nil
}

// judgePod schedules a pending pod of no gang alone.
func (x *explainer) judgePod(ctx context.Context, line *Pending) error {
	pod := line.Pod
	if line.Group != "" {
		line.Verdict = VerdictUnschedulable
		line.Reason, _ = gang.HeldForGroup(x.snap, pod)
		return nil
	}
	res, err := x.plain.Schedule(ctx, gang.Ungated(pod))
	if err != nil {
		return fmt.Errorf("scheduling %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	switch {
	case len(pod.Spec.SchedulingGates) > 0:
		line.Verdict = VerdictGated
		gates := gang.GateNames([]*corev1.Pod{pod})
		line.Reason = "scheduling gates: " + strings.Join(gates, ", ")
		var owners []string
		for _, g := range gates {
			if o, _, _ := strings.Cut(gang.GateOwner(g), ":"); o != "" && !slices.Contains(owners, o) {
				owners = append(owners, o)
			}
		}
		if len(owners) > 0 {
			line.Reason += " (" + strings.Join(owners, ", ") + ")"
		}
	case res.Verdict == schedule.VerdictScheduled:
		line.Verdict = VerdictSchedulable
		line.Reason = fmt.Sprintf("fits %d of %d node(s); the best is %s (score %d)", countFeasible(res), res.NumAllNodes, res.SelectedNode, res.SelectedScore)
	default:
		line.Verdict = VerdictUnschedulable
		line.Reason = nodeVerdicts(res)
	}
	return nil
}

// nodeVerdicts words a cycle that found no node briefly for one line:
// the nodes grouped by their reasons, the largest group first
// ("30 Insufficient nvidia.com/gpu; 4 node(s) had untolerated taint(s)"),
// nodes outside a gang's domain left out. A cycle that stopped in
// PreFilter has no per-node reasons: its message says it all.
func nodeVerdicts(res *schedule.Result) string {
	counts := map[string]int{}
	var order []string
	for _, n := range res.Nodes {
		if n.Feasible || n.Status == nil {
			continue
		}
		reasons := n.Status.Reasons()
		if slices.Contains(reasons, schedule.NotInDomainReason) || len(reasons) == 0 {
			continue
		}
		key := CompactReasons(reasons)
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

// judgeGang places a gang all or nothing, behind its source's gate, as
// explain does, and words its verdict as explain's summary line.
func (x *explainer) judgeGang(ctx context.Context, line *Pending) error {
	g := line.Gang
	var p *gang.Placement
	var err error
	plain, opts := x.plain, x.opts.PlaceOptions
	if sj := x.bySource[g.Source]; sj != nil {
		if sj.plain == nil {
			if sj.plain, err = schedule.NewScheduler(x.snap, schedule.Options{Profile: sj.opts.Profile, Parallelism: x.opts.Parallelism}); err != nil {
				return err
			}
		}
		p, err = gang.PlaceOn(ctx, x.snap, sj.plain, g, sj.opts)
		plain, opts = sj.plain, sj.opts
	} else {
		p, err = x.placeBehindGate(ctx, g)
	}
	if err != nil {
		return err
	}
	pending := g.Pending()
	line.PendingMembers, line.Members = len(pending), len(g.Members)
	line.Verdict, line.Reason = gangVerdict(p, gang.Validate(g), g.GatedCount(), gang.GateNames(pending))
	if line.Verdict == VerdictUnschedulable && p.Blocker != nil && p.Gate == nil {
		// How many fit of the minimum, and why the next does not.
		line.Reason = fmt.Sprintf("%d/%d fit: %s", p.MaxPlaceable, p.MinMember, nodeVerdicts(p.Blocker))
		if p.TopologyKey != "" && p.PreferredTopologyKey == "" {
			// A required topology may be the blocker: the gang placed
			// again without it says so (issue #27).
			if why, err := x.topologyBlocks(ctx, plain, opts, g, p); err != nil {
				return err
			} else if why != "" {
				line.Reason = why
			}
		}
	}
	return nil
}

// topologyBlocks says, for a gang confined to one value of a topology key
// that does not fit there, whether the whole cluster would hold it: then
// the topology, not the capacity, is the blocker, and the reason leads
// with it. "" when the cluster would not hold it either.
func (x *explainer) topologyBlocks(ctx context.Context, plain *schedule.Scheduler, opts gang.PlaceOptions, g *gang.Gang, p *gang.Placement) (string, error) {
	free := *g
	free.TopologyKey = ""
	opts.TopologyKey = ""
	then, err := gang.PlaceOn(ctx, x.snap, plain, &free, opts)
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
