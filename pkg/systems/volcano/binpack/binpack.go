// Package binpack is Volcano's binpack plugin (volcano-sh/volcano
// pkg/scheduler/plugins/binpack): a node order function that prefers the
// nodes a task fills most, over cpu, memory and the resources its
// arguments list. Its score is Volcano's float, neither normalized nor
// bounded by kube-scheduler's [0, 100]: Volcano adds it as it is to the
// other node order scores (docs/design.md#volcanos-node-order).
package binpack

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// Name is the plugin's name in a volcano-scheduler.conf.
const Name = "binpack"

// The plugin's arguments (binpack.go's constants).
const (
	WeightArg          = "binpack.weight"
	CPUArg             = "binpack.cpu"
	MemoryArg          = "binpack.memory"
	ResourcesArg       = "binpack.resources"
	resourcesArgPrefix = ResourcesArg + "."
)

// Binpack holds the weights calculateWeight reads from the arguments.
type Binpack struct {
	// Weight multiplies the whole score (binpack.weight); Volcano
	// registers no node order function when it is 0.
	Weight int
	// Resources weighs each resource scored: cpu, memory and those
	// binpack.resources lists.
	Resources map[corev1.ResourceName]int
	// scalars are the scored resources other than cpu and memory, sorted.
	scalars []corev1.ResourceName
}

// New reads the arguments as Volcano's calculateWeight does: every weight
// defaults to 1, a negative cpu, memory or resource weight is 1, and a
// value that is not an integer is ignored (Arguments.GetInt).
func New(args volcano.Arguments) *Binpack {
	b := &Binpack{Weight: args.Int(WeightArg, 1), Resources: map[corev1.ResourceName]int{}}
	atLeastZero := func(w int) int {
		if w < 0 {
			return 1
		}
		return w
	}
	cpu, memory := atLeastZero(args.Int(CPUArg, 1)), atLeastZero(args.Int(MemoryArg, 1))
	for _, r := range strings.Split(args.String(ResourcesArg, ""), ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		b.Resources[corev1.ResourceName(r)] = atLeastZero(args.Int(resourcesArgPrefix+r, 1))
	}
	b.Resources[corev1.ResourceCPU] = cpu
	b.Resources[corev1.ResourceMemory] = memory
	for r := range b.Resources {
		if r != corev1.ResourceCPU && r != corev1.ResourceMemory {
			b.scalars = append(b.scalars, r)
		}
	}
	slices.Sort(b.scalars)
	return b
}

// Score is Volcano's BinPackingScore for pod on the node: for each
// resource the pod requests and the plugin weighs, (request + used) x
// weight / allocatable, summed, divided by the weights' sum and scaled to
// 100 x binpack.weight; 0 when any of them would overflow the node. Used
// is what the node's pods request, the request the pod's containers
// (its Resreq: regular containers and overhead, init containers left
// out). Amounts are in Volcano's units (millicores, bytes, thousandths
// of a scalar) and summed in its order (cpu, memory, then the scalars),
// so the float is Volcano's to the last bit where its map order is.
func (b *Binpack) Score(pod *corev1.Pod, ni *framework.NodeInfo) float64 {
	req := Request(pod)
	score, weightSum := 0.0, 0
	add := func(r corev1.ResourceName, request, capacity, used float64) bool {
		if request < 0.1 { // Resource.ResourceNames skips amounts below minResource
			return true
		}
		w, ok := b.Resources[r]
		if !ok {
			return true
		}
		s, fits := resourceScore(request, capacity, used, w)
		if !fits {
			return false
		}
		score += s
		weightSum += w
		return true
	}
	alloc, used := ni.Allocatable, ni.Requested
	if !add(corev1.ResourceCPU, float64(req.MilliCPU), float64(alloc.MilliCPU), float64(used.MilliCPU)) ||
		!add(corev1.ResourceMemory, float64(req.Memory), float64(alloc.Memory), float64(used.Memory)) {
		return 0
	}
	for _, r := range b.scalars {
		if !add(r, milli(req.Get(r)), milli(alloc.Get(r)), milli(used.Get(r))) {
			return 0
		}
	}
	if weightSum > 0 {
		score /= float64(weightSum)
	}
	return score * float64(framework.MaxNodeScore*int64(b.Weight))
}

// resourceScore is Volcano's ResourceBinPackingScore; fits is false when
// the request does not fit in what is left.
func resourceScore(requested, capacity, used float64, weight int) (score float64, fits bool) {
	if capacity == 0 || weight == 0 {
		return 0, true
	}
	usedFinally := requested + used
	if usedFinally > capacity {
		return 0, false
	}
	return usedFinally * float64(weight) / capacity, true
}

func milli(v int64) float64 { return float64(v * 1000) }

// Request is Volcano's Resreq of a pod (GetPodResourceWithoutInitContainers):
// the sum of its regular containers' requests plus its overhead.
func Request(pod *corev1.Pod) *framework.Resource {
	r := &framework.Resource{}
	for i := range pod.Spec.Containers {
		r.Add(pod.Spec.Containers[i].Resources.Requests)
	}
	r.Add(pod.Spec.Overhead)
	return r
}
