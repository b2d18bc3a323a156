package schedule

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// An ObjectKind is a kind of a gang system's objects that a snapshot
// carries as read (unstructured, so that versions and fields this build
// does not know survive a round trip): its group objects (PodGroups,
// Snapshot.PodGroups) and the other objects its rules read (a queue, a
// quota: Snapshot.Objects). kube-scheduler's native PodGroup is
// registered here; each gang system's wing registers its own
// (docs/design.md#gang-systems), and the live and file readers read and
// keep every registered kind without knowing whose it is.
type ObjectKind struct {
	Group, Resource, Kind string
	// Namespaced: the kind lives in namespaces (a live read falls back to
	// listing it namespace by namespace); else it is cluster-scoped.
	Namespaced bool
}

// IsPodGroup reports whether the kind is a gang system's group object.
func (k ObjectKind) IsPodGroup() bool { return k.Kind == PodGroupKind }

// String names the kind's resource as kubectl does: queues.scheduling.volcano.sh.
func (k ObjectKind) String() string { return k.Resource + "." + k.Group }

// objectKinds are the registered kinds, by group, then resource. Wings
// register theirs in package init functions, which finish before any other
// code runs: reading needs no lock.
var objectKinds []ObjectKind

// RegisterObjectKind adds a kind of a gang system's objects; registering
// a group and resource twice panics.
func RegisterObjectKind(k ObjectKind) {
	for _, o := range objectKinds {
		if o.Group == k.Group && o.Resource == k.Resource {
			panic(fmt.Sprintf("object kind %s registered twice", k))
		}
	}
	objectKinds = append(objectKinds, k)
	slices.SortFunc(objectKinds, func(a, b ObjectKind) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource))
	})
}

// ObjectKinds are the registered kinds, by group, then resource.
func ObjectKinds() []ObjectKind { return objectKinds }

// ObjectKindOf is the registered kind of gvk (any version).
func ObjectKindOf(gvk schema.GroupVersionKind) (ObjectKind, bool) {
	for _, k := range objectKinds {
		if k.Group == gvk.Group && k.Kind == gvk.Kind {
			return k, true
		}
	}
	return ObjectKind{}, false
}

// IsPodGroup reports whether gvk is a PodGroup of one of the registered
// gang systems.
func IsPodGroup(gvk schema.GroupVersionKind) bool {
	k, ok := ObjectKindOf(gvk)
	return ok && k.IsPodGroup()
}

// IsSystemObject reports whether gvk is a registered kind of a gang
// system's objects other than its PodGroups (Snapshot.Objects).
func IsSystemObject(gvk schema.GroupVersionKind) bool {
	k, ok := ObjectKindOf(gvk)
	return ok && !k.IsPodGroup()
}

func init() {
	RegisterObjectKind(ObjectKind{Group: NativeGroup, Resource: "podgroups", Kind: PodGroupKind, Namespaced: true})
}
