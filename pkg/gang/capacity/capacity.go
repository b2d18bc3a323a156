package capacity

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// DefaultMax is how many copies Capacity tries at most unless told.
const DefaultMax = 1000

// Options say how copies are placed and how many are tried.
type Options struct {
	Place gang.PlaceOptions
	// Max is the most copies tried (DefaultMax when 0 or less).
	Max int
}

// Result is how many copies of a gang fit at once.
type Result struct {
	Gang *gang.Gang
	// Copies is how many copies fit, one after another, each on the state
	// the ones before left.
	Copies int
	// AtLeast: Max copies fit, and more were not tried.
	AtLeast bool
	// Stop is the placement of the first copy that does not fit (nil when
	// AtLeast); Reason is why, in one line: the quota's refusal, the gate
	// that holds it, or the message of the member no node takes.
	Stop   *gang.Placement
	Reason string
	// NotEvaluated gathers what the counted copies' placements could not
	// evaluate: a count that depends on it is not a plain yes.
	NotEvaluated []string
	// Domains are the topology domains the counted copies went to, one per
	// copy, when the gang has a required topology.
	Domains []string
}

// Verified reports whether the count is a plain yes: at least one copy
// fits and nothing any counted copy depends on was left not evaluated.
func (c *Result) Verified() bool {
	return c.Copies > 0 && len(c.NotEvaluated) == 0
}

// Count counts the copies of g (gang.Gang.Copy) that fit at once: copy 1 is
// placed on snap as gang.PlaceOn places any gang, then recorded as running
// (gang.Commit), copy 2 placed on what copy 1 left, and so on, until a copy does
// not fit (its placement is the Stop, and Reason says why) or Max copies
// fit. A copy the namespace's ResourceQuotas would refuse, together with
// the copies before it, does not fit either: quota admission charges every
// copy when it is created (gang.Quota, on the copies so far against snap's
// quota usage). g's own members stay as snap holds them: running ones hold
// their room, pending ones none. base is a scheduler built for snap; it
// is not changed (docs/design.md#capacity).
func Count(ctx context.Context, snap *schedule.Snapshot, base *schedule.Scheduler, g *gang.Gang, opts Options) (*Result, error) {
	limit := opts.Max
	if limit <= 0 {
		limit = DefaultMax
	}
	out := &Result{Gang: g}
	cur, s := snap, base
	all := &gang.Gang{Namespace: g.Namespace, Name: g.Name}
	// The quota is charged on snap's usage, and no copy is in snap: the
	// pods are left out so that gang.Quota does not index them for every copy.
	quotaSnap := *snap
	quotaSnap.Pods = nil
	quota := true
	place := opts.Place
	if place.Classes == nil {
		// The copies are of one shape: after the first, incremental
		// cycles only (schedule.ClassStore).
		place.Classes = schedule.NewClassStore()
	}
	free := freeCopies(snap, g)
	for i := 1; i <= limit; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := free()
		p, err := gang.PlaceOn(ctx, cur, s, c, place)
		if err != nil {
			return nil, err
		}
		if quota {
			all.Members = append(all.Members, c.Members...)
			q := gang.Quota(&quotaSnap, all)
			p.ApplyQuota(q)
			// A namespace without a ResourceQuota has none for the
			// next copies either.
			quota = q.Outcome != gang.QuotaNone
		}
		if p.Verdict != gang.VerdictPlaced {
			out.Stop, out.Reason = p, stopReason(p)
			return out, nil
		}
		out.Copies++
		for _, n := range p.AllNotEvaluated() {
			if !slices.Contains(out.NotEvaluated, n) {
				out.NotEvaluated = append(out.NotEvaluated, n)
			}
		}
		if p.Domain != "" {
			out.Domains = append(out.Domains, p.Domain)
		}
		if i == limit {
			break
		}
		// A queueing layer's admission first: the workloads it evicts for
		// the copy leave, and the copy holds its quota for the next.
		if cur, s, err = gang.CommitAdmission(cur, s, p); err != nil {
			return nil, err
		}
		if cur, s, err = gang.Commit(cur, s, p.Planned()); err != nil {
			return nil, err
		}
		// The copy's group is there too: a system's queue counts the
		// copies before it as started gangs (Committer).
		cur = gang.CommitGroup(cur, c)
	}
	out.AtLeast = true
	return out, nil
}

// freeCopies returns the copies of g one after another, numbered from 1,
// skipping a number whose group or member names an object of the snapshot
// already has (a pod, a PodGroup of any kind in that namespace): a second
// submission would not take them over either, and a copy must not stand
// for them when it is committed.
func freeCopies(snap *schedule.Snapshot, g *gang.Gang) func() *gang.Gang {
	taken := map[[2]string]bool{}
	for _, pod := range snap.Pods {
		taken[[2]string{pod.Namespace, pod.Name}] = true
	}
	groups := map[[2]string]bool{}
	for _, pg := range snap.PodGroups {
		groups[[2]string{pg.GetNamespace(), pg.GetName()}] = true
	}
	next := 1
	return func() *gang.Gang {
		for {
			c := g.Copy(next)
			next++
			if groups[[2]string{c.Namespace, c.Name}] || slices.ContainsFunc(c.Members, func(m *corev1.Pod) bool {
				return taken[[2]string{m.Namespace, m.Name}]
			}) {
				continue
			}
			return c
		}
	}
}

// stopReason is why a copy does not fit, in one line: what holds it back
// (a quota's refusal, a gate), else the message of the member no node
// takes, as kube-scheduler's FailedScheduling event words it, else the
// placement's message.
func stopReason(p *gang.Placement) string {
	switch {
	case p.Gate != nil && p.Gate.Message != "":
		return p.Message
	case p.Blocker != nil && p.Blocker.Message != "" && p.Why == "" && p.Conflict == "":
		return p.Blocker.Message
	}
	return p.Message
}
