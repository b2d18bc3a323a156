// Package nodeaffinity is kube-scheduler's NodeAffinity plugin: Filter keeps
// the nodes that match a pod's nodeSelector and required node affinity (and
// the profile's addedAffinity), PreFilter narrows the nodes to those a
// metadata.name field selector names, and Score adds up the weights of the
// preferred terms a node matches.
package nodeaffinity

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is NodeAffinity's name in profiles.
	Name = "NodeAffinity"

	// ErrReasonPod is the Filter reason for a node that does not match the
	// pod's nodeSelector or required node affinity.
	ErrReasonPod = "node(s) didn't match Pod's node affinity/selector"
	// ErrReasonEnforced is the Filter reason for a node that does not match
	// the profile's addedAffinity.
	ErrReasonEnforced = "node(s) didn't match scheduler-enforced node affinity"
	// ErrReasonConflict is the PreFilter reason for a pod whose required
	// metadata.name field selectors name no node at all.
	ErrReasonConflict = "pod affinity terms conflict"

	preFilterStateKey framework.StateKey = "PreFilter" + Name
	preScoreStateKey  framework.StateKey = "PreScore" + Name
)

var (
	_ framework.PreFilterPlugin = &NodeAffinity{}
	_ framework.FilterPlugin    = &NodeAffinity{}
	_ framework.PreScorePlugin  = &NodeAffinity{}
	_ framework.ScorePlugin     = &NodeAffinity{}
	_ framework.ScoreExtensions = &NodeAffinity{}
)

// Shared by every rejection so that Filter allocates only the Status.
var (
	errReasonsPod      = []string{ErrReasonPod}
	errReasonsEnforced = []string{ErrReasonEnforced}
)

// NodeAffinity matches pods' node affinity against nodes. Its
// NormalizeScore scales the sums onto [0, 100]: the best node gets 100.
type NodeAffinity struct {
	framework.DefaultNormalizer
	addedNodeSelector   *nodeSelector
	addedPrefSchedTerms *nodeaffinity.PreferredSchedulingTerms
}

// New builds the plugin from *configv1.NodeAffinityArgs; nil args mean
// kube-scheduler's defaults (no addedAffinity). The args are validated as
// kube-scheduler validates them.
func New(args runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	var affinity *corev1.NodeAffinity
	if args != nil {
		typed, ok := args.(*configv1.NodeAffinityArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type NodeAffinityArgs, got %T", args)
		}
		if typed != nil {
			affinity = typed.AddedAffinity
		}
	}
	if err := validateAddedAffinity(affinity); err != nil {
		return nil, err
	}
	pl := &NodeAffinity{}
	if affinity == nil {
		return pl, nil
	}
	if ns := affinity.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		pl.addedNodeSelector = newNodeSelector(ns)
	}
	if terms := affinity.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) != 0 {
		var err error
		pl.addedPrefSchedTerms, err = nodeaffinity.NewPreferredSchedulingTerms(terms)
		if err != nil {
			return nil, fmt.Errorf("parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: %w", err)
		}
	}
	return pl, nil
}

// validateAddedAffinity is kube-scheduler's ValidateNodeAffinityArgs: both
// parts of addedAffinity must parse, and errors name the field.
func validateAddedAffinity(affinity *corev1.NodeAffinity) error {
	if affinity == nil {
		return nil
	}
	var errs []error
	if ns := affinity.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		path := field.NewPath("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
		if _, err := nodeaffinity.NewNodeSelector(ns, field.WithPath(path)); err != nil {
			errs = append(errs, err)
		}
	}
	if terms := affinity.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) != 0 {
		path := field.NewPath("addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
		if _, err := nodeaffinity.NewPreferredSchedulingTerms(terms, field.WithPath(path)); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.Flatten(utilerrors.NewAggregate(errs))
}

// Name returns the plugin's name.
func (pl *NodeAffinity) Name() string { return Name }

type preFilterState struct {
	required requiredAffinity
}

// Clone returns the state itself: it is never changed after PreFilter.
func (s *preFilterState) Clone() framework.StateData { return s }

// PreFilter parses the pod's nodeSelector and required node affinity once,
// skips the plugin for a pod with neither (when no addedAffinity is
// configured), and narrows the nodes to those named by metadata.name In
// field selectors when every term has one: the union over the terms of the
// intersection within each. A pod whose terms name no node at all is
// rejected for every node.
func (pl *NodeAffinity) PreFilter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	affinity := pod.Spec.Affinity
	noNodeAffinity := affinity == nil || affinity.NodeAffinity == nil ||
		affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil
	if noNodeAffinity && pl.addedNodeSelector == nil && pod.Spec.NodeSelector == nil {
		return nil, framework.NewStatus(framework.Skip)
	}
	cycleState.Write(preFilterStateKey, &preFilterState{required: newRequiredAffinity(pod)})
	if noNodeAffinity {
		return nil, nil
	}
	terms := affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return nil, nil
	}
	var nodeNames sets.Set[string]
	for _, t := range terms {
		var termNodeNames sets.Set[string]
		for _, r := range t.MatchFields {
			if r.Key != metav1.ObjectNameField || r.Operator != corev1.NodeSelectorOpIn {
				continue
			}
			s := sets.New(r.Values...)
			if termNodeNames == nil {
				termNodeNames = s
			} else {
				termNodeNames = termNodeNames.Intersection(s)
			}
		}
		if termNodeNames == nil {
			// A term that does not pin node names can match any node.
			return nil, nil
		}
		nodeNames = nodeNames.Union(termNodeNames)
	}
	if nodeNames != nil && len(nodeNames) == 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict)
	}
	if len(nodeNames) > 0 {
		return &framework.PreFilterResult{NodeNames: nodeNames}, nil
	}
	return nil, nil
}

// PreFilterExtensions returns nil: adding or removing pods changes nothing.
func (pl *NodeAffinity) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter checks the profile's addedAffinity first, then the pod's
// nodeSelector and required node affinity. It does not allocate unless it
// rejects (or runs without PreFilter).
func (pl *NodeAffinity) Filter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if pl.addedNodeSelector != nil && !pl.addedNodeSelector.match(node) {
		return statusEnforced
	}
	var required *requiredAffinity
	if s, err := framework.ReadState[*preFilterState](cycleState, preFilterStateKey); err == nil {
		required = &s.required
	}
	if required == nil {
		r := newRequiredAffinity(pod)
		required = &r
	}
	if !required.match(node) {
		return statusPod
	}
	return nil
}

type preScoreState struct {
	preferredNodeAffinity *nodeaffinity.PreferredSchedulingTerms
}

// Clone returns the state itself: it is never changed after PreScore.
func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore parses the pod's preferred terms, and skips scoring when neither
// the pod nor the profile has any. A term that does not parse is an error,
// as in kube-scheduler.
func (pl *NodeAffinity) PreScore(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	preferred, err := podPreferredNodeAffinity(pod)
	if err != nil {
		return framework.AsStatus(err)
	}
	if preferred == nil && pl.addedPrefSchedTerms == nil {
		return framework.NewStatus(framework.Skip)
	}
	cycleState.Write(preScoreStateKey, &preScoreState{preferredNodeAffinity: preferred})
	return nil
}

func podPreferredNodeAffinity(pod *corev1.Pod) (*nodeaffinity.PreferredSchedulingTerms, error) {
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution != nil {
		return nodeaffinity.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return nil, nil
}

// Score sums the weights of the preferred terms, the profile's and the
// pod's, that the node matches.
func (pl *NodeAffinity) Score(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	node := nodeInfo.Node()
	var count int64
	if pl.addedPrefSchedTerms != nil {
		count += pl.addedPrefSchedTerms.Score(node)
	}
	var preferred *nodeaffinity.PreferredSchedulingTerms
	if s, err := framework.ReadState[*preScoreState](cycleState, preScoreStateKey); err == nil {
		preferred = s.preferredNodeAffinity
	} else {
		// Without PreScore (or with a foreign state), parse here, as
		// kube-scheduler does.
		var err error
		if preferred, err = podPreferredNodeAffinity(pod); err != nil {
			return 0, framework.AsStatus(err)
		}
	}
	if preferred != nil {
		count += preferred.Score(node)
	}
	return count, nil
}

// ScoreExtensions returns the plugin itself: it normalizes its scores.
func (pl *NodeAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }

// The shared Filter rejections: returning one costs no allocation per node,
// and they carry the plugin name so the runner's WithPlugin never writes.
var (
	statusEnforced = framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasonsEnforced...).WithPlugin(Name)
	statusPod      = framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasonsPod...).WithPlugin(Name)
)

var _ framework.RangeNormalizer = (*NodeAffinity)(nil)
