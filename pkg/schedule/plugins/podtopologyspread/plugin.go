// Package podtopologyspread is kube-scheduler v1.37's PodTopologySpread
// plugin: it keeps pods matching a pod's topologySpreadConstraints evenly
// spread over topology domains (zones, hosts, any node label). Hard
// constraints (whenUnsatisfiable: DoNotSchedule) filter nodes; soft ones
// (ScheduleAnyway) score them.
package podtopologyspread

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Name is the plugin's name in profiles and in statuses.
const Name = "PodTopologySpread"

// The reasons Filter gives, worded as kube-scheduler words them.
const (
	// ErrReasonConstraintsNotMatch rejects a node where the pod would make a
	// domain's skew exceed maxSkew.
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	// ErrReasonNodeLabelNotMatch rejects a node that lacks a constraint's topology key.
	ErrReasonNodeLabelNotMatch = ErrReasonConstraintsNotMatch + " (missing required label)"
)

// systemDefaultConstraints are what kube-scheduler applies, with
// defaultingType "System", to pods that have no constraints of their own.
var systemDefaultConstraints = []corev1.TopologySpreadConstraint{
	{TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 5},
}

// DefaultSelectorLister is an optional interface of the Handle. Default
// constraints (system or listed) carry no selector: kube-scheduler derives
// one per pod from the Services, ReplicationControllers, ReplicaSets and
// StatefulSets that select it (helper.DefaultSelector, through informer
// listers). The scheduler's Handle implements it over the snapshot's
// workloads (framework.Workloads.DefaultSelector); a Handle that does not
// gives default constraints no selector, so they apply to no pod.
type DefaultSelectorLister interface {
	// DefaultSelector returns the merged selector of the Services,
	// ReplicationControllers, ReplicaSets and StatefulSets selecting pod, as
	// kube-scheduler's helper.DefaultSelector builds it; empty (or nil) when
	// nothing selects the pod.
	DefaultSelector(pod *corev1.Pod) labels.Selector
}

// SelectorKindsReader is an optional interface of the Handle: which of the
// kinds DefaultSelectorLister reads (services, replicationcontrollers,
// replicasets.apps, statefulsets.apps) a live snapshot could not list in a
// namespace. There a pod's default constraints have no known selector, and
// PreFilter reports them not evaluated.
type SelectorKindsReader interface {
	UnreadableSelectorKinds(namespace string) []string
}

// NotEvaluatedReason starts the reason of the not-evaluated status PreFilter
// returns for a pod whose default constraints' selector the snapshot cannot
// know.
const NotEvaluatedReason = "PodTopologySpread not evaluated"

// PodTopologySpread is the plugin.
type PodTopologySpread struct {
	handle             framework.Handle
	defaultConstraints []corev1.TopologySpreadConstraint
	// systemDefaulted is set when defaultingType is System; it lets nodes
	// without a zone label still be scored for hostname spreading.
	systemDefaulted bool
}

var (
	_ framework.PreFilterPlugin     = &PodTopologySpread{}
	_ framework.PreFilterExtensions = &PodTopologySpread{}
	_ framework.FilterPlugin        = &PodTopologySpread{}
	_ framework.PreScorePlugin      = &PodTopologySpread{}
	_ framework.ScorePlugin         = &PodTopologySpread{}
	_ framework.ScoreExtensions     = &PodTopologySpread{}
)

// New returns the plugin. args is a *configv1.PodTopologySpreadArgs, or nil
// for kube-scheduler's defaults (defaultingType System).
func New(args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	if h == nil {
		return nil, fmt.Errorf("%s: the plugin needs a handle", Name)
	}
	a, err := getArgs(args)
	if err != nil {
		return nil, err
	}
	if err := ValidateArgs(nil, &a); err != nil {
		return nil, err
	}
	pl := &PodTopologySpread{handle: h, defaultConstraints: a.DefaultConstraints}
	if a.DefaultingType == configv1.SystemDefaulting {
		pl.defaultConstraints = systemDefaultConstraints
		pl.systemDefaulted = true
	}
	return pl, nil
}

// Name returns the plugin's name.
func (pl *PodTopologySpread) Name() string { return Name }

// getArgs returns the args with kube-scheduler's v1 defaults applied, on a
// copy so the caller's object is left alone.
func getArgs(obj runtime.Object) (configv1.PodTopologySpreadArgs, error) {
	var a configv1.PodTopologySpreadArgs
	switch in := obj.(type) {
	case nil:
	case *configv1.PodTopologySpreadArgs:
		if in != nil {
			a = *in
		}
	default:
		return a, fmt.Errorf("want args to be of type PodTopologySpreadArgs, got %T", obj)
	}
	SetDefaults(&a)
	return a, nil
}

// SetDefaults applies kube-scheduler's v1 defaults (SetDefaults_PodTopologySpreadArgs).
func SetDefaults(a *configv1.PodTopologySpreadArgs) {
	if a.DefaultingType == "" {
		a.DefaultingType = configv1.SystemDefaulting
	}
}

// ValidateArgs validates args as kube-scheduler's ValidatePodTopologySpreadArgs
// does, with the same field paths and messages.
func ValidateArgs(path *field.Path, a *configv1.PodTopologySpreadArgs) error {
	var errs field.ErrorList
	typePath := path.Child("defaultingType")
	switch {
	case a.DefaultingType != configv1.SystemDefaulting && a.DefaultingType != configv1.ListDefaulting:
		errs = append(errs, field.NotSupported(typePath, a.DefaultingType,
			[]string{string(configv1.SystemDefaulting), string(configv1.ListDefaulting)}))
	case a.DefaultingType == configv1.SystemDefaulting && len(a.DefaultConstraints) > 0:
		errs = append(errs, field.Invalid(typePath, a.DefaultingType, "when .defaultConstraints are not empty"))
	}
	constraintsPath := path.Child("defaultConstraints")
	actions := sets.New(string(corev1.DoNotSchedule), string(corev1.ScheduleAnyway))
	for i, c := range a.DefaultConstraints {
		p := constraintsPath.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "not in valid range (0, inf)"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch {
		case c.WhenUnsatisfiable == "":
			errs = append(errs, field.Required(p.Child("whenUnsatisfiable"), "can not be empty"))
		case !actions.Has(string(c.WhenUnsatisfiable)):
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, sets.List(actions)))
		}
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"))
		}
		for j := range a.DefaultConstraints[:i] {
			o := &a.DefaultConstraints[j]
			if c.TopologyKey == o.TopologyKey && c.WhenUnsatisfiable == o.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(constraintsPath.Index(i), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
	}
	return errs.ToAggregate()
}

// topologySpreadConstraint is a constraint with its selector parsed and its
// optional fields resolved.
type topologySpreadConstraint struct {
	MaxSkew            int32
	TopologyKey        string
	Selector           labels.Selector
	MinDomains         int32
	NodeAffinityPolicy corev1.NodeInclusionPolicy
	NodeTaintsPolicy   corev1.NodeInclusionPolicy
}

// constraints returns the pod's constraints with the given action, or, when
// the pod has none at all, the default constraints with that action.
func (pl *PodTopologySpread) constraints(pod *corev1.Pod, action corev1.UnsatisfiableConstraintAction) ([]topologySpreadConstraint, error) {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return filterConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, action)
	}
	out, err := filterConstraints(pl.defaultConstraints, pod.Labels, action)
	if err != nil || len(out) == 0 {
		return nil, err
	}
	// See DefaultSelectorLister: without workload objects the selector is
	// empty and default constraints produce nothing, as kube-scheduler's do
	// for a pod no Service or controller selects.
	lister, ok := pl.handle.(DefaultSelectorLister)
	if !ok {
		return nil, nil
	}
	selector := lister.DefaultSelector(pod)
	if selector == nil || selector.Empty() {
		return nil, nil
	}
	for i := range out {
		out[i].Selector = selector
	}
	return out, nil
}

// filterConstraints parses the constraints with the given action.
// matchLabelKeys (MatchLabelKeysInPodTopologySpread, beta and on in v1.37)
// are ANDed into the selector here, as kube-scheduler does. The API server
// also merges them into labelSelector when it admits the pod
// (MatchLabelKeysInPodTopologySpreadSelectorMerge, beta and on); merging the
// same key=value twice selects the same pods, and pods that never went
// through an API server (manifests from -f) still get the merge.
func filterConstraints(in []corev1.TopologySpreadConstraint, podLabels map[string]string, action corev1.UnsatisfiableConstraintAction) ([]topologySpreadConstraint, error) {
	var out []topologySpreadConstraint
	for _, c := range in {
		if c.WhenUnsatisfiable != action {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, err
		}
		if len(c.MatchLabelKeys) > 0 {
			matchLabels := labels.Set{}
			for _, key := range c.MatchLabelKeys {
				if v, ok := podLabels[key]; ok {
					matchLabels[key] = v
				}
			}
			if len(matchLabels) > 0 {
				selector = mergeLabelSetWithSelector(matchLabels, selector)
			}
		}
		tsc := topologySpreadConstraint{
			MaxSkew:            c.MaxSkew,
			TopologyKey:        c.TopologyKey,
			Selector:           selector,
			MinDomains:         1,
			NodeAffinityPolicy: corev1.NodeInclusionPolicyHonor,
			NodeTaintsPolicy:   corev1.NodeInclusionPolicyIgnore,
		}
		if c.MinDomains != nil {
			tsc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			tsc.NodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			tsc.NodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		out = append(out, tsc)
	}
	return out, nil
}

// mergeLabelSetWithSelector ANDs matchLabels into s. A selector that selects
// nothing (a nil labelSelector) stays so.
func mergeLabelSetWithSelector(matchLabels labels.Set, s labels.Selector) labels.Selector {
	requirements, ok := s.Requirements()
	if !ok {
		return s
	}
	merged := labels.SelectorFromSet(matchLabels)
	for _, r := range requirements {
		merged = merged.Add(r)
	}
	return merged
}

// nodeLabelsMatchSpreadConstraints reports whether the node has every
// constraint's topology key.
func nodeLabelsMatchSpreadConstraints(nodeLabels map[string]string, constraints []topologySpreadConstraint) bool {
	for i := range constraints {
		if _, ok := nodeLabels[constraints[i].TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// countPodsMatchSelector counts the pods in namespace ns that the selector
// matches, leaving out terminating pods. An empty selector ({}) counts none,
// as in kube-scheduler.
func countPodsMatchSelector(pods []*framework.PodInfo, selector labels.Selector, ns string) int {
	if selector.Empty() {
		return 0
	}
	count := 0
	for _, p := range pods {
		if p.Pod.DeletionTimestamp != nil || p.Pod.Namespace != ns {
			continue
		}
		if selector.Matches(labels.Set(p.Pod.Labels)) {
			count++
		}
	}
	return count
}

// inclusion decides, for one pod, which nodes count towards each
// constraint's domains under nodeAffinityPolicy and nodeTaintsPolicy
// (NodeInclusionPolicyInPodTopologySpread is GA and locked on in v1.37).
type inclusion struct {
	affinity    nodeaffinity.RequiredNodeAffinity
	tolerations []corev1.Toleration
	logger      klog.Logger
	// needAffinity and needTaints are set when some constraint honours them,
	// so nodes are only matched when it matters.
	needAffinity, needTaints bool
}

func newInclusion(logger klog.Logger, pod *corev1.Pod, constraints []topologySpreadConstraint) *inclusion {
	in := &inclusion{affinity: nodeaffinity.GetRequiredNodeAffinity(pod), tolerations: pod.Spec.Tolerations, logger: logger}
	for i := range constraints {
		in.needAffinity = in.needAffinity || constraints[i].NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor
		in.needTaints = in.needTaints || constraints[i].NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor
	}
	return in
}

// nodeVerdict is what inclusion found for one node.
type nodeVerdict struct {
	affinityMatch, taintsTolerated bool
}

func (in *inclusion) judge(node *corev1.Node) nodeVerdict {
	v := nodeVerdict{affinityMatch: true, taintsTolerated: true}
	if in.needAffinity {
		// Parse errors count as no match, as in kube-scheduler.
		v.affinityMatch, _ = in.affinity.Match(node)
	}
	if in.needTaints {
		v.taintsTolerated = !in.hasUntoleratedTaint(node.Spec.Taints)
	}
	return v
}

// includes reports whether a node with verdict v counts for constraint c.
func (v nodeVerdict) includes(c *topologySpreadConstraint) bool {
	if c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor && !v.affinityMatch {
		return false
	}
	if c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor && !v.taintsTolerated {
		return false
	}
	return true
}

// hasUntoleratedTaint is v1helper.FindMatchingUntoleratedTaint with the
// NoSchedule/NoExecute filter kube-scheduler passes, without its allocation.
// TaintTolerationComparisonOperators is alpha and off in v1.37.
func (in *inclusion) hasUntoleratedTaint(taints []corev1.Taint) bool {
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !v1helper.TolerationsTolerateTaint(in.logger, in.tolerations, t, false) {
			return true
		}
	}
	return false
}

// Workloads is framework.Workloads, which gives default constraints their
// selector.
type Workloads = framework.Workloads
