package cmd

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/klog/v2"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// readGateManagers puts back, on the pending pods read live, the
// managedFields that say which field manager set each scheduling gate
// (gang.GateSetBy): the snapshot leaves managedFields out, so one metadata
// GET per gate, of the first pod that carries it, reads them (issue #27:
// who owns a gate). Offline, for what-ifs (whose manifests bring their own)
// and when nothing is gated it sends nothing; a failed read leaves the
// pods as they were, and the well-known owners still apply.
func (o *ExplainOptions) readGateManagers(ctx context.Context, g *gang.Gang, pod *corev1.Pod) {
	if o.Snapshot.Offline() || o.subject.Kind == SubjectFile {
		return
	}
	pods := []*corev1.Pod{pod}
	if g != nil {
		pods = g.Pending()
	}
	var client metadata.Interface
	done := map[string]bool{}
	for _, p := range pods {
		if p == nil || p.UID == "" {
			continue // not created yet
		}
		for _, gate := range p.Spec.SchedulingGates {
			if done[gate.Name] {
				continue
			}
			done[gate.Name] = true
			if client == nil {
				cfg, err := o.Snapshot.RESTConfig()
				if err != nil {
					return
				}
				if client, err = metadata.NewForConfig(cfg); err != nil {
					return
				}
			}
			m, err := client.Resource(corev1.SchemeGroupVersion.WithResource("pods")).Namespace(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil || m.UID != p.UID {
				klog.V(1).InfoS("reading who set a scheduling gate", "pod", p.Namespace+"/"+p.Name, "err", err)
				continue
			}
			p.ManagedFields = m.ManagedFields
		}
	}
}
