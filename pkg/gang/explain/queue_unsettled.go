package explain

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// markUnsettled takes back the plain yes of starts the real scheduler may
// not make where the simulation puts them, and says of a waiting entry
// that it may start instead (docs/design.md#the-queue, "Order not kept").
// Two things unsettle the simulated order:
//   - A Coscheduling gang that does not start holds, on its own scheduler
//     (its pods are assumed, not bound), the nodes of its members that fit
//     while it is tried: they wait at Permit until one does not fit and
//     Coscheduling.PostFilter rejects them (or the Permit timeout). An
//     entry tried meanwhile on those nodes fails and backs off; it still
//     starts once they are free, unless an entry behind it takes its room
//     first. Such a start is unsettled, and no plain yes when an entry
//     behind it (one that starts or waits, of any scheduler) passes Filter
//     on one of its nodes on the cluster as it is.
//   - An unsettled start (including one race made no plain yes), or a
//     waiting entry ahead only by such an order (Raced), may go elsewhere,
//     whatever the schedulers: a start behind it on a node where one of
//     its pods passes Filter on the cluster as it is may lose that node,
//     and is no plain yes; it is unsettled in turn. A waiting entry behind
//     an unsettled start, on a node where one of its own pods passes
//     Filter, may start in its place: it is Raced.
func (sim *queueSim) markUnsettled(ctx context.Context, lines []Pending) error {
	feasible := map[int]map[string]bool{}
	feas := func(i int) (map[string]bool, error) {
		if f, ok := feasible[i]; ok {
			return f, nil
		}
		f, err := sim.feasible(ctx, &lines[i])
		feasible[i] = f
		return f, err
	}
	started := func(l *Pending) bool { return l.Outcome == OutcomeStarts || l.Outcome == OutcomeUnverified }
	// The nodes of each start, each once, worked out once.
	distinct := make([][]string, len(lines))
	for j := range lines {
		if started(&lines[j]) {
			distinct[j] = lines[j].DistinctNodes()
		}
	}
	var holders, movers []int
	for j := range lines {
		l := &lines[j]
		if len(l.hold) > 0 {
			holders = append(holders, j)
		}
		switch {
		case started(l):
			for _, i := range movers {
				m := &lines[i]
				f, err := feas(i)
				if err != nil {
					return err
				}
				if on := onNodes(distinct[j], f); len(on) > 0 {
					why := fmt.Sprintf("%s, ahead of it, may start elsewhere than planned (%s) and take %s first", qualifiedName(m, l.Namespace), m.brief, listSome(on, 3))
					if m.Outcome == OutcomeWaits {
						why = fmt.Sprintf("%s, ahead of it, may start (it waits only by an order the scheduler may not keep) and take %s first", qualifiedName(m, l.Namespace), listSome(on, 3))
					}
					l.Outcome, l.Verdict = OutcomeUnverified, VerdictUnverified
					l.Reason += "; not verified: " + why
					l.unsettled, l.brief, l.held = why, qualifiedName(m, l.Namespace)+" may take its nodes first", false
					break
				}
			}
			if l.unsettled == "" {
				// A holder on its nodes first; else, for a gang with
				// minResources, any holder of its scheduler: PreFilter's
				// CheckClusterResource counts the assumed pods of the
				// whole cluster.
				var by *Pending
				for _, i := range holders {
					h := &lines[i]
					if h.Scheduler != l.Scheduler {
						continue
					}
					if on := onNodes(distinct[j], h.hold); len(on) > 0 {
						l.unsettled, by = fmt.Sprintf("%s, ahead of it, may hold %s at Permit while Coscheduling tries it (until its PostFilter rejects the members that wait)", qualifiedName(h, l.Namespace), listSome(on, 3)), h
						break
					}
					if by == nil && isCoscheduling(l) && l.Gang.MinResources != nil {
						by = h
					}
				}
				if by != nil && l.unsettled == "" {
					l.unsettled = fmt.Sprintf("%s, ahead of it, holds nodes at Permit while Coscheduling tries it, which its minResources check (PreFilter) counts as taken", qualifiedName(by, l.Namespace))
				}
				if by != nil {
					l.brief, l.held = qualifiedName(by, l.Namespace)+" may hold its nodes while Coscheduling tries it", true
				}
			}
			if l.unsettled != "" {
				movers = append(movers, j)
			}
		case l.Outcome == OutcomeWaits && (len(movers) > 0 || l.Raced):
			f, err := feas(j)
			if err != nil {
				return err
			}
			for _, i := range movers {
				if l.Raced {
					break // said once
				}
				if m := &lines[i]; started(m) && len(onNodes(distinct[i], f)) > 0 {
					// docs/design.md#the-queue.
					l.Raced = true
					l.Reason += fmt.Sprintf(" (ahead by an order the scheduler's own queue may not keep: %s may not start as planned, %s)", qualifiedName(m, l.Namespace), m.brief)
				}
			}
			if l.Raced {
				movers = append(movers, j)
			}
		}
	}
	// A start held up only by a hold is lost only to an entry behind it.
	for _, j := range movers {
		l := &lines[j]
		if !l.held || l.Outcome != OutcomeStarts {
			continue
		}
		for k := j + 1; k < len(lines); k++ {
			t := &lines[k]
			if !started(t) && t.Outcome != OutcomeWaits {
				continue
			}
			f, err := feas(k)
			if err != nil {
				return err
			}
			if len(onNodes(distinct[j], f)) > 0 {
				l.Outcome, l.Verdict = OutcomeUnverified, VerdictUnverified
				l.Reason += fmt.Sprintf("; not verified: %s; tried meanwhile it fails and backs off, and %s, behind it, may take its room", l.unsettled, qualifiedName(t, l.Namespace))
				break
			}
		}
	}
	return nil
}

// onNodes are the nodes of nodes in set, in order.
func onNodes(nodes []string, set map[string]bool) []string {
	var out []string
	for _, n := range nodes {
		if set[n] {
			out = append(out, n)
		}
	}
	return out
}

// feasible are the nodes where one of l's pending pods passes Filter on
// the cluster as it is: where it may go in another order. A gang with a
// pod that passes on none (it may need its siblings placed first) may go
// anywhere: every node.
func (sim *queueSim) feasible(ctx context.Context, l *Pending) (map[string]bool, error) {
	source, pods := l.pendingPods()
	opts, held := sim.q.PlaceFor(source, pods)
	if held != "" {
		return map[string]bool{}, nil
	}
	s, err := sim.initial.scheduler(opts.Profile)
	if err != nil {
		return nil, err
	}
	out, nowhere, err := passing(ctx, s, pods)
	if err != nil {
		return nil, err
	}
	if nowhere && l.Gang != nil {
		return everyNode(s), nil
	}
	return out, nil
}

// passing are the nodes of s's working copy where one of pods passes
// Filter; nowhere says one of them passes on none. Pods of one class
// (schedule.Sequence.Class: an Indexed Job's members share one) pass on
// the same nodes; a pod of no class (volumes, claims) is its own. Past
// maxFeasibleShapes of them it is every node, never less than the truth.
func passing(ctx context.Context, s *schedule.Scheduler, pods []*corev1.Pod) (out map[string]bool, nowhere bool, err error) {
	out = map[string]bool{}
	seq := s.NewSequence()
	seen := map[string]bool{}
	for i, pod := range pods {
		key, ok := seq.Class(pod)
		if !ok {
			key = fmt.Sprintf("\x00%d", i)
		}
		if seen[key] {
			continue
		}
		if len(seen) == maxFeasibleShapes {
			return everyNode(s), nowhere, nil
		}
		seen[key] = true
		res, err := s.Schedule(ctx, gang.Ungated(pod))
		if err != nil {
			return nil, false, fmt.Errorf("scheduling %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		any := false
		for _, n := range res.Nodes {
			if n.Feasible {
				out[n.Name], any = true, true
			}
		}
		nowhere = nowhere || !any
	}
	return out, nowhere, nil
}

// everyNode is every node of s's working copy.
func everyNode(s *schedule.Scheduler) map[string]bool {
	all := s.NodeInfos()
	out := make(map[string]bool, len(all))
	for _, ni := range all {
		out[ni.Name()] = true
	}
	return out
}

// maxFeasibleShapes is how many classes of pods passing schedules.
const maxFeasibleShapes = 8
