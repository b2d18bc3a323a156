// Package imagelocality is kube-scheduler's ImageLocality plugin: it prefers
// nodes that already hold the pod's images, weighing each image by its size
// and by how few nodes have it, so that one node holding a popular image
// does not attract every pod.
package imagelocality

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Name is ImageLocality's name in profiles.
const Name = "ImageLocality"

// The bounds of the image score: about the range of compressed image sizes
// in registries (90% of Docker Hub's images fall inside it). The upper bound
// is per image the pod uses.
const (
	mb                    int64 = 1024 * 1024
	minThreshold          int64 = 23 * mb
	maxContainerThreshold int64 = 1000 * mb
)

var _ framework.ScorePlugin = &ImageLocality{}

// ImageLocality scores nodes by the images they already hold.
type ImageLocality struct {
	handle framework.Handle
}

// New returns the plugin; it takes no arguments and reads the node count from
// the handle.
func New(_ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &ImageLocality{handle: h}, nil
}

// Name returns the plugin's name.
func (pl *ImageLocality) Name() string { return Name }

// Score sums the scaled sizes of the pod's images present on the node and
// maps the sum onto [0, 100] between the thresholds. The spread factor uses
// every node of the snapshot, feasible or not, as kube-scheduler does.
func (pl *ImageLocality) Score(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	totalNumNodes := len(pl.handle.NodeInfos().List())
	sum, imageCount := sumImageScores(nodeInfo, pod, totalNumNodes)
	return calculatePriority(sum, imageCount), nil
}

// ScoreExtensions returns nil: scores are already in [0, 100].
func (pl *ImageLocality) ScoreExtensions() framework.ScoreExtensions { return nil }

// calculatePriority clamps the sum to [minThreshold, maxThreshold], where
// maxThreshold grows with the number of images, and scales it onto [0, 100]
// with integer division, multiplying first.
func calculatePriority(sumScores int64, imageCount int) int64 {
	maxThreshold := maxContainerThreshold * int64(imageCount)
	if sumScores < minThreshold {
		sumScores = minThreshold
	} else if sumScores > maxThreshold {
		sumScores = maxThreshold
	}
	return framework.MaxNodeScore * (sumScores - minThreshold) / (maxThreshold - minThreshold)
}

// sumImageScores adds up the scaled sizes of the images of the pod's init
// containers, containers and image volumes that the node holds, and counts
// those images (present or not).
func sumImageScores(nodeInfo *framework.NodeInfo, pod *corev1.Pod, totalNumNodes int) (int64, int) {
	var sum int64
	states := nodeInfo.ImageStates
	for i := range pod.Spec.InitContainers {
		if state, ok := states[normalizedImageName(pod.Spec.InitContainers[i].Image)]; ok {
			sum += scaledImageScore(state, totalNumNodes)
		}
	}
	for i := range pod.Spec.Containers {
		if state, ok := states[normalizedImageName(pod.Spec.Containers[i].Image)]; ok {
			sum += scaledImageScore(state, totalNumNodes)
		}
	}
	imageCount := len(pod.Spec.InitContainers) + len(pod.Spec.Containers)
	for i := range pod.Spec.Volumes {
		image := pod.Spec.Volumes[i].Image
		if image == nil {
			continue
		}
		if state, ok := states[normalizedImageName(image.Reference)]; ok {
			sum += scaledImageScore(state, totalNumNodes)
		}
		imageCount++
	}
	return sum, imageCount
}

// scaledImageScore is the image's size times the share of nodes that hold
// it, in float64 and truncated, exactly as kube-scheduler computes it.
func scaledImageScore(state *framework.ImageStateSummary, totalNumNodes int) int64 {
	spread := float64(state.NumNodes) / float64(totalNumNodes)
	return int64(float64(state.Size) * spread)
}

// normalizedImageName adds the :latest tag to an image reference without a
// tag or digest, the name the container runtime reports in node status.
func normalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	return name
}
