package framework

import (
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// AffinityTerm is a parsed pod (anti-)affinity term: which namespaces it
// looks in (a list, or a selector over namespace labels), which pods it
// selects, and over which node label it counts.
type AffinityTerm struct {
	Namespaces        sets.Set[string]
	Selector          labels.Selector
	TopologyKey       string
	NamespaceSelector labels.Selector
}

// Matches reports whether pod, in a namespace with nsLabels, is selected by the term.
func (t *AffinityTerm) Matches(pod *corev1.Pod, nsLabels labels.Set) bool {
	if t.Namespaces.Has(pod.Namespace) || t.NamespaceSelector.Matches(nsLabels) {
		return t.Selector.Matches(labels.Set(pod.Labels))
	}
	return false
}

// WeightedAffinityTerm is a preferred term with its weight.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

// PodInfo is a pod with what the plugins compute from it once: its parsed
// affinity terms and its resource requests.
type PodInfo struct {
	Pod                        *corev1.Pod
	RequiredAffinityTerms      []AffinityTerm
	RequiredAntiAffinityTerms  []AffinityTerm
	PreferredAffinityTerms     []WeightedAffinityTerm
	PreferredAntiAffinityTerms []WeightedAffinityTerm
	// Res is the pod's requests, computed once.
	Res PodResource
	// ParseError is set when an affinity term's selector does not parse; the
	// API server does not validate all of them, and kube-scheduler then
	// rejects the pod at PreFilter.
	ParseError error
}

// ForEquivalentPod returns a PodInfo for pod, whose spec, labels and
// namespace equal pi's: the parsed terms and requests are shared, not
// computed again (gang members reserved one after another).
func (pi *PodInfo) ForEquivalentPod(pod *corev1.Pod) *PodInfo {
	c := *pi
	c.Pod = pod
	return &c
}

// NewPodInfo parses a pod's affinity terms and computes its requests.
func NewPodInfo(pod *corev1.Pod) *PodInfo {
	pi := &PodInfo{}
	pi.initWith(pod, ComputePodResource(pod))
	return pi
}

// initWith sets pi to NewPodInfo(pod)'s value, res being pod's
// ComputePodResource, where pi is allocated with others (BuildNodeInfos
// allocates a node's together, and shares requests).
func (pi *PodInfo) initWith(pod *corev1.Pod, res PodResource) {
	*pi = PodInfo{Pod: pod, Res: res}
	var errs []error
	var prefAffinity, prefAnti []corev1.WeightedPodAffinityTerm
	var reqAffinity, reqAnti []corev1.PodAffinityTerm
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			reqAffinity = a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			prefAffinity = a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
		if a.PodAntiAffinity != nil {
			reqAnti = a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			prefAnti = a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
	}
	pi.RequiredAffinityTerms, errs = appendTerms(pod, reqAffinity, errs, "requiredAffinityTerms")
	pi.RequiredAntiAffinityTerms, errs = appendTerms(pod, reqAnti, errs, "requiredAntiAffinityTerms")
	pi.PreferredAffinityTerms, errs = appendWeightedTerms(pod, prefAffinity, errs, "preferredAffinityTerms")
	pi.PreferredAntiAffinityTerms, errs = appendWeightedTerms(pod, prefAnti, errs, "preferredAntiAffinityTerms")
	if len(errs) > 0 {
		pi.ParseError = errs[0]
	}
}

func appendTerms(pod *corev1.Pod, in []corev1.PodAffinityTerm, errs []error, what string) ([]AffinityTerm, []error) {
	if len(in) == 0 {
		return nil, errs
	}
	out := make([]AffinityTerm, 0, len(in))
	for i := range in {
		t, err := newAffinityTerm(pod, &in[i])
		if err != nil {
			return nil, append(errs, fmt.Errorf("%s: %w", what, err))
		}
		out = append(out, t)
	}
	return out, errs
}

func appendWeightedTerms(pod *corev1.Pod, in []corev1.WeightedPodAffinityTerm, errs []error, what string) ([]WeightedAffinityTerm, []error) {
	if len(in) == 0 {
		return nil, errs
	}
	out := make([]WeightedAffinityTerm, 0, len(in))
	for i := range in {
		t, err := newAffinityTerm(pod, &in[i].PodAffinityTerm)
		if err != nil {
			return nil, append(errs, fmt.Errorf("%s: %w", what, err))
		}
		out = append(out, WeightedAffinityTerm{AffinityTerm: t, Weight: in[i].Weight})
	}
	return out, errs
}

// newAffinityTerm parses a term. With neither namespaces nor a namespace
// selector the term looks in the pod's own namespace; an empty namespace
// selector selects every namespace.
func newAffinityTerm(pod *corev1.Pod, term *corev1.PodAffinityTerm) (AffinityTerm, error) {
	selector, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		return AffinityTerm{}, err
	}
	nsSelector, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return AffinityTerm{}, err
	}
	namespaces := sets.New(term.Namespaces...)
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		namespaces = sets.New(pod.Namespace)
	}
	return AffinityTerm{Namespaces: namespaces, Selector: selector, TopologyKey: term.TopologyKey, NamespaceSelector: nsSelector}, nil
}

// ImageStateSummary is an image present on a node, with how many nodes of the
// cluster have it.
type ImageStateSummary struct {
	Size     int64
	NumNodes int
}

// NodeInfo is a node with everything the plugins need to know about what runs
// on it. A working copy (Clone) can take reserved pods without changing the
// original, which is how gang placement competes with itself.
type NodeInfo struct {
	node *corev1.Node

	Pods                         []*PodInfo
	PodsWithAffinity             []*PodInfo
	PodsWithRequiredAntiAffinity []*PodInfo
	UsedPorts                    HostPortInfo
	// Requested is the sum of the pods' requests; NonZeroRequested the same
	// with kube-scheduler's defaults for containers that request nothing.
	Requested        *Resource
	NonZeroRequested *Resource
	Allocatable      *Resource
	// ImageStates holds the images on the node, keyed by every name they go by.
	ImageStates map[string]*ImageStateSummary
	// PVCRefCounts counts the pods on the node using each PVC, "namespace/name".
	PVCRefCounts map[string]int
	// Generation grows whenever the NodeInfo changes.
	Generation int64

	// labelKeys caches PodLabelKeys for a generation.
	labelKeys atomic.Pointer[podLabelKeys]
}

// podLabelKeys are the label keys of a NodeInfo's pods at one generation.
type podLabelKeys struct {
	generation int64
	keys       map[string]struct{}
}

// PodLabelKeys returns the set of label keys the pods on the node carry,
// computed once per generation (a NodeInfo shared by forks is never changed,
// so forks share it too). Callers must not change it. Safe for concurrent
// use while the NodeInfo does not change.
func (n *NodeInfo) PodLabelKeys() map[string]struct{} {
	if c := n.labelKeys.Load(); c != nil && c.generation == n.Generation {
		return c.keys
	}
	keys := map[string]struct{}{}
	for _, pi := range n.Pods {
		for k := range pi.Pod.Labels {
			keys[k] = struct{}{}
		}
	}
	n.labelKeys.Store(&podLabelKeys{generation: n.Generation, keys: keys})
	return keys
}

// NewNodeInfo returns a NodeInfo for node with pods on it.
func NewNodeInfo(node *corev1.Node, pods ...*PodInfo) *NodeInfo {
	n := &NodeInfo{
		Requested:        &Resource{},
		NonZeroRequested: &Resource{},
		Allocatable:      &Resource{},
		UsedPorts:        HostPortInfo{},
		ImageStates:      map[string]*ImageStateSummary{},
		PVCRefCounts:     map[string]int{},
	}
	if node != nil {
		n.SetNode(node)
	}
	for _, p := range pods {
		n.AddPodInfo(p)
	}
	return n
}

// Node returns the node.
func (n *NodeInfo) Node() *corev1.Node { return n.node }

// Name returns the node's name.
func (n *NodeInfo) Name() string {
	if n == nil || n.node == nil {
		return ""
	}
	return n.node.Name
}

// SetNode sets the node and its allocatable resources.
func (n *NodeInfo) SetNode(node *corev1.Node) {
	n.node = node
	n.Allocatable = NewResource(node.Status.Allocatable)
	n.Generation++
}

// AddPodInfo accounts for a pod on the node.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.Pods = append(n.Pods, pi)
	if hasAffinity(pi.Pod) {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if hasRequiredAntiAffinity(pi.Pod) {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, 1)
}

// AddPod accounts for a pod on the node.
func (n *NodeInfo) AddPod(pod *corev1.Pod) { n.AddPodInfo(NewPodInfo(pod)) }

// RemovePod takes a pod (by namespace and name) off the node.
func (n *NodeInfo) RemovePod(pod *corev1.Pod) error {
	var removed *PodInfo
	n.Pods, removed = removePod(n.Pods, pod)
	if removed == nil {
		return fmt.Errorf("no pod %s/%s on node %s", pod.Namespace, pod.Name, n.Name())
	}
	n.PodsWithAffinity, _ = removePod(n.PodsWithAffinity, pod)
	n.PodsWithRequiredAntiAffinity, _ = removePod(n.PodsWithRequiredAntiAffinity, pod)
	n.update(removed, -1)
	return nil
}

// removePod removes a pod from a slice without changing the backing array a
// clone may share: it copies.
func removePod(list []*PodInfo, pod *corev1.Pod) ([]*PodInfo, *PodInfo) {
	for i, p := range list {
		if p.Pod.Name == pod.Name && p.Pod.Namespace == pod.Namespace {
			out := make([]*PodInfo, 0, len(list)-1)
			out = append(out, list[:i]...)
			return append(out, list[i+1:]...), p
		}
	}
	return list, nil
}

func (n *NodeInfo) update(pi *PodInfo, sign int64) {
	r := pi.Res.Resource
	n.Requested.MilliCPU += sign * r.MilliCPU
	n.Requested.Memory += sign * r.Memory
	n.Requested.EphemeralStorage += sign * r.EphemeralStorage
	for name, q := range r.ScalarResources {
		n.Requested.AddScalar(name, sign*q)
	}
	n.NonZeroRequested.MilliCPU += sign * pi.Res.Non0CPU
	n.NonZeroRequested.Memory += sign * pi.Res.Non0Mem
	for _, port := range HostPorts(pi.Pod) {
		if sign > 0 {
			n.UsedPorts.Add(port.HostIP, string(port.Protocol), port.HostPort)
		} else {
			n.UsedPorts.Remove(port.HostIP, string(port.Protocol), port.HostPort)
		}
	}
	for _, v := range pi.Pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		key := pi.Pod.Namespace + "/" + v.PersistentVolumeClaim.ClaimName
		n.PVCRefCounts[key] += int(sign)
		if n.PVCRefCounts[key] <= 0 {
			delete(n.PVCRefCounts, key)
		}
	}
	n.Generation++
}

// Clone returns a copy that can take and lose pods without changing n. The
// node object and the PodInfos are shared: they are never modified.
func (n *NodeInfo) Clone() *NodeInfo {
	out := &NodeInfo{
		node:                         n.node,
		Pods:                         n.Pods[:len(n.Pods):len(n.Pods)],
		PodsWithAffinity:             n.PodsWithAffinity[:len(n.PodsWithAffinity):len(n.PodsWithAffinity)],
		PodsWithRequiredAntiAffinity: n.PodsWithRequiredAntiAffinity[:len(n.PodsWithRequiredAntiAffinity):len(n.PodsWithRequiredAntiAffinity)],
		UsedPorts:                    n.UsedPorts.Clone(),
		Requested:                    n.Requested.Clone(),
		NonZeroRequested:             n.NonZeroRequested.Clone(),
		Allocatable:                  n.Allocatable,
		ImageStates:                  n.ImageStates,
		PVCRefCounts:                 make(map[string]int, len(n.PVCRefCounts)),
		Generation:                   n.Generation,
	}
	for k, v := range n.PVCRefCounts {
		out.PVCRefCounts[k] = v
	}
	return out
}

func hasAffinity(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

func hasRequiredAntiAffinity(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}

// HostPorts returns the container ports of a pod that claim a host port:
// those of its containers and of its sidecar (restartable init) containers.
func HostPorts(pod *corev1.Pod) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			continue
		}
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				out = append(out, p)
			}
		}
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				out = append(out, p)
			}
		}
	}
	return out
}
