package noderesources_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
)

type res = testutil.Res

// fitNode is the node of kube-scheduler's TestEnoughRequests:
// makeAllocatableResources(10, 20, 32, 5, 20, 5).
func fitNode() *corev1.Node {
	return node("node", res{
		corev1.ResourceCPU: "10m", corev1.ResourceMemory: "20", corev1.ResourcePods: "32",
		extendedResourceA: "5", corev1.ResourceEphemeralStorage: "20", hugePageResourceA: "5",
	})
}

// cpuMem is a request of milli-CPU and bytes of memory, as kube-scheduler's
// newResourcePod(framework.Resource{MilliCPU: c, Memory: m}) writes it.
func cpuMem(milliCPU, memory string) res {
	return res{corev1.ResourceCPU: milliCPU + "m", corev1.ResourceMemory: memory}
}

func with(r res, name corev1.ResourceName, q string) res {
	out := res{name: q}
	for k, v := range r {
		out[k] = v
	}
	return out
}

func unschedulable(reasons ...string) *framework.Status {
	return framework.NewStatus(framework.Unschedulable, reasons...).WithPlugin(noderesources.Name)
}

func unresolvable(reasons ...string) *framework.Status {
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, reasons...).WithPlugin(noderesources.Name)
}

type filterCase struct {
	name     string
	pod      *corev1.Pod
	existing []*testutil.PodWrapper
	// node defaults to fitNode().
	node *corev1.Node
	args *configv1.NodeResourcesFitArgs
	want *framework.Status
	// wantFits is what Fits reports; it ignores nothing.
	wantFits []noderesources.InsufficientResource
}

func runFilterCases(t *testing.T, cases []filterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node
			if n == nil {
				n = fitNode()
			}
			nodeInfo := nodeInfos([]*corev1.Node{n}, onNode(n.Name, tc.existing...))[0]
			var args runtime.Object
			if tc.args != nil {
				args = tc.args
			}
			pl := newPlugin[*noderesources.Fit](t, noderesources.New, args)

			ctx := context.Background()
			state := framework.NewCycleState()
			result, status := pl.PreFilter(ctx, state, tc.pod, []*framework.NodeInfo{nodeInfo})
			if result != nil || !status.IsSuccess() {
				t.Fatalf("PreFilter = %v, %v; want nil, success", result, status)
			}
			got := pl.Filter(ctx, state, tc.pod, nodeInfo)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter status (-want +got):\n%s", diff)
			}
			// Filter reads a cloned state as it reads the original.
			if diff := cmp.Diff(tc.want, pl.Filter(ctx, state.Clone(), tc.pod, nodeInfo)); diff != "" {
				t.Errorf("Filter status on a cloned state (-want +got):\n%s", diff)
			}

			gotFits := noderesources.NewFitCheck(framework.NewPodInfo(tc.pod), nil).Fits(nodeInfo)
			if diff := cmp.Diff(tc.wantFits, gotFits); diff != "" {
				t.Errorf("Fits (-want +got):\n%s", diff)
			}
		})
	}
}

func insufficient(name corev1.ResourceName, requested, used, capacity int64) noderesources.InsufficientResource {
	return noderesources.InsufficientResource{
		ResourceName: name, Reason: "Insufficient " + string(name),
		Requested: requested, Used: used, Capacity: capacity, Unresolvable: requested > capacity,
	}
}

// TestFilterEnoughRequests recreates kube-scheduler's TestEnoughRequests.
func TestFilterEnoughRequests(t *testing.T) {
	runFilterCases(t, []filterCase{
		{
			name:     "no resources requested always fits",
			pod:      bare().Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("10", "20"))},
		},
		{
			name:     "too many resources fails",
			pod:      bare().Containers(cpuMem("1", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("10", "20"))},
			want:     unschedulable("Insufficient cpu", "Insufficient memory"),
			wantFits: []noderesources.InsufficientResource{
				insufficient(corev1.ResourceCPU, 1, 10, 10),
				insufficient(corev1.ResourceMemory, 1, 20, 20),
			},
		},
		{
			name:     "too many resources fails due to init container cpu",
			pod:      bare().Containers(cpuMem("1", "1")).InitReq(cpuMem("3", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("8", "19"))},
			want:     unschedulable("Insufficient cpu"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceCPU, 3, 8, 10)},
		},
		{
			name:     "too many resources fails due to highest init container cpu",
			pod:      bare().Containers(cpuMem("1", "1")).InitReq(cpuMem("3", "1")).InitReq(cpuMem("2", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("8", "19"))},
			want:     unschedulable("Insufficient cpu"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceCPU, 3, 8, 10)},
		},
		{
			name:     "too many resources fails due to init container memory",
			pod:      bare().Containers(cpuMem("1", "1")).InitReq(cpuMem("1", "3")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("9", "19"))},
			want:     unschedulable("Insufficient memory"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceMemory, 3, 19, 20)},
		},
		{
			name:     "too many resources fails due to highest init container memory",
			pod:      bare().Containers(cpuMem("1", "1")).InitReq(cpuMem("1", "3")).InitReq(cpuMem("1", "2")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("9", "19"))},
			want:     unschedulable("Insufficient memory"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceMemory, 3, 19, 20)},
		},
		{
			name:     "init container fits because it's the max, not sum, of containers and init containers",
			pod:      bare().Containers(cpuMem("1", "1")).InitReq(cpuMem("1", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("9", "19"))},
		},
		{
			name:     "multiple init containers fit because it's the max, not sum, of containers and init containers",
			pod:      bare().Containers(cpuMem("1", "1")).InitReq(cpuMem("1", "1")).InitReq(cpuMem("1", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("9", "19"))},
		},
		{
			name:     "both resources fit",
			pod:      bare().Containers(cpuMem("1", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "5"))},
		},
		{
			name:     "one resource memory fits",
			pod:      bare().Containers(cpuMem("2", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("9", "5"))},
			want:     unschedulable("Insufficient cpu"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceCPU, 2, 9, 10)},
		},
		{
			name:     "one resource cpu fits",
			pod:      bare().Containers(cpuMem("1", "2")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "19"))},
			want:     unschedulable("Insufficient memory"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceMemory, 2, 19, 20)},
		},
		{
			name:     "equal edge case",
			pod:      bare().Containers(cpuMem("5", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "19"))},
		},
		{
			name:     "equal edge case for init container",
			pod:      bare().Containers(cpuMem("4", "1")).InitReq(cpuMem("5", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "19"))},
		},
		{
			name:     "extended resource fits",
			pod:      bare().Containers(res{extendedResourceA: "1"}).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(res{})},
		},
		{
			name:     "extended resource fits for init container",
			pod:      bare().Containers(res{}).InitReq(res{extendedResourceA: "1"}).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(res{})},
		},
		{
			name:     "extended resource capacity enforced",
			pod:      bare().Containers(with(cpuMem("1", "1"), extendedResourceA, "10")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("0", "0"), extendedResourceA, "0"))},
			want:     unresolvable("Insufficient example.com/aaa"),
			wantFits: []noderesources.InsufficientResource{insufficient(extendedResourceA, 10, 0, 5)},
		},
		{
			name:     "extended resource capacity enforced for init container",
			pod:      bare().Containers(res{}).InitReq(with(cpuMem("1", "1"), extendedResourceA, "10")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("0", "0"), extendedResourceA, "0"))},
			want:     unresolvable("Insufficient example.com/aaa"),
			wantFits: []noderesources.InsufficientResource{insufficient(extendedResourceA, 10, 0, 5)},
		},
		{
			name:     "extended resource allocatable enforced",
			pod:      bare().Containers(with(cpuMem("1", "1"), extendedResourceA, "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("0", "0"), extendedResourceA, "5"))},
			want:     unschedulable("Insufficient example.com/aaa"),
			wantFits: []noderesources.InsufficientResource{insufficient(extendedResourceA, 1, 5, 5)},
		},
		{
			name:     "extended resource allocatable enforced for init container",
			pod:      bare().Containers(res{}).InitReq(with(cpuMem("1", "1"), extendedResourceA, "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("0", "0"), extendedResourceA, "5"))},
			want:     unschedulable("Insufficient example.com/aaa"),
			wantFits: []noderesources.InsufficientResource{insufficient(extendedResourceA, 1, 5, 5)},
		},
		{
			name: "extended resource allocatable enforced for multiple containers",
			pod: bare().Containers(
				with(cpuMem("1", "1"), extendedResourceA, "3"),
				with(cpuMem("1", "1"), extendedResourceA, "3")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("0", "0"), extendedResourceA, "2"))},
			want:     unresolvable("Insufficient example.com/aaa"),
			wantFits: []noderesources.InsufficientResource{insufficient(extendedResourceA, 6, 2, 5)},
		},
		{
			name: "extended resource allocatable admits multiple init containers",
			pod: bare().Containers(res{}).
				InitReq(with(cpuMem("1", "1"), extendedResourceA, "3")).
				InitReq(with(cpuMem("1", "1"), extendedResourceA, "3")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("0", "0"), extendedResourceA, "2"))},
		},
		{
			name: "extended resource allocatable enforced for multiple init containers",
			pod: bare().Containers(res{}).
				InitReq(with(cpuMem("1", "1"), extendedResourceA, "6")).
				InitReq(with(cpuMem("1", "1"), extendedResourceA, "3")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("0", "0"), extendedResourceA, "2"))},
			want:     unresolvable("Insufficient example.com/aaa"),
			wantFits: []noderesources.InsufficientResource{insufficient(extendedResourceA, 6, 2, 5)},
		},
		{
			name:     "extended resource allocatable enforced for unknown resource",
			pod:      bare().Containers(with(cpuMem("1", "1"), extendedResourceB, "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("0", "0"))},
			want:     unresolvable("Insufficient example.com/bbb"),
			wantFits: []noderesources.InsufficientResource{insufficient(extendedResourceB, 1, 0, 0)},
		},
		{
			name:     "extended resource allocatable enforced for unknown resource for init container",
			pod:      bare().Containers(res{}).InitReq(with(cpuMem("1", "1"), extendedResourceB, "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("0", "0"))},
			want:     unresolvable("Insufficient example.com/bbb"),
			wantFits: []noderesources.InsufficientResource{insufficient(extendedResourceB, 1, 0, 0)},
		},
		{
			name:     "kubernetes.io resource capacity enforced",
			pod:      bare().Containers(with(cpuMem("1", "1"), kubernetesIOResourceA, "10")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("0", "0"))},
			want:     unresolvable("Insufficient kubernetes.io/something"),
			wantFits: []noderesources.InsufficientResource{insufficient(kubernetesIOResourceA, 10, 0, 0)},
		},
		{
			name:     "kubernetes.io resource capacity enforced for init container",
			pod:      bare().Containers(res{}).InitReq(with(cpuMem("1", "1"), kubernetesIOResourceB, "10")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("0", "0"))},
			want:     unresolvable("Insufficient subdomain.kubernetes.io/something"),
			wantFits: []noderesources.InsufficientResource{insufficient(kubernetesIOResourceB, 10, 0, 0)},
		},
		{
			name:     "hugepages resource capacity enforced",
			pod:      bare().Containers(with(cpuMem("1", "1"), hugePageResourceA, "10")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("0", "0"), hugePageResourceA, "0"))},
			want:     unresolvable("Insufficient hugepages-2Mi"),
			wantFits: []noderesources.InsufficientResource{insufficient(hugePageResourceA, 10, 0, 5)},
		},
		{
			name:     "hugepages resource capacity enforced for init container",
			pod:      bare().Containers(res{}).InitReq(with(cpuMem("1", "1"), hugePageResourceA, "10")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("0", "0"), hugePageResourceA, "0"))},
			want:     unresolvable("Insufficient hugepages-2Mi"),
			wantFits: []noderesources.InsufficientResource{insufficient(hugePageResourceA, 10, 0, 5)},
		},
		{
			name: "hugepages resource allocatable enforced for multiple containers",
			pod: bare().Containers(
				with(cpuMem("1", "1"), hugePageResourceA, "3"),
				with(cpuMem("1", "1"), hugePageResourceA, "3")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("0", "0"), hugePageResourceA, "2"))},
			want:     unresolvable("Insufficient hugepages-2Mi"),
			wantFits: []noderesources.InsufficientResource{insufficient(hugePageResourceA, 6, 2, 5)},
		},
		{
			name:     "skip checking ignored extended resource",
			pod:      bare().Containers(with(cpuMem("1", "1"), extendedResourceB, "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("0", "0"))},
			args:     &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"example.com/bbb"}},
			// Fits ignores nothing.
			wantFits: []noderesources.InsufficientResource{insufficient(extendedResourceB, 1, 0, 0)},
		},
		{
			name:     "resources + pod overhead fits",
			pod:      bare().Containers(cpuMem("1", "1")).Overhead(res{corev1.ResourceCPU: "3m", corev1.ResourceMemory: "13"}).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "5"))},
		},
		{
			name:     "requests + overhead does not fit for memory",
			pod:      bare().Containers(cpuMem("1", "1")).Overhead(res{corev1.ResourceCPU: "1m", corev1.ResourceMemory: "15"}).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "5"))},
			want:     unschedulable("Insufficient memory"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceMemory, 16, 5, 20)},
		},
		{
			name: "skip checking ignored extended resource via resource groups",
			pod: bare().Containers(res{
				corev1.ResourceCPU: "1m", corev1.ResourceMemory: "1", extendedResourceB: "1", kubernetesIOResourceA: "1",
			}).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("0", "0"))},
			args:     &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com"}},
			want:     unresolvable("Insufficient kubernetes.io/something"),
			wantFits: []noderesources.InsufficientResource{
				insufficient(extendedResourceB, 1, 0, 0),
				insufficient(kubernetesIOResourceA, 1, 0, 0),
			},
		},
		{
			name:     "skip checking extended resource request with quantity zero",
			pod:      bare().Containers(with(cpuMem("1", "1"), extendedResourceA, "0")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("0", "0"), extendedResourceA, "6"))},
		},
		{
			name:     "skip checking resource request with quantity zero",
			pod:      bare().Containers(res{extendedResourceA: "1"}).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("20", "30"), extendedResourceA, "1"))},
		},
		{
			name:     "both pod-level and container-level resources fit",
			pod:      bare().Containers(cpuMem("1", "1")).PodLevelReq(cpuMem("1", "2")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "5"))},
		},
		{
			name:     "pod-level cpu resource not fit",
			pod:      bare().Containers(cpuMem("1", "1")).PodLevelReq(cpuMem("7", "2")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "5"))},
			want:     unschedulable("Insufficient cpu"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceCPU, 7, 5, 10)},
		},
		{
			name:     "pod-level memory resource not fit",
			pod:      bare().Containers(cpuMem("1", "1")).PodLevelReq(cpuMem("3", "2")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "19"))},
			want:     unschedulable("Insufficient memory"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceMemory, 2, 19, 20)},
		},
		{
			name: "pod-level hugepages resource fit",
			pod:  bare().PodLevelReq(with(cpuMem("3", "2"), hugePageResourceA, "5")).Obj(),
		},
		{
			name: "both pod-level and container-level hugepages resource fit",
			pod: bare().Containers(with(cpuMem("1", "1"), hugePageResourceA, "3")).
				PodLevelReq(with(cpuMem("3", "2"), hugePageResourceA, "5")).Obj(),
		},
		{
			name:     "pod-level hugepages resource not fit",
			pod:      bare().PodLevelReq(with(cpuMem("3", "2"), hugePageResourceA, "10")).Obj(),
			want:     unresolvable("Insufficient hugepages-2Mi"),
			wantFits: []noderesources.InsufficientResource{insufficient(hugePageResourceA, 10, 0, 5)},
		},
		{
			name:     "one pod-level cpu resource fits and all init and non-init containers resources fit",
			pod:      bare().Containers(cpuMem("1", "1")).PodLevelReq(cpuMem("3", "2")).InitReq(cpuMem("1", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "19"))},
			want:     unschedulable("Insufficient memory"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceMemory, 2, 19, 20)},
		},
		{
			// kube-scheduler hands this to DynamicResources when a
			// DeviceClass names the resource; the snapshot has no
			// DeviceClasses, so it is a node-allocatable resource here, as
			// kube-scheduler also treats it when no DeviceClass names it.
			name:     "extended resource no DeviceClass backs is checked against allocatable",
			pod:      bare().Containers(with(cpuMem("1", "1"), extendedResourceDRA, "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("0", "0"))},
			want:     unresolvable("Insufficient extended.resource.dra.io/something"),
			wantFits: []noderesources.InsufficientResource{insufficient(extendedResourceDRA, 1, 0, 0)},
		},
	})
}

// TestFilterReasonCombinations covers the reason lists Filter builds: native
// reasons in kube-scheduler's order, scalars after them by name, and the code
// UnschedulableAndUnresolvable as soon as one request exceeds the node.
func TestFilterReasonCombinations(t *testing.T) {
	gpuNode := func() *corev1.Node {
		return node("gpu", res{corev1.ResourceCPU: "8", corev1.ResourceMemory: "32Gi", corev1.ResourcePods: "2", gpu: "8", extendedResourceA: "2"})
	}
	runFilterCases(t, []filterCase{
		{
			name:     "a gang member short of gpus",
			node:     gpuNode(),
			pod:      testutil.MakePod().Req(res{corev1.ResourceCPU: "1", gpu: "6"}).Obj(),
			existing: []*testutil.PodWrapper{testutil.MakePod().Req(res{gpu: "4"}), testutil.MakePod().Name("p2").Containers()},
			want:     unschedulable("Too many pods", "Insufficient nvidia.com/gpu"),
			wantFits: []noderesources.InsufficientResource{
				{ResourceName: corev1.ResourcePods, Reason: "Too many pods", Requested: 1, Used: 2, Capacity: 2},
				insufficient(gpu, 6, 4, 8),
			},
		},
		{
			name:     "native resources and one scalar short: the scalar last",
			node:     gpuNode(),
			pod:      testutil.MakePod().Req(res{corev1.ResourceCPU: "6", corev1.ResourceMemory: "30Gi", gpu: "6"}).Obj(),
			existing: []*testutil.PodWrapper{testutil.MakePod().Req(res{corev1.ResourceCPU: "4", corev1.ResourceMemory: "4Gi", gpu: "4"})},
			want:     unschedulable("Insufficient cpu", "Insufficient memory", "Insufficient nvidia.com/gpu"),
			wantFits: []noderesources.InsufficientResource{
				insufficient(corev1.ResourceCPU, 6000, 4000, 8000),
				insufficient(corev1.ResourceMemory, 30<<30, 4<<30, 32<<30),
				insufficient(gpu, 6, 4, 8),
			},
		},
		{
			name:     "cpu and a scalar short, the scalar beyond the node: unresolvable",
			node:     gpuNode(),
			pod:      testutil.MakePod().Req(res{corev1.ResourceCPU: "6", gpu: "9"}).Obj(),
			existing: []*testutil.PodWrapper{testutil.MakePod().Req(res{corev1.ResourceCPU: "4"})},
			want:     unresolvable("Insufficient cpu", "Insufficient nvidia.com/gpu"),
			wantFits: []noderesources.InsufficientResource{
				insufficient(corev1.ResourceCPU, 6000, 4000, 8000),
				insufficient(gpu, 9, 0, 8),
			},
		},
		{
			name:     "only a scalar short",
			node:     gpuNode(),
			pod:      testutil.MakePod().Req(res{gpu: "6"}).Obj(),
			existing: []*testutil.PodWrapper{testutil.MakePod().Req(res{gpu: "4"})},
			want:     unschedulable("Insufficient nvidia.com/gpu"),
			wantFits: []noderesources.InsufficientResource{insufficient(gpu, 6, 4, 8)},
		},
		{
			name:     "two scalars short, sorted by name",
			node:     gpuNode(),
			pod:      testutil.MakePod().Req(res{gpu: "9", extendedResourceA: "1"}).Obj(),
			existing: []*testutil.PodWrapper{testutil.MakePod().Req(res{extendedResourceA: "2"})},
			want:     unresolvable("Insufficient example.com/aaa", "Insufficient nvidia.com/gpu"),
			wantFits: []noderesources.InsufficientResource{
				insufficient(extendedResourceA, 1, 2, 2),
				insufficient(gpu, 9, 0, 8),
			},
		},
		{
			name:     "every native and two scalars short",
			pod:      bare().Containers(res{corev1.ResourceCPU: "1m", corev1.ResourceMemory: "1", corev1.ResourceEphemeralStorage: "1", extendedResourceA: "1", hugePageResourceA: "1"}).Obj(),
			node:     node("full", res{corev1.ResourceCPU: "10m", corev1.ResourceMemory: "20", corev1.ResourcePods: "1", corev1.ResourceEphemeralStorage: "20", extendedResourceA: "5", hugePageResourceA: "5"}),
			existing: []*testutil.PodWrapper{bare().Containers(res{corev1.ResourceCPU: "10m", corev1.ResourceMemory: "20", corev1.ResourceEphemeralStorage: "20", extendedResourceA: "5", hugePageResourceA: "5"})},
			want:     unschedulable("Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage", "Insufficient example.com/aaa", "Insufficient hugepages-2Mi"),
			wantFits: []noderesources.InsufficientResource{
				{ResourceName: corev1.ResourcePods, Reason: "Too many pods", Requested: 1, Used: 1, Capacity: 1},
				insufficient(corev1.ResourceCPU, 1, 10, 10),
				insufficient(corev1.ResourceMemory, 1, 20, 20),
				insufficient(corev1.ResourceEphemeralStorage, 1, 20, 20),
				insufficient(extendedResourceA, 1, 5, 5),
				insufficient(hugePageResourceA, 1, 5, 5),
			},
		},
		{
			name:     "one unresolvable request makes the whole status unresolvable",
			pod:      bare().Containers(cpuMem("11", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("0", "20"))},
			want:     unresolvable("Insufficient cpu", "Insufficient memory"),
			wantFits: []noderesources.InsufficientResource{
				insufficient(corev1.ResourceCPU, 11, 0, 10),
				insufficient(corev1.ResourceMemory, 1, 20, 20),
			},
		},
		{
			name:     "ignoredResources never ignores hugepages",
			pod:      bare().Containers(res{hugePageResourceA: "6"}).Obj(),
			args:     &configv1.NodeResourcesFitArgs{IgnoredResources: []string{string(hugePageResourceA)}},
			want:     unresolvable("Insufficient hugepages-2Mi"),
			wantFits: []noderesources.InsufficientResource{insufficient(hugePageResourceA, 6, 0, 5)},
		},
		{
			name:     "ignoredResourceGroups never ignores kubernetes.io resources",
			pod:      bare().Containers(res{kubernetesIOResourceA: "1"}).Obj(),
			args:     &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"kubernetes.io"}},
			want:     unresolvable("Insufficient kubernetes.io/something"),
			wantFits: []noderesources.InsufficientResource{insufficient(kubernetesIOResourceA, 1, 0, 0)},
		},
	})
}

// TestFilterNotEnoughRequests recreates kube-scheduler's TestNotEnoughRequests:
// a node with room for one pod that already runs one.
func TestFilterNotEnoughRequests(t *testing.T) {
	onePodNode := func() *corev1.Node {
		return node("node", res{corev1.ResourceCPU: "10m", corev1.ResourceMemory: "20", corev1.ResourcePods: "1"})
	}
	tooManyPods := noderesources.InsufficientResource{ResourceName: corev1.ResourcePods, Reason: "Too many pods", Requested: 1, Used: 1, Capacity: 1}
	runFilterCases(t, []filterCase{
		{
			name:     "even without specified resources, predicate fails when there's no space for additional pod",
			node:     onePodNode(),
			pod:      bare().Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("10", "20"))},
			want:     unschedulable("Too many pods"),
			wantFits: []noderesources.InsufficientResource{tooManyPods},
		},
		{
			name:     "even if both resources fit, predicate fails when there's no space for additional pod",
			node:     onePodNode(),
			pod:      bare().Containers(cpuMem("1", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "5"))},
			want:     unschedulable("Too many pods"),
			wantFits: []noderesources.InsufficientResource{tooManyPods},
		},
		{
			name:     "even for equal edge case, predicate fails when there's no space for additional pod",
			node:     onePodNode(),
			pod:      bare().Containers(cpuMem("5", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "19"))},
			want:     unschedulable("Too many pods"),
			wantFits: []noderesources.InsufficientResource{tooManyPods},
		},
		{
			name:     "even for equal edge case, predicate fails when there's no space for additional pod due to init container",
			node:     onePodNode(),
			pod:      bare().Containers(cpuMem("5", "1")).InitReq(cpuMem("5", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("5", "19"))},
			want:     unschedulable("Too many pods"),
			wantFits: []noderesources.InsufficientResource{tooManyPods},
		},
		{
			name:     "no room for a pod and short of cpu and memory",
			node:     onePodNode(),
			pod:      bare().Containers(cpuMem("1", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("10", "20"))},
			want:     unschedulable("Too many pods", "Insufficient cpu", "Insufficient memory"),
			wantFits: []noderesources.InsufficientResource{
				tooManyPods,
				insufficient(corev1.ResourceCPU, 1, 10, 10),
				insufficient(corev1.ResourceMemory, 1, 20, 20),
			},
		},
	})
}

// TestFilterStorageRequests recreates kube-scheduler's TestStorageRequests.
func TestFilterStorageRequests(t *testing.T) {
	eph := func(q string) res { return res{corev1.ResourceEphemeralStorage: q} }
	runFilterCases(t, []filterCase{
		{
			name:     "empty storage requested, and pod fits",
			pod:      bare().Containers(cpuMem("1", "1")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("2", "10"))},
		},
		{
			name:     "storage ephemeral local storage request exceeds allocatable",
			pod:      bare().Containers(eph("25")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("2", "2"))},
			want:     unresolvable("Insufficient ephemeral-storage"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceEphemeralStorage, 25, 0, 20)},
		},
		{
			name:     "ephemeral local storage is sufficient",
			pod:      bare().Containers(eph("5")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(with(cpuMem("2", "2"), corev1.ResourceEphemeralStorage, "10"))},
		},
		{
			name:     "pod fits",
			pod:      bare().Containers(eph("10")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(cpuMem("2", "2"))},
		},
		{
			name:     "ephemeral local storage taken by other pods",
			pod:      bare().Containers(eph("15")).Obj(),
			existing: []*testutil.PodWrapper{bare().Containers(eph("10"))},
			want:     unschedulable("Insufficient ephemeral-storage"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceEphemeralStorage, 15, 10, 20)},
		},
	})
}

// TestFilterRestartableInitContainers recreates kube-scheduler's
// TestRestartableInitContainers: sidecars run alongside the containers, so
// their requests add up.
func TestFilterRestartableInitContainers(t *testing.T) {
	smallNode := func() *corev1.Node {
		return node("node", res{corev1.ResourceCPU: "2m", corev1.ResourceMemory: "0", corev1.ResourcePods: "1"})
	}
	cpu := func(milli string) res { return res{corev1.ResourceCPU: milli + "m"} }
	runFilterCases(t, []filterCase{
		{name: "allow pod without restartable init containers", node: smallNode(), pod: testutil.MakePod().Obj()},
		{name: "allow pod with restartable init containers", node: smallNode(), pod: testutil.MakePod().SidecarReq(nil).Obj()},
		{
			name: "allow pod if the total requested resources do not exceed the node's allocatable resources",
			node: smallNode(),
			pod:  testutil.MakePod().Req(cpu("1")).SidecarReq(cpu("1")).Obj(),
		},
		{
			name:     "not allow pod if the total requested resources do exceed the node's allocatable resources",
			node:     smallNode(),
			pod:      testutil.MakePod().Req(cpu("1")).SidecarReq(cpu("2")).Obj(),
			want:     unresolvable("Insufficient cpu"),
			wantFits: []noderesources.InsufficientResource{insufficient(corev1.ResourceCPU, 3, 0, 2)},
		},
	})
}

func TestFilterWithoutPreFilter(t *testing.T) {
	pl := newPlugin[*noderesources.Fit](t, noderesources.New, nil)
	nodeInfo := nodeInfos([]*corev1.Node{fitNode()}, nil)[0]
	status := pl.Filter(context.Background(), framework.NewCycleState(), bare().Obj(), nodeInfo)
	if status.Code() != framework.Error {
		t.Fatalf("Filter without PreFilter = %v, want an Error", status)
	}
	const want = `reading "PreFilterNodeResourcesFit" from cycleState: not found`
	if status.Message() != want {
		t.Errorf("message = %q, want %q", status.Message(), want)
	}
}

func TestInsufficientResourceShort(t *testing.T) {
	r := insufficient(gpu, 6, 8, 8)
	if got := r.Short(); got != 6 {
		t.Errorf("Short() = %d, want 6", got)
	}
	if got := insufficient(gpu, 6, 4, 8).Short(); got != 2 {
		t.Errorf("Short() = %d, want 2", got)
	}
}

func TestPluginNames(t *testing.T) {
	fit := newPlugin[*noderesources.Fit](t, noderesources.New, nil)
	ba := newPlugin[*noderesources.BalancedAllocation](t, noderesources.NewBalancedAllocation, nil)
	if fit.Name() != "NodeResourcesFit" || ba.Name() != "NodeResourcesBalancedAllocation" {
		t.Errorf("names = %q, %q", fit.Name(), ba.Name())
	}
	if fit.PreFilterExtensions() != nil || fit.ScoreExtensions() != nil || ba.ScoreExtensions() != nil {
		t.Error("want no PreFilterExtensions and no ScoreExtensions")
	}
}

// TestFilterSharedStatusesFollowTheShortage checks the statuses Filter
// shares node to node: nodes short of the same things get one status, nodes
// short of other things their own, each worded for its node, in any order.
func TestFilterSharedStatusesFollowTheShortage(t *testing.T) {
	ctx := context.Background()
	pod := testutil.MakePod().Req(res{corev1.ResourceCPU: "6", gpu: "6"}).Obj()
	gpuNode := func(name string) *corev1.Node {
		return node(name, res{corev1.ResourceCPU: "8", corev1.ResourceMemory: "32Gi", corev1.ResourcePods: "8", gpu: "8"})
	}
	nodes := []*corev1.Node{gpuNode("cpu-and-gpu-1"), gpuNode("gpu-only"), gpuNode("cpu-and-gpu-2"), node("too-small", res{corev1.ResourceCPU: "8", corev1.ResourcePods: "8", gpu: "4"})}
	pods := slices.Concat(
		onNode("cpu-and-gpu-1", testutil.MakePod().Name("a").Req(res{corev1.ResourceCPU: "4", gpu: "4"})),
		onNode("gpu-only", testutil.MakePod().Name("b").Req(res{gpu: "4"})),
		onNode("cpu-and-gpu-2", testutil.MakePod().Name("c").Req(res{corev1.ResourceCPU: "4", gpu: "4"})),
		onNode("too-small", testutil.MakePod().Name("d").Req(res{corev1.ResourceCPU: "4"})))
	infos := nodeInfos(nodes, pods)
	want := []*framework.Status{
		unschedulable("Insufficient cpu", "Insufficient nvidia.com/gpu"),
		unschedulable("Insufficient nvidia.com/gpu"),
		unschedulable("Insufficient cpu", "Insufficient nvidia.com/gpu"),
		unresolvable("Insufficient cpu", "Insufficient nvidia.com/gpu"),
	}
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}} {
		pl := newPlugin[*noderesources.Fit](t, noderesources.New, nil)
		state := framework.NewCycleState()
		if _, status := pl.PreFilter(ctx, state, pod, infos); !status.IsSuccess() {
			t.Fatalf("PreFilter: %v", status)
		}
		got := make([]*framework.Status, len(infos))
		for _, i := range order {
			got[i] = pl.Filter(ctx, state, pod, infos[i])
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("order %v: Filter statuses (-want +got):\n%s", order, diff)
		}
		if got[0] != got[2] {
			t.Errorf("order %v: nodes short of the same resources got two statuses", order)
		}
	}
}
