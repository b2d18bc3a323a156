package defaultpreemption

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// pickByVictims is pickOneCandidate as it was before ranks were kept with
// the memo: every criterion computed from the victims at each pick, as
// kube-scheduler's pickOneNodeForPreemption does. The reference for
// TestPickOneCandidateMatchesVictims.
func pickByVictims(candidates []*Candidate, now time.Time) (*Candidate, []*Candidate) {
	if len(candidates) == 1 {
		return candidates[0], nil
	}
	remaining := slices.Clone(candidates)
	slices.SortFunc(remaining, func(a, b *Candidate) int { return strings.Compare(a.NodeName, b.NodeName) })
	scores := []func(c *Candidate) int64{
		func(c *Candidate) int64 { return -int64(c.NumPDBViolations) },
		func(c *Candidate) int64 { return -int64(corev1helpers.PodPriority(c.Victims[0])) },
		func(c *Candidate) int64 {
			var sum int64
			for _, p := range c.Victims {
				sum += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32) + 1
			}
			return -sum
		},
		func(c *Candidate) int64 { return -int64(len(c.Victims)) },
		func(c *Candidate) int64 { return earliestStartOfHighestPriority(c.Victims, now).UnixNano() },
	}
	for _, score := range scores {
		best := int64(math.MinInt64)
		var kept []*Candidate
		for _, c := range remaining {
			s := score(c)
			if s > best {
				best, kept = s, kept[:0]
			}
			if s == best {
				kept = append(kept, c)
			}
		}
		if len(kept) == 1 {
			return kept[0], nil
		}
		remaining = kept
	}
	return remaining[0], remaining[1:]
}

// earliestStartOfHighestPriority is kube-scheduler's GetEarliestPodStartTime:
// the earliest start among the victims of the highest priority.
func earliestStartOfHighestPriority(victims []*corev1.Pod, now time.Time) time.Time {
	earliest := startTime(victims[0], now)
	highest := corev1helpers.PodPriority(victims[0])
	for _, p := range victims {
		switch priority := corev1helpers.PodPriority(p); {
		case priority == highest:
			if t := startTime(p, now); t.Before(earliest) {
				earliest = t
			}
		case priority > highest:
			highest, earliest = priority, startTime(p, now)
		}
	}
	return earliest
}

// The ranks computed once per node outcome (kept in the memo across picks
// made at different moments) pick what the victims pick at that moment:
// random candidates with few distinct priorities, budgets violated or not,
// victims started before, after or at the moment, or not started at all.
func TestPickOneCandidateMatchesVictims(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for trial := range 3000 {
		n := 1 + rng.IntN(12)
		var candidates, fresh []*Candidate
		for i := range n {
			victims := make([]*corev1.Pod, 1+rng.IntN(4))
			for k := range victims {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("v-%d-%d", i, k)}}
				prio := int32(rng.IntN(3)*100 - 100)
				if rng.IntN(10) > 0 {
					p.Spec.Priority = &prio
				}
				if rng.IntN(3) > 0 {
					p.Status.StartTime = &metav1.Time{Time: base.Add(time.Duration(rng.IntN(4)) * time.Hour)}
				}
				victims[k] = p
			}
			// Most important first, as the dry run orders them.
			slices.SortStableFunc(victims, func(a, b *corev1.Pod) int {
				return int(corev1helpers.PodPriority(b)) - int(corev1helpers.PodPriority(a))
			})
			c := Candidate{NodeName: fmt.Sprintf("node-%02d", rng.IntN(40)), Victims: victims, NumPDBViolations: rng.IntN(2)}
			ranked := c
			r := rankOf(victims, c.NumPDBViolations)
			ranked.rank = &r
			candidates = append(candidates, &ranked)
			fresh = append(fresh, &c)
		}
		// The ranks were computed before; the pick happens at a moment
		// before, among or after the start times.
		now := base.Add(time.Duration(rng.IntN(6)-1) * time.Hour)
		got, gotTies := pickOneCandidate(candidates, now)
		want, wantTies := pickByVictims(fresh, now)
		names := func(cs []*Candidate) []string {
			var out []string
			for _, c := range cs {
				out = append(out, c.NodeName+fmt.Sprint(len(c.Victims)))
			}
			return out
		}
		if got.NodeName != want.NodeName || len(got.Victims) != len(want.Victims) || !slices.Equal(names(gotTies), names(wantTies)) {
			t.Fatalf("trial %d: picked %s (ties %v), by the victims %s (ties %v)", trial, got.NodeName, names(gotTies), want.NodeName, names(wantTies))
		}
	}
}
