// Package interpodaffinity is kube-scheduler v1.37's InterPodAffinity plugin:
// required pod affinity and anti-affinity (the pod's own terms and the
// required anti-affinity of pods already running) at PreFilter/Filter, and
// preferred terms of both sides at PreScore/Score/NormalizeScore.
//
// The InterPodAffinityHostnameFastPath feature gate is alpha and off by
// default in v1.37, so the plugin follows kube-scheduler's default path:
// every term, whatever its topology key, is counted per topology pair.
package interpodaffinity

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Name is the plugin's name in profiles and reports.
const Name = "InterPodAffinity"

// Argument bounds and defaults, as kube-scheduler's defaults.go and
// validation_pluginargs.go set them.
const (
	// DefaultHardPodAffinityWeight is hardPodAffinityWeight when unset.
	DefaultHardPodAffinityWeight int32 = 1
	minHardPodAffinityWeight     int32 = 0
	maxHardPodAffinityWeight     int32 = 100
)

var (
	_ framework.PreFilterPlugin     = &InterPodAffinity{}
	_ framework.PreFilterExtensions = &InterPodAffinity{}
	_ framework.FilterPlugin        = &InterPodAffinity{}
	_ framework.PreScorePlugin      = &InterPodAffinity{}
	_ framework.ScorePlugin         = &InterPodAffinity{}
	_ framework.ScoreExtensions     = &InterPodAffinity{}
)

// InterPodAffinity keeps pods together with, or apart from, the pods their
// affinity terms select, counted per value of the terms' topology keys.
type InterPodAffinity struct {
	handle framework.Handle
	// hardPodAffinityWeight scores an existing pod's required affinity term
	// that the incoming pod matches, as if it were a preferred term.
	hardPodAffinityWeight int32
	// ignorePreferredTermsOfExistingPods skips scoring entirely for a pod
	// with no preferred terms of its own.
	ignorePreferredTermsOfExistingPods bool
}

// New builds the plugin from *configv1.InterPodAffinityArgs, or from
// kube-scheduler's defaults when args is nil.
func New(args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	if h == nil {
		return nil, errors.New("interpodaffinity: the handle is nil")
	}
	a, err := getArgs(args)
	if err != nil {
		return nil, err
	}
	if err := ValidateArgs(a); err != nil {
		return nil, err
	}
	return &InterPodAffinity{
		handle:                             h,
		hardPodAffinityWeight:              *a.HardPodAffinityWeight,
		ignorePreferredTermsOfExistingPods: a.IgnorePreferredTermsOfExistingPods,
	}, nil
}

// getArgs returns a defaulted copy of the args.
func getArgs(obj runtime.Object) (*configv1.InterPodAffinityArgs, error) {
	a := &configv1.InterPodAffinityArgs{}
	if obj != nil {
		in, ok := obj.(*configv1.InterPodAffinityArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type InterPodAffinityArgs, got %T", obj)
		}
		if in != nil {
			a = in.DeepCopy()
		}
	}
	SetDefaults(a)
	return a, nil
}

// SetDefaults fills in unset args as kube-scheduler's SetDefaults_InterPodAffinityArgs does.
func SetDefaults(a *configv1.InterPodAffinityArgs) {
	if a.HardPodAffinityWeight == nil {
		w := DefaultHardPodAffinityWeight
		a.HardPodAffinityWeight = &w
	}
}

// ValidateArgs checks defaulted args as kube-scheduler's
// ValidateInterPodAffinityArgs does: hardPodAffinityWeight in [0, 100].
func ValidateArgs(a *configv1.InterPodAffinityArgs) error {
	if a.HardPodAffinityWeight == nil {
		return field.Required(field.NewPath("hardPodAffinityWeight"), "")
	}
	if w := *a.HardPodAffinityWeight; w < minHardPodAffinityWeight || w > maxHardPodAffinityWeight {
		return field.Invalid(field.NewPath("hardPodAffinityWeight"), w,
			fmt.Sprintf("not in valid range [%d, %d]", minHardPodAffinityWeight, maxHardPodAffinityWeight))
	}
	return nil
}

// Name returns the plugin's name.
func (pl *InterPodAffinity) Name() string { return Name }

// topologyPair is one value of one node label: a topology domain.
type topologyPair struct {
	key   string
	value string
}

// incomingTerm is one of the incoming pod's terms with its namespace selector
// resolved, as kube-scheduler's mergeAffinityTermNamespacesIfNotEmpty does:
// an empty selector selects every namespace, a nil one none, and any other
// selects the namespaces of the snapshot whose labels it matches. Existing
// pods' terms are matched as they are, with the incoming pod's namespace labels.
type incomingTerm struct {
	namespaces  sets.Set[string]
	selector    labels.Selector
	topologyKey string
	weight      int32
	// allNamespaces: the namespace selector is empty.
	allNamespaces bool
	// nsSelector is set when namespaces are selected by their labels.
	nsSelector      labels.Selector
	namespaceLabels func(namespace string) labels.Set
	// needs are the label keys a pod must carry for the selector to
	// select it (In, =, ==, Exists, Gt, Lt): a node none of whose pods
	// carries one of them has no pod the term selects.
	needs []string
}

func newIncomingTerm(t *framework.AffinityTerm, weight int32, nsLabels func(string) labels.Set) incomingTerm {
	it := incomingTerm{namespaces: t.Namespaces, selector: t.Selector, topologyKey: t.TopologyKey, weight: weight}
	if t.Selector != nil {
		if reqs, selectable := t.Selector.Requirements(); selectable {
			for _, r := range reqs {
				switch r.Operator() {
				case selection.In, selection.Equals, selection.DoubleEquals, selection.Exists, selection.GreaterThan, selection.LessThan:
					it.needs = append(it.needs, r.Key())
				}
			}
		}
	}
	switch sel := t.NamespaceSelector; {
	case sel == nil:
	case sel.Empty():
		it.allNamespaces = true
	default:
		// labels.Nothing() (no namespaceSelector at all) is not selectable.
		if _, selectable := sel.Requirements(); selectable {
			it.nsSelector, it.namespaceLabels = sel, nsLabels
		}
	}
	return it
}

// mayMatchOn reports whether a pod on a node whose pods carry keys (label
// keys) could be selected by the term.
func (t *incomingTerm) mayMatchOn(keys map[string]struct{}) bool {
	for _, k := range t.needs {
		if _, ok := keys[k]; !ok {
			return false
		}
	}
	return true
}

// matches reports whether pod is selected by the term.
func (t *incomingTerm) matches(pod *corev1.Pod) bool {
	if !t.inNamespace(pod.Namespace) {
		return false
	}
	return t.selector.Matches(labels.Set(pod.Labels))
}

func (t *incomingTerm) inNamespace(ns string) bool {
	if t.allNamespaces || t.namespaces.Has(ns) {
		return true
	}
	if t.nsSelector == nil {
		return false
	}
	// kube-scheduler lists the namespaces the selector matches, so a pod's
	// namespace counts only if it exists. The snapshot gives no labels (nil)
	// for a namespace it does not hold; every namespace the API server
	// serves carries at least kubernetes.io/metadata.name.
	nsLabels := t.namespaceLabels(ns)
	return nsLabels != nil && t.nsSelector.Matches(nsLabels)
}

func resolveTerms(terms []framework.AffinityTerm, nsLabels func(string) labels.Set) []incomingTerm {
	if len(terms) == 0 {
		return nil
	}
	out := make([]incomingTerm, len(terms))
	for i := range terms {
		out[i] = newIncomingTerm(&terms[i], 0, nsLabels)
	}
	return out
}

func resolveWeightedTerms(terms []framework.WeightedAffinityTerm, nsLabels func(string) labels.Set) []incomingTerm {
	if len(terms) == 0 {
		return nil
	}
	out := make([]incomingTerm, len(terms))
	for i := range terms {
		out[i] = newIncomingTerm(&terms[i].AffinityTerm, terms[i].Weight, nsLabels)
	}
	return out
}

// podMatchesAllTerms reports whether pod matches every term of a non-empty list.
func podMatchesAllTerms(terms []incomingTerm, pod *corev1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].matches(pod) {
			return false
		}
	}
	return true
}

// parseError returns the error kube-scheduler's NewPodInfo returns for a pod
// whose affinity selectors do not parse: the first error of each group of
// terms, aggregated. nil when every selector parses.
func parseError(pod *corev1.Pod) error {
	var reqAff, reqAnti []corev1.PodAffinityTerm
	var prefAff, prefAnti []corev1.WeightedPodAffinityTerm
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			reqAff = a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			prefAff = a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
		if a.PodAntiAffinity != nil {
			reqAnti = a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			prefAnti = a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
	}
	weighted := func(in []corev1.WeightedPodAffinityTerm) []corev1.PodAffinityTerm {
		out := make([]corev1.PodAffinityTerm, len(in))
		for i := range in {
			out[i] = in[i].PodAffinityTerm
		}
		return out
	}
	var errs []error
	for _, g := range []struct {
		what  string
		terms []corev1.PodAffinityTerm
	}{
		{"requiredAffinityTerms", reqAff},
		{"requiredAntiAffinityTerms", reqAnti},
		{"preferredAffinityTerms", weighted(prefAff)},
		{"preferredAntiAffinityTerms", weighted(prefAnti)},
	} {
		if err := firstSelectorError(g.terms); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", g.what, err))
		}
	}
	return utilerrors.NewAggregate(errs)
}

func firstSelectorError(terms []corev1.PodAffinityTerm) error {
	for i := range terms {
		if _, err := metav1.LabelSelectorAsSelector(terms[i].LabelSelector); err != nil {
			return err
		}
		if _, err := metav1.LabelSelectorAsSelector(terms[i].NamespaceSelector); err != nil {
			return err
		}
	}
	return nil
}

// chunkCount splits n nodes into pieces of work for the parallelizer: enough
// to keep the workers busy, few enough that each piece's partial result is
// worth keeping apart and merging afterwards.
func chunkCount(n int) int {
	const maxChunks = 64
	return min(n, maxChunks)
}

// parallelChunks runs work over [0, n) in chunkCount(n) contiguous chunks
// on the handle's parallelizer; work gets the chunk index and its bounds.
func (pl *InterPodAffinity) parallelChunks(ctx context.Context, n int, work func(chunk, start, end int)) {
	chunks := chunkCount(n)
	if chunks == 0 {
		return
	}
	size := (n + chunks - 1) / chunks
	pl.handle.Parallelizer().Until(ctx, chunks, func(c int) {
		start := min(c*size, n)
		work(c, start, min(start+size, n))
	})
}
