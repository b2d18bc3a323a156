package imagelocality_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/imagelocality"
)

const mb int64 = 1024 * 1024

func image(sizeMB int64, names ...string) corev1.ContainerImage {
	return corev1.ContainerImage{Names: names, SizeBytes: sizeMB * mb}
}

func imageNode(name string, images ...corev1.ContainerImage) *corev1.Node {
	n := testutil.MakeNode().Name(name).Obj()
	n.Status.Images = images
	return n
}

func podWithImages(images ...string) *corev1.Pod {
	p := testutil.MakePod().Name("p").Obj()
	p.Spec.Containers = nil
	for i, img := range images {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprint("c", i), Image: img})
	}
	return p
}

// The cases of kube-scheduler's TestImageLocalityPriority, with its
// hand-computed scores.
func TestScore(t *testing.T) {
	node403002000 := []corev1.ContainerImage{
		image(40, "gcr.io/40:latest", "gcr.io/40:v1"),
		image(300, "gcr.io/300:latest", "gcr.io/300:v1"),
		image(2000, "gcr.io/2000:latest"),
	}
	node25010 := []corev1.ContainerImage{image(250, "gcr.io/250:latest"), image(10, "gcr.io/10:latest", "gcr.io/10:v1")}
	node60040900 := []corev1.ContainerImage{image(600, "gcr.io/600:latest"), image(40, "gcr.io/40:latest"), image(900, "gcr.io/900:latest")}
	node300600900 := []corev1.ContainerImage{image(300, "gcr.io/300:latest"), image(600, "gcr.io/600:latest"), image(900, "gcr.io/900:latest")}
	node400030 := []corev1.ContainerImage{image(4000, "gcr.io/4000:latest"), image(30, "gcr.io/30:latest")}
	node203040 := []corev1.ContainerImage{image(20, "gcr.io/20:latest"), image(30, "gcr.io/30:latest"), image(40, "gcr.io/40:latest")}

	withImageVolume := podWithImages("gcr.io/30")
	withImageVolume.Spec.Volumes = []corev1.Volume{{Name: "imageVolume", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "gcr.io/300"}}}}
	withInit := podWithImages("gcr.io/30")
	withInit.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "gcr.io/300"}}

	tests := []struct {
		name  string
		pod   *corev1.Pod
		nodes []*corev1.Node
		want  framework.NodeScoreList
	}{
		{
			// node1: 40M/2 < 23M: 0. node2: 100 * (250M/2 - 23M) / (2000M - 23M) = 5.
			name:  "two images spread on two nodes, prefer the larger image one",
			pod:   podWithImages("gcr.io/40", "gcr.io/250"),
			nodes: []*corev1.Node{imageNode("node1", node403002000...), imageNode("node2", node25010...)},
			want:  framework.NodeScoreList{{Name: "node1", Score: 0}, {Name: "node2", Score: 5}},
		},
		{
			// node1: 100 * ((40M + 300M)/2 - 23M) / (2000M - 23M) = 7.
			name:  "two images on one node, prefer this node",
			pod:   podWithImages("gcr.io/40", "gcr.io/300"),
			nodes: []*corev1.Node{imageNode("node1", node403002000...), imageNode("node2", node25010...)},
			want:  framework.NodeScoreList{{Name: "node1", Score: 7}, {Name: "node2", Score: 0}},
		},
		{
			// node1: 4000M/2 >= 2000M, the maximum: 100.
			name:  "if exceed limit, use limit",
			pod:   podWithImages("gcr.io/10", "gcr.io/4000"),
			nodes: []*corev1.Node{imageNode("node1", node400030...), imageNode("node2", node25010...)},
			want:  framework.NodeScoreList{{Name: "node1", Score: 100}, {Name: "node2", Score: 0}},
		},
		{
			// node1: 100 * (4000M/3 - 23M) / (2000M - 23M) = 66.
			name:  "if exceed limit, use limit (with a node that has no images)",
			pod:   podWithImages("gcr.io/10", "gcr.io/4000"),
			nodes: []*corev1.Node{imageNode("node1", node400030...), imageNode("node2", node25010...), imageNode("node3")},
			want:  framework.NodeScoreList{{Name: "node1", Score: 66}, {Name: "node2", Score: 0}, {Name: "node3", Score: 0}},
		},
		{
			// node1: 100 * (600M*2/3 + 900M*2/3 - 23M) / (3000M - 23M) = 32.
			// node2: 100 * (300M*1/3 + 600M*2/3 + 900M*2/3 - 23M) / (3000M - 23M) = 36.
			name:  "pod with multiple large images, node2 is preferred",
			pod:   podWithImages("gcr.io/300", "gcr.io/600", "gcr.io/900"),
			nodes: []*corev1.Node{imageNode("node1", node60040900...), imageNode("node2", node300600900...), imageNode("node3")},
			want:  framework.NodeScoreList{{Name: "node1", Score: 32}, {Name: "node2", Score: 36}, {Name: "node3", Score: 0}},
		},
		{
			// node1: 100 * (30M + 40M/2 - 23M) / (2000M - 23M) = 1.
			name:  "pod with multiple small images",
			pod:   podWithImages("gcr.io/30", "gcr.io/40"),
			nodes: []*corev1.Node{imageNode("node1", node203040...), imageNode("node2", node400030...)},
			want:  framework.NodeScoreList{{Name: "node1", Score: 1}, {Name: "node2", Score: 0}},
		},
		{
			// node1: 100 * (300M/2 - 23M) / (2000M - 23M) = 6.
			name:  "an image volume counts as an image",
			pod:   withImageVolume,
			nodes: []*corev1.Node{imageNode("node1", node300600900...), imageNode("node2", node400030...)},
			want:  framework.NodeScoreList{{Name: "node1", Score: 6}, {Name: "node2", Score: 0}},
		},
		{
			name:  "same images as the image volume pod, as container images",
			pod:   podWithImages("gcr.io/30", "gcr.io/300"),
			nodes: []*corev1.Node{imageNode("node1", node300600900...), imageNode("node2", node400030...)},
			want:  framework.NodeScoreList{{Name: "node1", Score: 6}, {Name: "node2", Score: 0}},
		},
		{
			name:  "init containers count",
			pod:   withInit,
			nodes: []*corev1.Node{imageNode("node1", node403002000...), imageNode("node2", node203040...)},
			want:  framework.NodeScoreList{{Name: "node1", Score: 6}, {Name: "node2", Score: 0}},
		},
		{
			// Both nodes hold it: 100 * (1000M - 23M) / (1000M - 23M) = 100.
			name:  "an image every node holds keeps its full size",
			pod:   podWithImages("gcr.io/1000:v1"),
			nodes: []*corev1.Node{imageNode("node1", image(1000, "gcr.io/1000:v1")), imageNode("node2", image(1000, "gcr.io/1000:v1"))},
			want:  framework.NodeScoreList{{Name: "node1", Score: 100}, {Name: "node2", Score: 100}},
		},
		{
			// 100 * (500M*1/2 - 23M) / (1000M - 23M) = 23.
			name:  "a tagged reference matches only that tag",
			pod:   podWithImages("gcr.io/500:v2"),
			nodes: []*corev1.Node{imageNode("node1", image(500, "gcr.io/500:v2")), imageNode("node2", image(500, "gcr.io/500:latest"))},
			want:  framework.NodeScoreList{{Name: "node1", Score: 23}, {Name: "node2", Score: 0}},
		},
		{
			name:  "a pod without containers or image volumes",
			pod:   podWithImages(),
			nodes: []*corev1.Node{imageNode("node1", image(500, "gcr.io/500:v2"))},
			// maxThreshold is 0: (23M - 23M) * 100 / (0 - 23M) = 0.
			want: framework.NodeScoreList{{Name: "node1", Score: 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infos := framework.BuildNodeInfos(tt.nodes, nil)
			h := framework.NewSnapshotHandle(infos, framework.SnapshotObjects{}, 1)
			pl, err := imagelocality.New(nil, h)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			scorer := pl.(framework.ScorePlugin)
			if scorer.ScoreExtensions() != nil {
				t.Error("ScoreExtensions() != nil")
			}
			var got framework.NodeScoreList
			for _, ni := range infos {
				score, s := scorer.Score(context.Background(), framework.NewCycleState(), tt.pod, ni)
				if !s.IsSuccess() {
					t.Fatalf("Score = %v", s)
				}
				got = append(got, framework.NodeScore{Name: ni.Name(), Score: score})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// The cases of kube-scheduler's TestNormalizedImageName.
func TestNormalizedImageName(t *testing.T) {
	sum := sha256.Sum256([]byte("root"))
	digest := "sha256:" + hex.EncodeToString(sum[:])
	for _, tt := range []struct{ in, want string }{
		{"root", "root:latest"},
		{"gcr.io:5000/root", "gcr.io:5000/root:latest"},
		{"root:tag", "root:tag"},
		{"root@" + digest, "root@" + digest},
	} {
		if got := imagelocality.NormalizedImageName(tt.in); got != tt.want {
			t.Errorf("normalizedImageName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func BenchmarkScore(b *testing.B) {
	nodes := make([]*corev1.Node, 5000)
	var pods []*corev1.Pod
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		images := []corev1.ContainerImage{image(700, "registry.example.com/train:v3")}
		if i%3 == 0 {
			images = append(images, image(120, "registry.example.com/sidecar:v1"))
		}
		nodes[i] = imageNode(name, images...)
		pods = append(pods, testutil.MakePod().Name("running-"+name).Node(name).Obj())
	}
	infos := framework.BuildNodeInfos(nodes, pods)
	h := framework.NewSnapshotHandle(infos, framework.SnapshotObjects{}, 1)
	pl, _ := imagelocality.New(nil, h)
	scorer := pl.(framework.ScorePlugin)
	pod := podWithImages("registry.example.com/train:v3", "registry.example.com/sidecar:v1")
	ctx := context.Background()
	state := framework.NewCycleState()
	b.ReportAllocs()
	for b.Loop() {
		for _, ni := range infos {
			scorer.Score(ctx, state, pod, ni)
		}
	}
}
