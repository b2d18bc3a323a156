package gang

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CopyLabels are the labels whose values tie a member to its own group and
// workload (these, and each gang system's Rules.CopyLabels), as the controllers and webhooks set them: a copy of a gang
// (Gang.Copy) gets its own values for them, as a second submission of the
// workload under another name would, so that copies neither satisfy each
// other's pod affinity nor count in each other's spread or anti-affinity
// (docs/design.md#capacity). Labels the user wrote in a template (app: X)
// stay as they are: a second submission carries them too.
func CopyLabels() []string {
	out := slices.Clone(copyLabels)
	for _, k := range registry.keyed {
		out = append(out, k.rules.CopyLabels...)
	}
	return out
}

var copyLabels = []string{
	"job-name", "batch.kubernetes.io/job-name", "controller-uid", "batch.kubernetes.io/controller-uid",
	"jobset.sigs.k8s.io/jobset-name", "jobset.sigs.k8s.io/jobset-uid", "jobset.sigs.k8s.io/job-key",
	"leaderworkerset.sigs.k8s.io/name", "leaderworkerset.sigs.k8s.io/group-key", "leaderworkerset.sigs.k8s.io/subgroup-key",
	"leaderworkerset.sigs.k8s.io/leader-name",
	"training.kubeflow.org/job-name", "ray.io/cluster", "statefulset.kubernetes.io/pod-name",
}

// Copy is copy number i (from 1) of the gang, as if submitted again under
// another name: every member is a new pending pod (not bound, no status, no
// scheduling gates, no UID), named after the copy, and the group's name,
// the PodGroup, each member's membership key (SetGroupName) and the values
// of CopyLabels, in the members' labels and in the label selectors of their
// pod affinity, anti-affinity and topology spread constraints, are the
// copy's own. A value is renamed by putting "-copy<i>" after the shortest
// name of the gang (the group's, or a workload's named by a CopyLabels
// value) it starts with ("train-0" -> "train-copy2-0"), else at its end;
// every value is renamed the same way everywhere, so a member's selectors
// keep matching its own copy. g is not changed. Members that succeeded
// are not copied: a copy starts from nothing.
func (g *Gang) Copy(i int) *Gang {
	r := renamer{suffix: fmt.Sprintf("-copy%d", i), keys: CopyLabels()}
	r.names = append(r.names, strings.Split(g.Name, ",")...)
	for _, m := range g.Members {
		for _, k := range r.keys {
			if v, ok := m.Labels[k]; ok && v != "" {
				r.names = append(r.names, v)
			}
		}
	}
	// Shortest first: the workload's name before its child Jobs'.
	slices.SortFunc(r.names, func(a, b string) int { return len(a) - len(b) })
	out := *g
	out.Name = r.rename(g.Name)
	if g.PodGroup != nil {
		out.PodGroup = g.PodGroup.DeepCopy()
		out.PodGroup.SetName(out.Name)
		out.PodGroup.SetUID("")
		out.PodGroup.SetResourceVersion("")
		// A new group has no status yet: its controller writes it.
		delete(out.PodGroup.Object, "status")
	}
	out.Members = make([]*corev1.Pod, len(g.Members))
	for j, m := range g.Members {
		out.Members[j] = r.pod(m, g)
	}
	out.Succeeded, out.Finished = nil, 0
	// A copy's queued workloads are new ones: renamed, not stored yet.
	if len(g.Queued) > 0 {
		out.Queued = make([]QueuedWorkload, len(g.Queued))
		for j, q := range g.Queued {
			obj := q.Object.DeepCopy()
			obj.SetName(r.rename(obj.GetName()))
			obj.SetUID("")
			obj.SetResourceVersion("")
			obj.SetCreationTimestamp(metav1.Time{})
			members := make([]string, len(q.Members))
			for k, name := range q.Members {
				members[k] = r.rename(name)
			}
			out.Queued[j] = QueuedWorkload{Object: obj, Queue: q.Queue, Members: members}
		}
	}
	if len(g.Refill) > 0 {
		out.Refill = make(map[string]bool, len(g.Refill))
		for name, v := range g.Refill {
			out.Refill[r.rename(name)] = v
		}
	}
	return &out
}

type renamer struct {
	suffix string
	names  []string
	// keys are CopyLabels().
	keys []string
}

// rename is v in the copy.
func (r renamer) rename(v string) string {
	for _, n := range r.names {
		if n == "" {
			continue
		}
		if v == n || strings.HasPrefix(v, n+"-") {
			return n + r.suffix + v[len(n):]
		}
	}
	return v + r.suffix
}

func (r renamer) pod(m *corev1.Pod, g *Gang) *corev1.Pod {
	c := m.DeepCopy()
	c.Name = r.rename(m.Name)
	c.GenerateName = ""
	c.UID, c.ResourceVersion = "", ""
	c.DeletionTimestamp = nil
	c.Spec.NodeName = ""
	c.Spec.SchedulingGates = nil
	c.Status = corev1.PodStatus{Phase: corev1.PodPending}
	c.Labels = r.labels(m.Labels)
	if GroupNameOf(m, g.Source) != "" {
		SetGroupName(c, g.Source, r.rename(GroupNameOf(m, g.Source)))
	}
	if a := c.Spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			r.terms(pa.RequiredDuringSchedulingIgnoredDuringExecution)
			r.weighted(pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if pa := a.PodAntiAffinity; pa != nil {
			r.terms(pa.RequiredDuringSchedulingIgnoredDuringExecution)
			r.weighted(pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	for k := range c.Spec.TopologySpreadConstraints {
		r.selector(c.Spec.TopologySpreadConstraints[k].LabelSelector)
	}
	return c
}

func (r renamer) labels(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		if slices.Contains(r.keys, k) {
			v = r.rename(v)
		}
		out[k] = v
	}
	return out
}

func (r renamer) terms(ts []corev1.PodAffinityTerm) {
	for i := range ts {
		r.selector(ts[i].LabelSelector)
	}
}

func (r renamer) weighted(ts []corev1.WeightedPodAffinityTerm) {
	for i := range ts {
		r.selector(ts[i].PodAffinityTerm.LabelSelector)
	}
}

func (r renamer) selector(s *metav1.LabelSelector) {
	if s == nil {
		return
	}
	s.MatchLabels = r.labels(s.MatchLabels)
	for i := range s.MatchExpressions {
		e := &s.MatchExpressions[i]
		if !slices.Contains(r.keys, e.Key) {
			continue
		}
		for j := range e.Values {
			e.Values[j] = r.rename(e.Values[j])
		}
	}
}
