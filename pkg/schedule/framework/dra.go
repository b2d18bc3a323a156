package framework

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

// DRAKinds are the resource.k8s.io resources the DynamicResources plugin
// reads, as a live snapshot names them when it cannot list one
// (Snapshot.Unreadable).
var DRAKinds = []string{
	"resourceslices.resource.k8s.io",
	"deviceclasses.resource.k8s.io",
	"resourceclaims.resource.k8s.io",
	"resourceclaimtemplates.resource.k8s.io",
	"devicetaintrules.resource.k8s.io",
}

// DRA is what the DynamicResources plugin reads: the snapshot's
// ResourceSlices, DeviceClasses, ResourceClaims and ResourceClaimTemplates,
// plus the claims a working copy allocated for the pods it reserved
// (kube-scheduler's claim tracker with its in-flight allocations). Fork
// copies the assumed claims; the snapshot's objects are shared and never
// changed.
type DRA struct {
	base *draBase
	// assumed holds the claims this working copy allocated or reserved,
	// by namespace/name; a fork gets a copy of the map.
	assumed map[string]*resourcev1.ResourceClaim
	// state is every device held, by the snapshot's claims and the assumed
	// ones; shared with base until the first assumption (copy on write).
	state      structured.AllocatedState
	stateOwned bool
}

// draBase is the part of DRA taken from the snapshot once.
type draBase struct {
	slices []*resourcev1.ResourceSlice
	// onNode indexes the devices of one node's slices; nodeLocal says
	// every slice is one node's and no device may be allocated more than
	// once (no consumable capacity), so a node's allocation depends on that
	// node's devices alone (Memo).
	onNode    map[string][]structured.DeviceID
	nodeLocal bool
	memo      sync.Map // memoKey -> MemoResult
	// slicesOn are each node's own slices; shared the others (allNodes or
	// a node selector).
	slicesOn   map[string][]*resourcev1.ResourceSlice
	shared     []*resourcev1.ResourceSlice
	classes    map[string]*resourcev1.DeviceClass
	claims     map[string]*resourcev1.ResourceClaim
	templates  map[string]*resourcev1.ResourceClaimTemplate
	state      structured.AllocatedState
	unreadable []string
	// extended maps extended resource names to the DeviceClass that backs
	// them (DRAExtendedResource), as kube-scheduler's resolver
	// (k8s.io/dynamic-resource-allocation's ExtendedResourceCache, an
	// informer handler this pure package cannot import) maps them.
	extended map[corev1.ResourceName]*resourcev1.DeviceClass
	// extendedClaims are the claims kube-scheduler made for pods' extended
	// resources, by the UID of the pod that owns them.
	extendedClaims map[string]*resourcev1.ResourceClaim
	// classDevices caches, by class and node, the devices the node can use
	// that the class selects (ClassDevices); celCache compiles the
	// classes' selectors for it.
	classDevices sync.Map
	celCache     *cel.Cache
	// rules are the DeviceTaintRules the slices were tainted with
	// (TaintDevices), for slices added later (WithSlices).
	rules []*resourcev1.DeviceTaintRule
}

// NewDRA indexes the snapshot's resource.k8s.io objects. unreadable names
// the DRAKinds a live snapshot could not list: pods with claims are then
// not evaluated.
func NewDRA(resourceSlices []*resourcev1.ResourceSlice, classes []*resourcev1.DeviceClass, claims []*resourcev1.ResourceClaim, templates []*resourcev1.ResourceClaimTemplate, unreadable []string) *DRA {
	b := &draBase{
		slices:    resourceSlices,
		onNode:    map[string][]structured.DeviceID{},
		slicesOn:  map[string][]*resourcev1.ResourceSlice{},
		nodeLocal: true,
		classes:   make(map[string]*resourcev1.DeviceClass, len(classes)),
		claims:    make(map[string]*resourcev1.ResourceClaim, len(claims)),
		templates: make(map[string]*resourcev1.ResourceClaimTemplate, len(templates)),
		extended:  map[corev1.ResourceName]*resourcev1.DeviceClass{},
		celCache:  cel.NewCache(10, cel.Features{EnableConsumableCapacity: true}),
		state: structured.AllocatedState{
			AllocatedDevices:         sets.New[structured.DeviceID](),
			AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
			AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
		},
	}
	for _, u := range unreadable {
		if slices.Contains(DRAKinds, u) {
			b.unreadable = append(b.unreadable, u)
		}
	}
	for _, rs := range resourceSlices {
		if rs.Spec.NodeName == nil || *rs.Spec.NodeName == "" {
			b.nodeLocal = false
			b.shared = append(b.shared, rs)
			continue
		}
		b.slicesOn[*rs.Spec.NodeName] = append(b.slicesOn[*rs.Spec.NodeName], rs)
		for i := range rs.Spec.Devices {
			if ptr.Deref(rs.Spec.Devices[i].AllowMultipleAllocations, false) {
				b.nodeLocal = false
			}
			b.onNode[*rs.Spec.NodeName] = append(b.onNode[*rs.Spec.NodeName], structured.MakeDeviceID(rs.Spec.Driver, rs.Spec.Pool.Name, rs.Spec.Devices[i].Name))
		}
	}
	for _, c := range classes {
		b.classes[c.Name] = c
		b.addExtended(c)
	}
	for _, c := range claims {
		b.claims[c.Namespace+"/"+c.Name] = c
		addAllocatedDevices(b.state, c)
		if c.Annotations[resourcev1.ExtendedResourceClaimAnnotation] == "true" {
			if ref := metav1.GetControllerOfNoCopy(c); ref != nil && ref.Kind == "Pod" {
				if b.extendedClaims == nil {
					b.extendedClaims = map[string]*resourcev1.ResourceClaim{}
				}
				b.extendedClaims[string(ref.UID)] = c
			}
		}
	}
	for _, t := range templates {
		b.templates[t.Namespace+"/"+t.Name] = t
	}
	return &DRA{base: b, state: b.state}
}

// addAllocatedDevices records the devices an allocated claim holds, as
// kube-scheduler's allocatedDevices does with DRAConsumableCapacity on (the
// v1.37 default): a device allocated with admin access holds nothing, a
// shared one (shareID) holds its share and the capacity it consumes, any
// other the whole device.
func addAllocatedDevices(state structured.AllocatedState, claim *resourcev1.ResourceClaim) {
	if claim.Status.Allocation == nil {
		return
	}
	for _, r := range claim.Status.Allocation.Devices.Results {
		if ptr.Deref(r.AdminAccess, false) {
			continue
		}
		id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
		if r.ShareID != nil {
			state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
			if r.ConsumedCapacity != nil {
				state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
			}
			continue
		}
		state.AllocatedDevices.Insert(id)
	}
}

// TaintDevices returns the slices with the taints of rules added to the
// devices they select, as kube-scheduler's ListWithDeviceTaintRules returns
// them (k8s.io/dynamic-resource-allocation's resourceslice tracker,
// applyPatches: a rule without a selector selects nothing, an empty one
// every device; driver, pool and device narrow it). Slices no rule touches
// are returned as they are; the others are copies.
func TaintDevices(resourceSlices []*resourcev1.ResourceSlice, rules []*resourcev1.DeviceTaintRule) []*resourcev1.ResourceSlice {
	if len(rules) == 0 {
		return resourceSlices
	}
	rules = slices.Clone(rules)
	slices.SortFunc(rules, func(a, b *resourcev1.DeviceTaintRule) int { return cmp.Compare(a.Name, b.Name) })
	out := make([]*resourcev1.ResourceSlice, len(resourceSlices))
	for i, rs := range resourceSlices {
		patched := rs
		for _, rule := range rules {
			sel := rule.Spec.DeviceSelector
			if sel == nil || sel.Driver != nil && *sel.Driver != rs.Spec.Driver || sel.Pool != nil && *sel.Pool != rs.Spec.Pool.Name {
				continue
			}
			for d := range rs.Spec.Devices {
				if sel.Device != nil && *sel.Device != rs.Spec.Devices[d].Name {
					continue
				}
				if patched == rs {
					patched = rs.DeepCopy()
				}
				patched.Spec.Devices[d].Taints = append(patched.Spec.Devices[d].Taints, rule.Spec.Taint)
			}
		}
		out[i] = patched
	}
	return out
}

// addExtended records the extended resource names class backs, as
// ExtendedResourceCache.updateResourceName2class does: its
// extendedResourceName, unless another class names it too and is newer
// (equally new: has the lower name), and always
// deviceclass.resource.kubernetes.io/<class> (unique by validation). The
// outcome does not depend on the order classes come in.
func (b *draBase) addExtended(class *resourcev1.DeviceClass) {
	if name := class.Spec.ExtendedResourceName; name != nil {
		other := b.extended[corev1.ResourceName(*name)]
		keep := other != nil && (other.CreationTimestamp.After(class.CreationTimestamp.Time) ||
			other.CreationTimestamp.Equal(&class.CreationTimestamp) && other.Name <= class.Name)
		if !keep {
			b.extended[corev1.ResourceName(*name)] = class
		}
	}
	b.extended[corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix+class.Name)] = class
}

// MemoResult is a Filter outcome kept by Memo: the status, and on success
// the allocation of each claim.
type MemoResult struct {
	Failed      string // the unschedulable reason, "" on success
	Allocations []resourcev1.AllocationResult
}

type memoKey struct{ claims, node, held string }

// NodeKey returns what an allocation on node depends on besides the
// claims, when that is the node's own devices alone (every slice is one
// node's, no device is shared): the node and which of its devices are held.
// ok is false when allocations cannot be remembered.
func (d *DRA) NodeKey(node string) (key string, ok bool) {
	if !d.base.nodeLocal {
		return "", false
	}
	var b []byte
	for i, id := range d.base.onNode[node] {
		if d.state.AllocatedDevices.Has(id) {
			b = strconv.AppendInt(b, int64(i), 36)
			b = append(b, ',')
		}
	}
	return string(b), true
}

// Memo returns the remembered Filter outcome for claims (a key of their
// specs) on node in the state nodeKey names; forks of one snapshot share
// what is remembered, since the key holds everything the outcome depends on.
func (d *DRA) Memo(claims, node, nodeKey string) (MemoResult, bool) {
	v, ok := d.base.memo.Load(memoKey{claims, node, nodeKey})
	if !ok {
		return MemoResult{}, false
	}
	return v.(MemoResult), true
}

// Remember keeps a Filter outcome for Memo.
func (d *DRA) Remember(claims, node, nodeKey string, r MemoResult) {
	d.base.memo.Store(memoKey{claims, node, nodeKey}, r)
}

// Fork returns a working copy whose assumptions are its own.
func (d *DRA) Fork() *DRA {
	if d == nil {
		return nil
	}
	// Both copies now share state: the next Assume of either copies it.
	d.stateOwned = false
	return &DRA{base: d.base, assumed: maps.Clone(d.assumed), state: d.state}
}

// Empty reports whether the snapshot holds no resource.k8s.io object at all.
func (d *DRA) Empty() bool {
	b := d.base
	return len(b.slices) == 0 && len(b.classes) == 0 && len(b.claims) == 0 && len(b.templates) == 0 && len(d.assumed) == 0
}

// Unreadable names the resource.k8s.io kinds the snapshot could not list.
func (d *DRA) Unreadable() []string { return d.base.unreadable }

// ResourceSlices returns every ResourceSlice.
func (d *DRA) ResourceSlices() []*resourcev1.ResourceSlice { return d.base.slices }

// SlicesFor returns the slices whose devices node can use: its own, and the
// pools for every node or for nodes its selector matches.
func (d *DRA) SlicesFor(node *corev1.Node) []*resourcev1.ResourceSlice {
	out := d.base.slicesOn[node.Name]
	for _, rs := range d.base.shared {
		switch {
		case ptr.Deref(rs.Spec.AllNodes, false):
		case rs.Spec.NodeSelector != nil:
			sel, err := nodeaffinity.NewNodeSelector(rs.Spec.NodeSelector)
			if err != nil || !sel.Match(node) {
				continue
			}
		default:
			continue
		}
		out = append(slices.Clip(out), rs)
	}
	return out
}

// AllocatedState returns the devices every allocated claim holds, assumed
// ones included. The allocator only reads it.
func (d *DRA) AllocatedState() structured.AllocatedState { return d.state }

// Claim returns a claim: the working copy's assumed version if there is one.
func (d *DRA) Claim(namespace, name string) (*resourcev1.ResourceClaim, bool) {
	key := namespace + "/" + name
	if c, ok := d.assumed[key]; ok {
		return c, true
	}
	c, ok := d.base.claims[key]
	return c, ok
}

// ClaimTemplate returns a ResourceClaimTemplate.
func (d *DRA) ClaimTemplate(namespace, name string) (*resourcev1.ResourceClaimTemplate, bool) {
	t, ok := d.base.templates[namespace+"/"+name]
	return t, ok
}

// Get returns a DeviceClass, or a NotFound error (structured.DeviceClassLister).
func (d *DRA) Get(name string) (*resourcev1.DeviceClass, error) {
	if c, ok := d.base.classes[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(resourcev1.Resource("deviceclasses"), name)
}

// List returns every DeviceClass (structured.DeviceClassLister).
func (d *DRA) List() ([]*resourcev1.DeviceClass, error) {
	return slices.Collect(maps.Values(d.base.classes)), nil
}

var _ structured.DeviceClassLister = &DRA{}

// Assume records claim, with the allocation a Reserve made and pod added to
// its reservedFor, in this working copy: later cycles see its devices held,
// and the claim allocated where they are.
func (d *DRA) Assume(claim *resourcev1.ResourceClaim, pod *corev1.Pod) {
	c := claim.DeepCopy()
	if !ReservedFor(c, pod) {
		c.Status.ReservedFor = append(c.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID})
	}
	d.record(c)
}

// record keeps c as this working copy's version of its claim, holding
// its devices.
func (d *DRA) record(c *resourcev1.ResourceClaim) {
	if d.assumed == nil {
		d.assumed = map[string]*resourcev1.ResourceClaim{}
	}
	key := c.Namespace + "/" + c.Name
	prev, had := d.assumed[key]
	if !had {
		prev = d.base.claims[key]
	}
	d.assumed[key] = c
	if prev != nil && prev.Status.Allocation != nil {
		return // already holding its devices
	}
	if !d.stateOwned {
		d.state = structured.AllocatedState{
			AllocatedDevices:         d.state.AllocatedDevices.Clone(),
			AllocatedSharedDeviceIDs: d.state.AllocatedSharedDeviceIDs.Clone(),
			AggregatedCapacity:       d.state.AggregatedCapacity.Clone(),
		}
		d.stateOwned = true
	}
	addAllocatedDevices(d.state, c)
}

// AssumedFor returns the claims this working copy allocated or reserved for
// pod, by namespace/name order.
func (d *DRA) AssumedFor(pod *corev1.Pod) []*resourcev1.ResourceClaim {
	var out []*resourcev1.ResourceClaim
	for _, c := range d.assumed {
		if c.Namespace == pod.Namespace && ReservedFor(c, pod) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *resourcev1.ResourceClaim) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// ReservedFor is resourceclaim.IsReservedForPod by name as well as UID:
// pods from manifests have no UID yet.
func ReservedFor(claim *resourcev1.ResourceClaim, pod *corev1.Pod) bool {
	return slices.ContainsFunc(claim.Status.ReservedFor, func(r resourcev1.ResourceClaimConsumerReference) bool {
		return r.Resource == "pods" && r.Name == pod.Name && r.UID == pod.UID
	})
}

// SetTaintRules records the DeviceTaintRules the slices were tainted with,
// so that slices added by WithSlices get them too.
func (d *DRA) SetTaintRules(rules []*resourcev1.DeviceTaintRule) { d.base.rules = rules }

// WithSlices returns a working copy with more ResourceSlices (those of
// nodes a what-if adds), tainted by the same rules, and this copy's
// assumed claims.
func (d *DRA) WithSlices(extra []*resourcev1.ResourceSlice) *DRA {
	if len(extra) == 0 {
		return d.Fork()
	}
	b := d.base
	classes := slices.Collect(maps.Values(b.classes))
	claims := slices.Collect(maps.Values(b.claims))
	templates := slices.Collect(maps.Values(b.templates))
	unreadable := slices.Clone(b.unreadable)
	out := NewDRA(append(slices.Clip(b.slices), TaintDevices(extra, b.rules)...), classes, claims, templates, unreadable)
	out.base.rules = b.rules
	for _, key := range slices.Sorted(maps.Keys(d.assumed)) {
		out.record(d.assumed[key])
	}
	return out
}

// ExtendedResourceClass returns the DeviceClass that backs the extended
// resource name (its spec.extendedResourceName, or the implicit
// deviceclass.resource.kubernetes.io/<class>), nil when none does: the
// DeviceClassResolver kube-scheduler v1.37 consults with DRAExtendedResource
// (GA, locked on).
func (d *DRA) ExtendedResourceClass(name corev1.ResourceName) *resourcev1.DeviceClass {
	if d == nil || len(d.base.classes) == 0 {
		return nil
	}
	// Only valid extended resource names are in the map (API validation
	// of extendedResourceName, the implicit prefix).
	return d.base.extended[name]
}

// MayBack reports whether a DeviceClass backs the extended resource name or
// may back it, for the snapshot cannot show: ExtendedResourceClass finds
// one, or the Dynamic Resource Allocation state is unknown (kinds the live
// read could not list, or a snapshot without any resource.k8s.io object) and
// name is deviceclass.resource.kubernetes.io/<class> (only a class provides
// those) or an extended resource while the DeviceClasses could not be
// listed. On a node with no allocatable of such a resource NodeResourcesFit
// leaves it to DynamicResources, which says it is not evaluated there
// (docs/design.md#dynamic-resource-allocation).
func (d *DRA) MayBack(name corev1.ResourceName) bool {
	if d == nil {
		return false
	}
	if d.ExtendedResourceClass(name) != nil {
		return true
	}
	if !d.Empty() && len(d.base.unreadable) == 0 {
		return false
	}
	return strings.HasPrefix(string(name), resourcev1.ResourceDeviceClassPrefix) ||
		IsExtendedResourceName(name) && slices.Contains(d.base.unreadable, "deviceclasses.resource.k8s.io")
}

// IsDRAExtendedResourceName reports a name a DeviceClass may back: an
// extended resource, or deviceclass.resource.kubernetes.io/<class>.
func IsDRAExtendedResourceName(name corev1.ResourceName) bool {
	return IsExtendedResourceName(name) || strings.HasPrefix(string(name), resourcev1.ResourceDeviceClassPrefix)
}

// ExtendedRequests returns the pod's requests (init containers, sidecars,
// overhead and pod-level requests counted as kube-scheduler's
// resourcehelper.PodRequests counts them) of every name a DeviceClass may
// back, when at least one of them is backed; nil otherwise, cheaply.
func (d *DRA) ExtendedRequests(pod *corev1.Pod) map[corev1.ResourceName]int64 {
	if !d.backsAny(pod) {
		return nil
	}
	var out map[corev1.ResourceName]int64
	for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if v := q.Value(); v > 0 && IsDRAExtendedResourceName(name) {
			if out == nil {
				out = map[corev1.ResourceName]int64{}
			}
			out[name] = v
		}
	}
	return out
}

// backsAny reports whether some request of pod names a resource a
// DeviceClass backs.
func (d *DRA) backsAny(pod *corev1.Pod) bool {
	if d == nil || len(d.base.classes) == 0 {
		return false
	}
	backed := func(l corev1.ResourceList) bool {
		for name, q := range l {
			if !q.IsZero() && d.ExtendedResourceClass(name) != nil {
				return true
			}
		}
		return false
	}
	if r := pod.Spec.Resources; r != nil && backed(r.Requests) {
		return true
	}
	if backed(pod.Spec.Overhead) {
		return true
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if backed(cs[i].Resources.Requests) {
				return true
			}
		}
	}
	return false
}

// ExtendedResourceClaim returns the claim kube-scheduler made for pod's
// extended resources in an earlier cycle (annotated
// resource.kubernetes.io/extended-resource-claim, the pod its controller),
// as findExtendedResourceClaim finds it.
func (d *DRA) ExtendedResourceClaim(pod *corev1.Pod) *resourcev1.ResourceClaim {
	if d == nil || pod.UID == "" {
		return nil
	}
	c := d.base.extendedClaims[string(pod.UID)]
	if c == nil || c.Namespace != pod.Namespace || metav1.GetControllerOfNoCopy(c).Name != pod.Name {
		return nil
	}
	if a, ok := d.assumed[c.Namespace+"/"+c.Name]; ok {
		return a
	}
	return c
}

// ClassDevices returns how many devices node can use (its slices and the
// pools that reach it) class selects, and how many of those are allocated
// in this working copy: kube-scheduler's calculateDRAResourceTotals, which
// NodeResourcesFit and BalancedAllocation score an extended resource backed
// by DRA with. A selector that fails to evaluate selects nothing.
func (d *DRA) ClassDevices(ctx context.Context, node *corev1.Node, class *resourcev1.DeviceClass) (total, allocated int64) {
	key := class.Name + "\x00" + node.Name
	var ids []structured.DeviceID
	if v, ok := d.base.classDevices.Load(key); ok {
		ids = v.([]structured.DeviceID)
	} else {
		for _, rs := range d.SlicesFor(node) {
			for i := range rs.Spec.Devices {
				dev := &rs.Spec.Devices[i]
				if d.selects(ctx, class, rs.Spec.Driver, dev) {
					ids = append(ids, structured.MakeDeviceID(rs.Spec.Driver, rs.Spec.Pool.Name, dev.Name))
				}
			}
		}
		d.base.classDevices.Store(key, ids)
	}
	for _, id := range ids {
		if structured.IsDeviceAllocated(id, &d.state) {
			allocated++
		}
	}
	return int64(len(ids)), allocated
}

// selects reports whether every CEL selector of class matches the device.
func (d *DRA) selects(ctx context.Context, class *resourcev1.DeviceClass, driver string, dev *resourcev1.Device) bool {
	return SelectorsMatch(ctx, d.base.celCache, class.Spec.Selectors, driver, dev)
}

// SelectorsMatch reports whether every CEL selector matches the device, as
// the allocator evaluates them (an expression that fails to evaluate
// selects nothing), compiled through cache.
func SelectorsMatch(ctx context.Context, cache *cel.Cache, selectors []resourcev1.DeviceSelector, driver string, dev *resourcev1.Device) bool {
	for _, sel := range selectors {
		if sel.CEL == nil {
			continue
		}
		ok, _, err := cache.GetOrCompile(sel.CEL.Expression).DeviceMatches(ctx, cel.Device{Driver: driver, Attributes: dev.Attributes, Capacity: dev.Capacity})
		if err != nil || !ok {
			return false
		}
	}
	return true
}

// UsesDevices reports whether placing pod allocates or reserves devices:
// it has resource claims, or requests an extended resource a DeviceClass
// backs (on nodes without device-plugin allocatable for it).
func (d *DRA) UsesDevices(pod *corev1.Pod) bool {
	return len(pod.Spec.ResourceClaims) > 0 || d.backsAny(pod)
}

// String names the DRA state for debugging.
func (d *DRA) String() string {
	return fmt.Sprintf("DRA{%d slices, %d classes, %d claims, %d assumed}", len(d.base.slices), len(d.base.classes), len(d.base.claims), len(d.assumed))
}
