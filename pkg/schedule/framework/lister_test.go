package framework

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ChangedSince lists the nodes ReplaceNode wrote since a mark, each once,
// in order, and refuses a mark of another handle (a fork's) or from before
// SetNodes.
func TestChangedSince(t *testing.T) {
	var nodes []*NodeInfo
	for _, name := range []string{"a", "b", "c", "d"} {
		nodes = append(nodes, NewNodeInfo(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	}
	h := NewSnapshotHandle(slices.Clone(nodes), SnapshotObjects{}, 1)
	start := h.Mark()
	if got, ok := h.ChangedSince(start); !ok || len(got) != 0 {
		t.Errorf("nothing changed: %v, %v", got, ok)
	}
	h.ReplaceNode(3, nodes[3].Clone())
	h.ReplaceNode(1, nodes[1].Clone())
	mid := h.Mark()
	h.ReplaceNode(3, nodes[3].Clone())
	if got, ok := h.ChangedSince(start); !ok || !slices.Equal(got, []int{1, 3}) {
		t.Errorf("since start: %v, %v; want [1 3]", got, ok)
	}
	if got, ok := h.ChangedSince(mid); !ok || !slices.Equal(got, []int{3}) {
		t.Errorf("since mid: %v, %v; want [3]", got, ok)
	}
	fork := h.Fork(slices.Clone(h.List()), 1)
	if _, ok := fork.ChangedSince(mid); ok {
		t.Error("a fork took its parent's mark")
	}
	h.SetNodes(nodes)
	if _, ok := h.ChangedSince(mid); ok {
		t.Error("a mark from before SetNodes was taken")
	}
}

// TestBuildNodeInfosIsEachNodeWithItsPodsInOrder checks BuildNodeInfos,
// which builds the nodes on every core, against its definition built one
// pod at a time: each node gets the pods bound to it in their order (a
// pod bound to a name given twice goes to the last node of that name, one
// bound to no listed node to none), with the same requests (half the pods
// share their containers with another, as a snapshot's pods of one
// template do), ports, claim counts, image states and generation.
func TestBuildNodeInfosIsEachNodeWithItsPodsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 29))
	for round := range 20 {
		var nodes []*corev1.Node
		for i := range 1 + rng.IntN(300) {
			name := fmt.Sprintf("n%d", i)
			if i > 0 && rng.IntN(20) == 0 {
				name = nodes[rng.IntN(i)].Name // a name given twice
			}
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
			n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourcePods: resource.MustParse("110")}
			for k := range rng.IntN(3) {
				n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: []string{fmt.Sprintf("img%d", rng.IntN(5))}, SizeBytes: int64(k+1) << 20})
			}
			nodes = append(nodes, n)
		}
		var pods []*corev1.Pod
		for i := range rng.IntN(2000) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "ns"}}
			switch r := rng.IntN(10); {
			case r == 0: // pending
			case r == 1:
				p.Spec.NodeName = "missing"
			default:
				p.Spec.NodeName = nodes[rng.IntN(len(nodes))].Name
			}
			c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: *resource.NewMilliQuantity(int64(rng.IntN(2000)), resource.DecimalSI)}}}
			if rng.IntN(4) > 0 { // cpu and memory: requests taken as they are
				c.Resources.Requests[corev1.ResourceMemory] = *resource.NewQuantity(int64(1+rng.IntN(64))<<30, resource.BinarySI)
			}
			if rng.IntN(8) == 0 {
				c.Ports = []corev1.ContainerPort{{HostPort: int32(8000 + rng.IntN(4)), ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
			}
			if rng.IntN(8) == 0 {
				c.Resources.Requests["example.com/gpu"] = *resource.NewQuantity(int64(1+rng.IntN(2)), resource.DecimalSI)
			}
			p.Spec.Containers = []corev1.Container{c}
			if len(pods) > 0 && rng.IntN(2) == 0 {
				// Of a template: its containers shared with another pod's,
				// as a snapshot's reading shares them.
				p.Spec.Containers = pods[rng.IntN(len(pods))].Spec.Containers
			}
			if rng.IntN(8) == 0 {
				p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: fmt.Sprintf("c%d", rng.IntN(3))}}}}
			}
			pods = append(pods, p)
		}
		got := BuildNodeInfos(nodes, pods)

		// The definition: one pod at a time, to the last node of its name.
		want := make([]*NodeInfo, len(nodes))
		byName := map[string]*NodeInfo{}
		for i, n := range nodes {
			want[i] = NewNodeInfo(n)
			byName[n.Name] = want[i]
		}
		for _, p := range pods {
			if ni, ok := byName[p.Spec.NodeName]; ok && p.Spec.NodeName != "" {
				ni.AddPod(p)
			}
		}
		imageNodes := map[string]map[string]bool{}
		imageSize := map[string]int64{}
		for _, n := range nodes {
			for _, img := range n.Status.Images {
				for _, name := range img.Names {
					if imageNodes[name] == nil {
						imageNodes[name], imageSize[name] = map[string]bool{}, img.SizeBytes
					}
					imageNodes[name][n.Name] = true
				}
			}
		}
		for i, ni := range want {
			for _, img := range nodes[i].Status.Images {
				for _, name := range img.Names {
					ni.ImageStates[name] = &ImageStateSummary{Size: imageSize[name], NumNodes: len(imageNodes[name])}
				}
			}
		}

		if len(got) != len(want) {
			t.Fatalf("round %d: %d node infos, want %d", round, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			var gp, wp []string
			for _, pi := range g.Pods {
				gp = append(gp, pi.Pod.Name)
			}
			for _, pi := range w.Pods {
				wp = append(wp, pi.Pod.Name)
			}
			if g.Node() != w.Node() || !slices.Equal(gp, wp) || !reflect.DeepEqual(g.Requested, w.Requested) ||
				!reflect.DeepEqual(g.NonZeroRequested, w.NonZeroRequested) || !reflect.DeepEqual(g.UsedPorts, w.UsedPorts) ||
				!reflect.DeepEqual(g.PVCRefCounts, w.PVCRefCounts) || !reflect.DeepEqual(g.ImageStates, w.ImageStates) ||
				g.Generation != w.Generation || len(g.PodsWithAffinity) != len(w.PodsWithAffinity) {
				t.Fatalf("round %d: node %d (%s) built as\n pods %v requested %+v ports %v claims %v images %v generation %d\nwant\n pods %v requested %+v ports %v claims %v images %v generation %d",
					round, i, w.Name(), gp, g.Requested, g.UsedPorts, g.PVCRefCounts, g.ImageStates, g.Generation,
					wp, w.Requested, w.UsedPorts, w.PVCRefCounts, w.ImageStates, w.Generation)
			}
		}
	}
}

// TestAddNodeInfosCountsImagesClusterWide checks AddNodeInfos's image
// counts against BuildNodeInfos of every node: the nodes added share one
// summary per image (BuildNodeInfos), which is counted up once.
func TestAddNodeInfosCountsImagesClusterWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 28))
	for round := range 20 {
		var nodes []*corev1.Node
		for i := range 2 + rng.IntN(40) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%02d", i)}}
			for range rng.IntN(4) {
				k := rng.IntN(4)
				n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: []string{fmt.Sprintf("img%d", k)}, SizeBytes: int64(k+1) << 20})
			}
			nodes = append(nodes, n)
		}
		split := 1 + rng.IntN(len(nodes)-1)
		got, err := AddNodeInfos(BuildNodeInfos(nodes[:split], nil), nodes[split:], nil)
		if err != nil {
			t.Fatal(err)
		}
		want := BuildNodeInfos(nodes, nil)
		for i := range want {
			if got[i].Name() != want[i].Name() {
				t.Fatalf("round %d: node %d is %s, want %s", round, i, got[i].Name(), want[i].Name())
			}
			for name, w := range want[i].ImageStates {
				if g := got[i].ImageStates[name]; g == nil || *g != *w {
					t.Errorf("round %d: %s image %s: %+v, want %+v", round, want[i].Name(), name, g, w)
				}
			}
		}
	}
	// A name given twice among the nodes added is refused, as one already
	// there is.
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "new"}}
	if _, err := AddNodeInfos(nil, []*corev1.Node{n, n}, nil); err == nil || !strings.Contains(err.Error(), "node new is given twice") {
		t.Errorf("a name given twice: %v", err)
	}
	if _, err := AddNodeInfos(BuildNodeInfos([]*corev1.Node{n}, nil), []*corev1.Node{n}, nil); err == nil || !strings.Contains(err.Error(), "node new exists already") {
		t.Errorf("a name already there: %v", err)
	}
}
