package schedule

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
)

// ApplyPriorities fills in each pod's priority from its PriorityClass as the
// Priority admission plugin does on create: a pod naming no class gets the
// global default class (the lowest-valued one if several claim it) or
// priority 0; a class that does not exist, or a priority that contradicts the
// class, is an error, as admission would reject the pod. The preemption
// policy is filled in from the class when the pod sets none. Members change
// order when their priorities change: call gang.Gang.SortMembers afterwards.
func ApplyPriorities(pods []*corev1.Pod, classes []*schedulingv1.PriorityClass) error {
	byName := make(map[string]*schedulingv1.PriorityClass, len(classes))
	var globalDefault *schedulingv1.PriorityClass
	for _, pc := range classes {
		byName[pc.Name] = pc
		if pc.GlobalDefault && (globalDefault == nil || pc.Value < globalDefault.Value) {
			globalDefault = pc
		}
	}
	var errs []error
	for _, pod := range pods {
		name := pod.Spec.PriorityClassName
		var value int32
		var policy *corev1.PreemptionPolicy
		switch pc, ok := byName[name]; {
		case name == "" && globalDefault != nil:
			name, value, policy = globalDefault.Name, globalDefault.Value, globalDefault.PreemptionPolicy
		case name == "":
			lower := corev1.PreemptLowerPriority
			policy = &lower
		case ok:
			value, policy = pc.Value, pc.PreemptionPolicy
		default:
			v, system := SystemPriorityClasses[name]
			if !system {
				errs = append(errs, fmt.Errorf("pod %s/%s: no PriorityClass with name %s was found", pod.Namespace, pod.Name, name))
				continue
			}
			lower := corev1.PreemptLowerPriority
			value, policy = v, &lower
		}
		if pod.Spec.Priority != nil && *pod.Spec.Priority != value {
			errs = append(errs, fmt.Errorf("pod %s/%s: the integer value of priority (%d) must not be provided in pod spec; "+
				"priority admission controller computed %d from the given PriorityClass name", pod.Namespace, pod.Name, *pod.Spec.Priority, value))
			continue
		}
		pod.Spec.PriorityClassName = name
		pod.Spec.Priority = &value
		if pod.Spec.PreemptionPolicy == nil && policy != nil {
			p := *policy
			pod.Spec.PreemptionPolicy = &p
		}
	}
	return errors.Join(errs...)
}
