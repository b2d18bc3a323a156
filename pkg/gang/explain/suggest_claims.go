package explain

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// SuggestCreateClaim: a PersistentVolumeClaim the blocked member mounts
// does not exist; kube-scheduler's volume plugins reject the pod at PreFilter
// until it does (persistentvolumeclaim "NAME" not found).
const SuggestCreateClaim SuggestionKind = "CreateClaim"

// missingClaims names the PersistentVolumeClaims the blocked member's
// spec.volumes name that the snapshot does not hold, as kube-scheduler's
// volume plugins find them at PreFilter (VolumeRestrictions'
// readWriteOncePodPreFilter, VolumeBinding's podHasPVCs: persistentvolumeclaim
// "NAME" not found, UnschedulableAndUnresolvable). Generic ephemeral volumes are left out: their claim is
// the ephemeral volume controller's to create. Not verified: a claim's
// binding depends on a StorageClass and volumes the change does not make.
func (x *explainer) missingClaims(p *gang.Placement, e *Explanation) *Suggestion {
	pod := e.Pod
	if p.Blocker != nil {
		pod = p.Blocker.Pod
	}
	if pod == nil || x.storageUnreadable(pod.Namespace) {
		return nil
	}
	have := map[string]bool{}
	for _, c := range x.snap.PersistentVolumeClaims {
		if c.Namespace == pod.Namespace {
			have[c.Name] = true
		}
	}
	var claims, volumes []string
	for _, v := range pod.Spec.Volumes {
		c := v.PersistentVolumeClaim
		if c == nil || have[c.ClaimName] {
			continue
		}
		claims = append(claims, pod.Namespace+"/"+c.ClaimName)
		volumes = append(volumes, v.Name)
	}
	if len(claims) == 0 {
		return nil
	}
	return &Suggestion{Kind: SuggestCreateClaim, Claims: claims, Message: fmt.Sprintf(
		"create PersistentVolumeClaim %s (volume %s of the pod): until it exists, kube-scheduler's volume plugins reject the pod on every node at PreFilter",
		strings.Join(claims, ", "), strings.Join(volumes, ", "))}
}

// storageUnreadable reports a snapshot that could not list the claims of
// namespace: a claim it lacks may exist.
func (x *explainer) storageUnreadable(namespace string) bool {
	return !x.snap.CanRead(schedule.KindPersistentVolumeClaims, namespace)
}

// leading are the suggestions that name the blocker the data shows, ahead
// of any shortfall: a claim to create, a node whose device plugin stopped
// reporting, a toleration of the member's own that misses the taint by
// its value.
func (x *explainer) leading(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) ([]Suggestion, error) {
	var out []Suggestion
	if s := x.missingClaims(p, e); s != nil {
		out = append(out, *s)
	}
	if s := x.hostPorts(p, e); s != nil {
		out = append(out, *s)
	}
	s, err := x.devicePlugin(ctx, g, p, e)
	if err != nil {
		return nil, err
	}
	if s != nil {
		out = append(out, *s)
	}
	if e.Pod != nil && len(nearMisses(e.Pod, taintsOn(e))) > 0 {
		s, err := x.tolerate(ctx, g, p, e)
		if err != nil {
			return nil, err
		}
		if s != nil && s.NearMiss {
			out = append(out, *s)
		}
	}
	return out, nil
}

// taintsOn are the taints the explained pod does not tolerate on the nodes
// of the table, the first of each node.
func taintsOn(e *Explanation) []corev1.Taint {
	var out []corev1.Taint
	for i := range e.Nodes {
		if t := e.Nodes[i].Taint; t != nil {
			out = append(out, *t)
		}
	}
	return out
}
