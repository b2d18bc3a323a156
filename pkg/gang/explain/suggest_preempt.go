package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// preempt asks kube-scheduler's preemption, as a what-if, which
// lower-priority pods it would evict for each member left over in turn, in
// the state the best attempt left: a member that fits once earlier victims
// are gone takes the first feasible node, one that does not gets its own
// victims and is assumed on the node preemption picks. The pick is
// kube-scheduler's ranking (fewest PodDisruptionBudget violations, then the
// lowest highest-priority victim, the smallest sum of priorities, the
// fewest victims) over every node, where kube-scheduler stops at a tenth:
// for a gang, the cheapest victims anywhere win (docs/design.md#commands).
// The victims are then removed from a copy of the snapshot and the gang
// placed again: the suggestion is made only when it then fits. Nothing is
// evicted.
func (x *explainer) preempt(ctx context.Context, g *gang.Gang, p *gang.Placement, _ *Explanation) (*Suggestion, error) {
	if p.Blocker == nil || p.Blocker.NominatedNode == "" {
		return nil, nil // kube-scheduler's own preemption found no room for the first
	}
	// A pod alone gets kube-scheduler's own pick, the one its summary line
	// names; a gang the cheapest over every node.
	lone := g.Source == ""
	base := x.plain
	if !lone {
		var err error
		if base, err = x.plain.WithEveryPreemptionCandidate(); err != nil {
			return nil, err
		}
	}
	state, err := x.stateAfter(base, p.Planned())
	if err != nil {
		return nil, err
	}
	if p.TopologyKey != "" && p.Domain != "" {
		var names []string
		for _, ni := range state.NodeInfos() {
			if inScope(p, ni.Node()) {
				names = append(names, ni.Name())
			}
		}
		state.Confine(names)
	} else {
		state.Confine(nil)
	}
	s := &Suggestion{Kind: SuggestPreempt}
	gone := map[string]bool{}
	// Members of one class share their cycles: after a member's victims go
	// and it takes their node, the next is filtered again there only.
	seq := state.NewSequence()
	for _, pod := range unplacedOf(g, p) {
		res, err := seq.Schedule(ctx, gang.Ungated(pod))
		if err != nil {
			return nil, fmt.Errorf("preemption what-if for %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if res.Verdict == schedule.VerdictScheduled {
			// Earlier victims made room: it takes the first feasible node.
			for _, n := range res.Nodes {
				if n.Feasible {
					if err := seq.Reserve(ctx, pod, n.Name); err != nil {
						return nil, err
					}
					break
				}
			}
			continue
		}
		if res.NominatedNode == "" || len(res.PreemptionVictims) == 0 {
			return nil, nil
		}
		if len(s.Victims) == 0 && len(res.PreemptionEquallyGood) > 0 {
			// The first preemption's node is one of several equally good.
			s.EquallyGood = append([]string{res.NominatedNode}, res.PreemptionEquallyGood...)
		}
		s.PDBViolations += res.PreemptionPDBViolations
		for _, v := range res.PreemptionVictims {
			s.Victims = append(s.Victims, Victim{Pod: v, Node: res.NominatedNode, Priority: corev1helpers.PodPriority(v)})
			gone[v.Namespace+"/"+v.Name] = true
		}
		if err := seq.Evict(res.PreemptionVictims, res.NominatedNode); err != nil {
			return nil, err
		}
		if err := seq.Reserve(ctx, pod, res.NominatedNode); err != nil {
			return nil, err
		}
	}
	if len(s.Victims) == 0 {
		return nil, nil
	}
	c := *x.snap
	c.Pods = slices.DeleteFunc(slices.Clone(x.snap.Pods), func(pod *corev1.Pod) bool { return gone[pod.Namespace+"/"+pod.Name] })
	then, err := x.place(ctx, &c, g)
	if err != nil || then.Verdict != gang.VerdictPlaced {
		return nil, err
	}
	s.Verified = true
	s.Message = "preempting " + describeVictims(s.Victims)
	if s.PDBViolations > 0 {
		s.Message += fmt.Sprintf("; %d of them beyond what a PodDisruptionBudget allows", s.PDBViolations)
	}
	s.Message += "; " + fitsThen(g, then)
	if n := len(s.EquallyGood); n > 0 {
		if lone {
			s.Message += fmt.Sprintf("; the choice is not unique: kube-scheduler picks the node at random among %d equally good ones (%s), this one is the first by name",
				n, listSome(s.EquallyGood, 5))
		} else {
			s.Message += fmt.Sprintf("; not unique: %d nodes are equally good for the first member (%s), this plan takes the first by name "+
				"and kube-scheduler, preempting member by member, may evict others", n, listSome(s.EquallyGood, 3))
		}
	}
	return s, nil
}

// maxListedVictims bounds the victims a preemption suggestion names on
// screen; the JSON lists them all.
const maxListedVictims = 6

// describeVictims says which pods a preemption evicts: each by name when
// they are few, else how many of each priority class on how many nodes and
// the first few names (the full list is in -o json's victims).
func describeVictims(victims []Victim) string {
	nodes := map[string]bool{}
	for _, v := range victims {
		nodes[v.Node] = true
	}
	if len(victims) <= maxListedVictims {
		byNode := map[string][]string{}
		var order []string
		for _, v := range victims {
			if _, ok := byNode[v.Node]; !ok {
				order = append(order, v.Node)
			}
			byNode[v.Node] = append(byNode[v.Node], victimName(v))
		}
		var parts []string
		for _, n := range order {
			parts = append(parts, strings.Join(byNode[n], ", ")+" on "+n)
		}
		return fmt.Sprintf("%d lower-priority pod(s) would make room: %s", len(victims), strings.Join(parts, "; "))
	}
	type class struct {
		name     string
		priority int32
		count    int
	}
	var classes []*class
	byClass := map[string]*class{}
	for _, v := range victims {
		key := fmt.Sprintf("%s/%d", v.Pod.Spec.PriorityClassName, v.Priority)
		c := byClass[key]
		if c == nil {
			c = &class{name: v.Pod.Spec.PriorityClassName, priority: v.Priority}
			byClass[key] = c
			classes = append(classes, c)
		}
		c.count++
	}
	var counts []string
	for _, c := range classes {
		name := c.name
		if name == "" {
			name = "no class"
		}
		counts = append(counts, fmt.Sprintf("%d of %s (priority %d)", c.count, name, c.priority))
	}
	var first []string
	for _, v := range victims[:3] {
		first = append(first, v.Pod.Namespace+"/"+v.Pod.Name+" on "+v.Node)
	}
	return fmt.Sprintf("%d lower-priority pod(s) on %d node(s) would make room: %s; first %s, ... (-o json lists every victim)",
		len(victims), len(nodes), strings.Join(counts, ", "), strings.Join(first, ", "))
}

// victimName names a victim with its priority and class.
func victimName(v Victim) string {
	desc := v.Pod.Namespace + "/" + v.Pod.Name + " (priority " + fmt.Sprint(v.Priority)
	if v.Pod.Spec.PriorityClassName != "" {
		desc += ", " + v.Pod.Spec.PriorityClassName
	}
	return desc + ")"
}

// listSome joins the first limit of items and says how many more there
// are: "a, b, c and 7 more".
func listSome(items []string, limit int) string {
	s := strings.Join(items[:min(limit, len(items))], ", ")
	if len(items) > limit {
		s += fmt.Sprintf(" and %d more", len(items)-limit)
	}
	return s
}
