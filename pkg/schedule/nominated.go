package schedule

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// nominator holds the pods kube-scheduler's queue would hold as nominated:
// pending pods of this profile with status.nominatedNodeName set (by an
// earlier preemption), by node. Filter counts those of at least the
// scheduled pod's priority as if they ran there (RunFilterPluginsWithNominatedPods).
type nominator struct {
	byNode map[string][]*framework.PodInfo
}

// newNominator finds the nominated pods among the snapshot's pods.
func newNominator(pods []*corev1.Pod, schedulerName string) *nominator {
	n := &nominator{byNode: map[string][]*framework.PodInfo{}}
	for _, p := range pods {
		name := p.Spec.SchedulerName
		if name == "" {
			name = DefaultSchedulerName
		}
		if p.Spec.NodeName != "" || p.Status.NominatedNodeName == "" || p.DeletionTimestamp != nil || name != schedulerName {
			continue
		}
		n.byNode[p.Status.NominatedNodeName] = append(n.byNode[p.Status.NominatedNodeName], framework.NewPodInfo(p))
	}
	return n
}

// clone copies the index; the lists are replaced, never changed in place.
func (n *nominator) clone() *nominator {
	out := &nominator{byNode: make(map[string][]*framework.PodInfo, len(n.byNode))}
	for k, v := range n.byNode {
		out.byNode[k] = v
	}
	return out
}

// forget drops pod's nomination: a reserved pod is assumed, and
// kube-scheduler then deletes its nomination.
func (n *nominator) forget(pod *corev1.Pod) {
	for node, list := range n.byNode {
		if i := slices.IndexFunc(list, func(pi *framework.PodInfo) bool { return samePod(pi.Pod, pod) }); i >= 0 {
			out := slices.Delete(slices.Clone(list), i, i+1)
			if len(out) == 0 {
				delete(n.byNode, node)
			} else {
				n.byNode[node] = out
			}
		}
	}
}

func samePod(a, b *corev1.Pod) bool {
	if a.UID != "" || b.UID != "" {
		return a.UID == b.UID
	}
	return a.Namespace == b.Namespace && a.Name == b.Name
}

// yieldsTo lists the pods nominated to node that pod must yield to: at
// least its priority, and not pod itself.
func (n *nominator) yieldsTo(pod *corev1.Pod, node string) []*framework.PodInfo {
	var out []*framework.PodInfo
	for _, pi := range n.byNode[node] {
		if corev1helpers.PodPriority(pi.Pod) >= corev1helpers.PodPriority(pod) && !samePod(pi.Pod, pod) {
			out = append(out, pi)
		}
	}
	return out
}

// any reports whether pod yields to a nominated pod anywhere.
func (n *nominator) any(pod *corev1.Pod) bool {
	for node := range n.byNode {
		if len(n.yieldsTo(pod, node)) > 0 {
			return true
		}
	}
	return false
}

// runFilterWithNominated is kube-scheduler's RunFilterPluginsWithNominatedPods:
// with pods nominated to the node that pod yields to, the filters run once
// with them added to the node and the state, and, if that passes, once
// more without them; the node must pass both.
func (fw *frameworkImpl) runFilterWithNominated(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo, all bool) (*framework.Status, []PluginVerdict) {
	var nominated []*framework.PodInfo
	if fw.nominator != nil {
		nominated = fw.nominator.yieldsTo(pod, ni.Name())
	}
	if len(nominated) == 0 {
		return fw.runFilterPlugins(ctx, state, pod, ni, all)
	}
	withPods, withState := ni.Clone(), state.Clone()
	for _, pi := range nominated {
		withPods.AddPodInfo(pi)
		if st := fw.runPreFilterExtensionAddPod(ctx, withState, pod, pi, withPods); !st.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("adding nominated pod %s/%s: %w", pi.Pod.Namespace, pi.Pod.Name, st.AsError())), nil
		}
	}
	st, verdicts := fw.runFilterPlugins(ctx, withState, pod, withPods, all)
	if !st.IsSuccess() {
		return st, verdicts
	}
	return fw.runFilterPlugins(ctx, state, pod, ni, all)
}
