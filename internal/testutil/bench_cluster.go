package testutil

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// BlockKey is the node label of the network blocks BlockCluster's nodes are in.
const BlockKey = "network.topology.kubernetes.io/block"

// BlockCluster is the benchmarks' cluster: 5,120 nodes of 64 cpu, 256Gi
// memory and 8 GPUs in 4 zones and 4 blocks of 1,280, each running one pod
// of 8 cpu, 32Gi and 2 GPUs.
func BlockCluster() ([]*corev1.Node, []*corev1.Pod) {
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	for i := range 5120 {
		name := fmt.Sprintf("node-%05d", i)
		nodes = append(nodes, MakeNode().Name(name).
			Label(corev1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%4)).Label(BlockKey, fmt.Sprintf("block-%d", i/1280)).
			Capacity(Res{"cpu": "64", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"}).Obj())
		pods = append(pods, MakePod().Namespace("other").Name("run-"+name).Node(name).
			Req(Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"}).Obj())
	}
	return nodes, pods
}
