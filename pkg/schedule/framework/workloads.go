package framework

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Workloads are the objects kube-scheduler derives the selector of
// PodTopologySpread's default constraints from: the Services,
// ReplicationControllers, ReplicaSets and StatefulSets of the snapshot.
type Workloads struct {
	Services               []*corev1.Service
	ReplicationControllers []*corev1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
	// Unreadable, when set, names the kinds above a live read could not
	// list in a namespace (schedule.Snapshot.UnreadableIn): there a pod's
	// default selector is not known.
	Unreadable func(namespace string) []string
}

var (
	rcKind = corev1.SchemeGroupVersion.WithKind("ReplicationController")
	rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	ssKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
)

// DefaultSelector is kube-scheduler's helper.DefaultSelector over plain
// objects: the selectors of the pod's namespace's Services that select it,
// merged with that of its controller when the controller is a
// ReplicationController, ReplicaSet or StatefulSet found by name. An empty
// selector means no default constraint applies.
func (w Workloads) DefaultSelector(pod *corev1.Pod) labels.Selector {
	labelSet := labels.Set{}
	for _, s := range w.Services {
		// A nil service selector selects nothing, not everything.
		if s.Namespace != pod.Namespace || s.Spec.Selector == nil {
			continue
		}
		if labels.Set(s.Spec.Selector).AsSelectorPreValidated().Matches(labels.Set(pod.Labels)) {
			labelSet = labels.Merge(labelSet, s.Spec.Selector)
		}
	}
	selector := labelSet.AsSelector()

	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return selector
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return selector
	}
	switch gv.WithKind(owner.Kind) {
	case rcKind:
		for _, rc := range w.ReplicationControllers {
			if rc.Namespace == pod.Namespace && rc.Name == owner.Name {
				return labels.Merge(labelSet, rc.Spec.Selector).AsSelector()
			}
		}
	case rsKind:
		for _, rs := range w.ReplicaSets {
			if rs.Namespace == pod.Namespace && rs.Name == owner.Name {
				return addRequirements(selector, rs.Spec.Selector)
			}
		}
	case ssKind:
		for _, ss := range w.StatefulSets {
			if ss.Namespace == pod.Namespace && ss.Name == owner.Name {
				return addRequirements(selector, ss.Spec.Selector)
			}
		}
	}
	return selector
}

// DefaultSelectsByController reports whether DefaultSelector reads a pod's
// controller ref (a ReplicationController, ReplicaSet or StatefulSet): for
// any other controller two pods with equal labels get equal selectors.
func DefaultSelectsByController(owner *metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return false
	}
	switch gv.WithKind(owner.Kind) {
	case rcKind, rsKind, ssKind:
		return true
	}
	return false
}

// addRequirements ANDs a controller's label selector into selector; a
// selector that does not parse adds nothing, as in kube-scheduler.
func addRequirements(selector labels.Selector, ls *metav1.LabelSelector) labels.Selector {
	other, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return selector
	}
	if r, ok := other.Requirements(); ok {
		return selector.Add(r...)
	}
	return selector
}

// DefaultSelector is the snapshot's Workloads.DefaultSelector, which makes
// the Handle a podtopologyspread.DefaultSelectorLister.
func (h *SnapshotHandle) DefaultSelector(pod *corev1.Pod) labels.Selector {
	return h.workloads.DefaultSelector(pod)
}

// UnreadableSelectorKinds names the kinds default selectors come from that
// the snapshot could not list in namespace, which makes the Handle a
// podtopologyspread.SelectorKindsReader.
func (h *SnapshotHandle) UnreadableSelectorKinds(namespace string) []string {
	if h.workloads.Unreadable == nil {
		return nil
	}
	return h.workloads.Unreadable(namespace)
}
