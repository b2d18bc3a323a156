// Package nodedeclaredfeatures is kube-scheduler's NodeDeclaredFeatures
// plugin (GA in v1.37): a pod that needs a node feature (such as restart
// rules that restart all containers, user namespaces with host networking,
// or bind mount options) only fits nodes whose kubelet declares it in
// status.declaredFeatures. The inference and matching are
// k8s.io/component-helpers/nodedeclaredfeatures, as in kube-scheduler.
package nodedeclaredfeatures

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is NodeDeclaredFeatures' name in profiles.
	Name = "NodeDeclaredFeatures"
	// ErrReasonUnsatisfiedRequirements is the Filter reason, as
	// kube-scheduler words it.
	ErrReasonUnsatisfiedRequirements = "node(s) didn't match Pod's required features"

	preFilterStateKey framework.StateKey = "PreFilter" + Name
)

// SchedulerVersion is the kube-scheduler version whose feature inference
// this plugin reproduces: features with a maximum version below it are no
// longer required.
var SchedulerVersion = version.MustParse("1.37.1")

var (
	_ framework.PreFilterPlugin = &NodeDeclaredFeatures{}
	_ framework.FilterPlugin    = &NodeDeclaredFeatures{}
)

var errReasons = []string{ErrReasonUnsatisfiedRequirements}

// NodeDeclaredFeatures matches the features a pod needs against those its
// node declares.
type NodeDeclaredFeatures struct {
	features *ndf.Framework
}

// New returns the plugin; it takes no arguments.
func New(_ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &NodeDeclaredFeatures{features: ndf.DefaultFramework}, nil
}

// Name returns the plugin's name.
func (pl *NodeDeclaredFeatures) Name() string { return Name }

type preFilterState struct {
	reqs ndf.FeatureSet
}

// Clone returns the state itself: it is never changed after PreFilter.
func (s *preFilterState) Clone() framework.StateData { return s }

// PreFilter infers the features the pod's spec needs and skips the plugin
// when it needs none.
func (pl *NodeDeclaredFeatures) PreFilter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	reqs, err := pl.features.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec}, SchedulerVersion)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if reqs.IsEmpty() {
		return nil, framework.NewStatus(framework.Skip)
	}
	cycleState.Write(preFilterStateKey, &preFilterState{reqs: reqs})
	return nil, nil
}

// PreFilterExtensions returns nil: other pods do not matter.
func (pl *NodeDeclaredFeatures) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects a node that does not declare every feature the pod needs.
// Declared features the library does not know are ignored, as
// kube-scheduler's NodeInfo ignores them.
func (pl *NodeDeclaredFeatures) Filter(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadState[*preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	match, err := s.reqs.IsSubset(pl.features.TryMap(nodeInfo.Node().Status.DeclaredFeatures))
	if err != nil {
		return framework.AsStatus(err)
	}
	if !match {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasons...)
	}
	return nil
}

// UnsatisfiedRequirements names the features the pod needs that the node
// does not declare, sorted; the reason string does not name them, so explain
// can.
func UnsatisfiedRequirements(pod *corev1.Pod, node *corev1.Node) ([]string, error) {
	reqs, err := ndf.DefaultFramework.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec}, SchedulerVersion)
	if err != nil {
		return nil, err
	}
	result, err := ndf.DefaultFramework.MatchNode(reqs, node)
	if err != nil {
		return nil, err
	}
	return result.UnsatisfiedRequirements, nil
}
