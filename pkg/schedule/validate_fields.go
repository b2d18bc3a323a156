package schedule

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateFields checks the fields of a pod no API server has seen (a
// manifest from -f, a workload's pod template) that the v1.37 API server
// validates when the pod is created and that name the pod or steer its
// placement: the name (a DNS subdomain), the namespace, label keys and
// values, annotation keys, container names and ports, the priority class
// name (not the scheduler's: the server takes any), the node selector, node
// and pod (anti-)affinity (operators, keys, values, weights, topology keys),
// tolerations and topology spread constraints. The rules are k8s.io/kubernetes
// pkg/apis/core/validation's (ValidatePodSpec and what it calls:
// ValidateNodeSelectorRequirement, ValidateNodeFieldSelectorRequirement,
// ValidatePreferredSchedulingTerms, validatePodAffinityTerm,
// ValidateTolerations, validateTopologySpreadConstraints,
// validateContainerPorts), with apimachinery's own validators where it has
// them. Such a pod cannot be created, so no verdict about it is sound: the
// verbs refuse it as bad input (docs/design.md#snapshot). Fields the pipeline
// never reads (images, volumes, probes, security contexts) are left to the
// server.
func ValidateFields(pod *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	if pod.Name == "" {
		errs = append(errs, field.Required(meta.Child("name"), "name or generateName is required"))
	} else {
		for _, msg := range apivalidation.NameIsDNSSubdomain(pod.Name, false) {
			errs = append(errs, field.Invalid(meta.Child("name"), pod.Name, msg))
		}
	}
	if pod.Namespace != "" {
		for _, msg := range apivalidation.ValidateNamespaceName(pod.Namespace, false) {
			errs = append(errs, field.Invalid(meta.Child("namespace"), pod.Namespace, msg))
		}
	}
	errs = append(errs, metav1validation.ValidateLabels(pod.Labels, meta.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(pod.Annotations, meta.Child("annotations"))...)

	spec := field.NewPath("spec")
	errs = append(errs, validateContainerFields(pod, spec)...)
	errs = append(errs, metav1validation.ValidateLabels(pod.Spec.NodeSelector, spec.Child("nodeSelector"))...)
	// The server validates the priority class name, not the scheduler's.
	if pc := pod.Spec.PriorityClassName; pc != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(pc, false) {
			errs = append(errs, field.Invalid(spec.Child("priorityClassName"), pc, msg))
		}
	}
	if a := pod.Spec.Affinity; a != nil {
		errs = append(errs, validateAffinity(a, spec.Child("affinity"))...)
	}
	errs = append(errs, validateTolerations(pod.Spec.Tolerations, spec.Child("tolerations"))...)
	errs = append(errs, validateSpreadConstraints(pod.Spec.TopologySpreadConstraints, spec.Child("topologySpreadConstraints"))...)
	return errs
}

// validateContainerFields checks container names (a DNS label each, unique
// across init and app containers) and ports (validateContainerPorts).
func validateContainerFields(pod *corev1.Pod, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for _, list := range []struct {
		path       *field.Path
		containers []corev1.Container
	}{{spec.Child("initContainers"), pod.Spec.InitContainers}, {spec.Child("containers"), pod.Spec.Containers}} {
		for i := range list.containers {
			c := &list.containers[i]
			path := list.path.Index(i)
			switch {
			case c.Name == "":
				errs = append(errs, field.Required(path.Child("name"), ""))
			case names.Has(c.Name):
				errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
			default:
				for _, msg := range validation.IsDNS1123Label(c.Name) {
					errs = append(errs, field.Invalid(path.Child("name"), c.Name, msg))
				}
			}
			names.Insert(c.Name)
			errs = append(errs, validatePorts(c.Ports, path.Child("ports"))...)
		}
	}
	return errs
}

var portProtocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)

// validatePorts is validateContainerPorts: the host ports are what the
// NodePorts plugin reads.
func validatePorts(ports []corev1.ContainerPort, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, p := range ports {
		at := path.Index(i)
		if p.Name != "" {
			for _, msg := range validation.IsValidPortName(p.Name) {
				errs = append(errs, field.Invalid(at.Child("name"), p.Name, msg))
			}
			if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(at.Child("name"), p.Name))
			}
			names.Insert(p.Name)
		}
		if p.ContainerPort == 0 {
			errs = append(errs, field.Required(at.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
				errs = append(errs, field.Invalid(at.Child("containerPort"), p.ContainerPort, msg))
			}
		}
		if p.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(p.HostPort)) {
				errs = append(errs, field.Invalid(at.Child("hostPort"), p.HostPort, msg))
			}
		}
		if p.Protocol != "" && !portProtocols.Has(p.Protocol) {
			errs = append(errs, field.NotSupported(at.Child("protocol"), p.Protocol, sets.List(portProtocols)))
		}
	}
	return errs
}

// validateAffinity is validateAffinity for a new pod: invalid label values
// are refused in required node affinity and in pod affinity selectors, and
// allowed in preferred node affinity (the server allows them there).
func validateAffinity(a *corev1.Affinity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := path.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			terms := p.Child("requiredDuringSchedulingIgnoredDuringExecution").Child("nodeSelectorTerms")
			if len(req.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(terms, "must have at least one node selector term"))
			}
			for i, t := range req.NodeSelectorTerms {
				errs = append(errs, validateNodeSelectorTerm(t, false, terms.Index(i))...)
			}
		}
		preferred := p.Child("preferredDuringSchedulingIgnoredDuringExecution")
		for i, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			errs = append(errs, validateWeight(t.Weight, preferred.Index(i).Child("weight"))...)
			errs = append(errs, validateNodeSelectorTerm(t.Preference, true, preferred.Index(i).Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		errs = append(errs, validatePodAffinity(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, path.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		errs = append(errs, validatePodAffinity(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, path.Child("podAntiAffinity"))...)
	}
	return errs
}

// validatePodAffinity checks the terms of podAffinity or podAntiAffinity
// (validatePodAffinityTerms, validateWeightedPodAffinityTerms).
func validatePodAffinity(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range required {
		errs = append(errs, validatePodAffinityTerm(t, path.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i, t := range preferred {
		at := path.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		errs = append(errs, validateWeight(t.Weight, at.Child("weight"))...)
		errs = append(errs, validatePodAffinityTerm(t.PodAffinityTerm, at.Child("podAffinityTerm"))...)
	}
	return errs
}

// validatePodAffinityTerm is validatePodAffinityTerm: the selectors, the
// namespaces, the label keys and a topology key.
func validatePodAffinityTerm(t corev1.PodAffinityTerm, path *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs := metav1validation.ValidateLabelSelector(t.LabelSelector, opts, path.Child("labelSelector"))
	errs = append(errs, metav1validation.ValidateLabelSelector(t.NamespaceSelector, opts, path.Child("namespaceSelector"))...)
	for _, ns := range t.Namespaces {
		for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
			errs = append(errs, field.Invalid(path.Child("namespace"), ns, msg))
		}
	}
	errs = append(errs, validateLabelKeys(t.MatchLabelKeys, path.Child("matchLabelKeys"))...)
	errs = append(errs, validateLabelKeys(t.MismatchLabelKeys, path.Child("mismatchLabelKeys"))...)
	if t.TopologyKey == "" {
		errs = append(errs, field.Required(path.Child("topologyKey"), "can not be empty"))
	}
	return append(errs, metav1validation.ValidateLabelName(t.TopologyKey, path.Child("topologyKey"))...)
}

// validateLabelKeys checks matchLabelKeys and mismatchLabelKeys as label
// names (the rule every v1.37 variant of their validation shares).
func validateLabelKeys(keys []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, k := range keys {
		errs = append(errs, metav1validation.ValidateLabelName(k, path.Index(i))...)
	}
	return errs
}

func validateWeight(w int32, path *field.Path) field.ErrorList {
	if w <= 0 || w > 100 {
		return field.ErrorList{field.Invalid(path, w, "must be in the range 1-100")}
	}
	return nil
}

// validateNodeSelectorTerm is ValidateNodeSelectorTerm: expressions on
// labels (ValidateNodeSelectorRequirement) and on fields
// (ValidateNodeFieldSelectorRequirement: metadata.name only).
func validateNodeSelectorTerm(t corev1.NodeSelectorTerm, allowInvalidValues bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for j, rq := range t.MatchExpressions {
		at := path.Child("matchExpressions").Index(j)
		switch rq.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(rq.Values) == 0 {
				errs = append(errs, field.Required(at.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(rq.Values) > 0 {
				errs = append(errs, field.Forbidden(at.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(rq.Values) != 1 {
				errs = append(errs, field.Required(at.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
			}
		default:
			errs = append(errs, field.Invalid(at.Child("operator"), rq.Operator, "not a valid selector operator"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(rq.Key, at.Child("key"))...)
		if !allowInvalidValues {
			for i, v := range rq.Values {
				for _, msg := range validation.IsValidLabelValue(v) {
					errs = append(errs, field.Invalid(at.Child("values").Index(i), v, msg))
				}
			}
		}
	}
	for j, rq := range t.MatchFields {
		at := path.Child("matchFields").Index(j)
		switch rq.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(rq.Values) != 1 {
				errs = append(errs, field.Required(at.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
			}
		default:
			errs = append(errs, field.Invalid(at.Child("operator"), rq.Operator, "not a valid selector operator"))
		}
		if rq.Key != "metadata.name" {
			errs = append(errs, field.Invalid(at.Child("key"), rq.Key, "not a valid field selector key"))
			continue
		}
		for i, v := range rq.Values {
			for _, msg := range apivalidation.NameIsDNSSubdomain(v, false) {
				errs = append(errs, field.Invalid(at.Child("values").Index(i), v, msg))
			}
		}
	}
	return errs
}

var taintEffects = sets.New(corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)

// validateTolerations is ValidateTolerations. The comparison operators Lt
// and Gt (alpha TaintTolerationComparisonOperators, off by default) are
// taken with an integer value: a cluster may have the gate on, and a
// refusal here would be a wrong "bad input" there.
func validateTolerations(tolerations []corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		at := path.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, at.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(at.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(at.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(at.Child("operator"), t.Value, msg))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(at.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		case corev1.TolerationOpLt, corev1.TolerationOpGt:
			if _, err := strconv.ParseInt(t.Value, 10, 64); err != nil {
				errs = append(errs, field.Invalid(at.Child("value"), t.Value, "must be a decimal integer"))
			}
		default:
			errs = append(errs, field.NotSupported(at.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if t.Effect != "" && !taintEffects.Has(t.Effect) {
			errs = append(errs, field.NotSupported(at.Child("effect"), t.Effect, sets.List(taintEffects)))
		}
	}
	return errs
}

var (
	spreadActions  = sets.New(corev1.DoNotSchedule, corev1.ScheduleAnyway)
	spreadPolicies = sets.New(corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyHonor)
)

// validateSpreadConstraints is validateTopologySpreadConstraints (the
// matchLabelKeys rules that depend on feature gates: label names only).
func validateSpreadConstraints(constraints []corev1.TopologySpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range constraints {
		at := path.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(at.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(at.Child("topologyKey"), "can not be empty"))
		}
		if !spreadActions.Has(c.WhenUnsatisfiable) {
			errs = append(errs, field.NotSupported(at.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, sets.List(spreadActions)))
		}
		for _, rest := range constraints[i+1:] {
			if c.TopologyKey == rest.TopologyKey && c.WhenUnsatisfiable == rest.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(at.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				errs = append(errs, field.Invalid(at.Child("minDomains"), *c.MinDomains, "must be greater than zero"))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				errs = append(errs, field.Invalid(at.Child("minDomains"), *c.MinDomains, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		for _, p := range []struct {
			name   string
			policy *corev1.NodeInclusionPolicy
		}{{"nodeAffinityPolicy", c.NodeAffinityPolicy}, {"nodeTaintsPolicy", c.NodeTaintsPolicy}} {
			if p.policy != nil && !spreadPolicies.Has(*p.policy) {
				errs = append(errs, field.NotSupported(at.Child(p.name), *p.policy, sets.List(spreadPolicies)))
			}
		}
		errs = append(errs, validateLabelKeys(c.MatchLabelKeys, at.Child("matchLabelKeys"))...)
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, at.Child("labelSelector"))...)
	}
	return errs
}
