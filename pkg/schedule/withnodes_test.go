package schedule

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// WithNodes is the scheduler NewScheduler builds for the snapshot with the
// nodes added: every decision (verdict, message, node, per-node feasibility
// and scores of every plugin) is the same, with reservations made before
// the nodes were added carried over, and with images the new nodes share
// with old ones counted cluster-wide (ImageLocality).
func TestWithNodesEqualsNewScheduler(t *testing.T) {
	snap := loadExample(t)
	// An image of 300 MB on a few nodes, new ones included: ImageLocality
	// scores it by how many of all the nodes have it.
	img := corev1.ContainerImage{Names: []string{"registry.example.com/ml/eval:7"}, SizeBytes: 300 << 20}
	for i, n := range snap.Nodes {
		if i%7 == 0 || n.Name == "gpu-b-04" {
			c := n.DeepCopy()
			c.Status.Images = append(c.Status.Images, img)
			snap.Nodes[i] = c
		}
	}
	// New nodes like three existing ones (names before, among and after
	// theirs), with copies of the pods on them.
	var added []*corev1.Node
	var addedPods []*corev1.Pod
	for i, name := range []string{"gpu-b-04", "cpu-a-0", "gpu-a-02"} {
		var template *corev1.Node
		for _, n := range snap.Nodes {
			if n.Name == name {
				template = n
			}
		}
		if template == nil {
			t.Fatalf("no node %s", name)
		}
		n := template.DeepCopy()
		n.Name = []string{"aa-new", "gpu-a-02x", "zz-new"}[i]
		n.Labels[corev1.LabelHostname] = n.Name
		added = append(added, n)
		for _, p := range snap.Pods {
			if p.Spec.NodeName == name {
				c := p.DeepCopy()
				c.Name, c.UID, c.Spec.NodeName = p.Name+"-"+n.Name, "", n.Name
				addedPods = append(addedPods, c)
			}
		}
	}
	withAll := *snap
	withAll.Nodes = append(slices.Clone(snap.Nodes), added...)
	withAll.Pods = append(slices.Clone(snap.Pods), addedPods...)

	pods := []*corev1.Pod{
		gpuPod("train-8", "8", "nvcr.io/nvidia/pytorch:26.09-py3"),
		gpuPod("train-2", "2", ""),
		gpuPod("cpu", "0", "nvcr.io/nvidia/pytorch:26.09-py3"),
		gpuPod("eval", "1", "registry.example.com/ml/eval:7"),
	}
	reserved := gpuPod("before", "4", "")

	full, err := NewScheduler(&withAll, Options{})
	if err != nil {
		t.Fatal(err)
	}
	base, err := NewScheduler(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A reservation on an old node, before the nodes are added.
	if err := full.Reserve(reserved, "gpu-b-05"); err != nil {
		t.Fatal(err)
	}
	if err := base.Reserve(reserved, "gpu-b-05"); err != nil {
		t.Fatal(err)
	}
	grown, err := base.WithNodes(added, addedPods, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameDecisions(t, full, grown, pods, "WithNodes", true)
	if _, err := base.WithNodes(added[:1], nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := grown.WithNodes(added[:1], nil, nil); err == nil {
		t.Error("adding a node that exists: no error")
	}
	if len(base.NodeInfos()) != len(snap.Nodes) {
		t.Errorf("WithNodes changed its base: %d nodes", len(base.NodeInfos()))
	}
}

func gpuPod(name, gpus, image string) *corev1.Pod {
	c := corev1.Container{Name: "c", Image: "registry.example.com/pause:1", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi")}}}
	if image != "" {
		c.Image = image
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml-research", Name: name, UID: types.UID("uid-" + name)}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	if gpus != "0" {
		q := resource.MustParse(gpus)
		c.Resources.Requests["nvidia.com/gpu"] = q
		c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": q}
		pod.Spec.Containers[0] = c
		pod.Spec.Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	return pod
}

// sameDecisions schedules each pod on want (a scheduler built for the
// changed snapshot) and on got (one derived by how), and fails where the
// decisions differ; with reserve, each pod that fits is reserved on both
// before the next.
func sameDecisions(t *testing.T, want, got *Scheduler, pods []*corev1.Pod, how string, reserve bool) {
	t.Helper()
	ctx := context.Background()
	for _, pod := range pods {
		w, err := want.Schedule(ctx, pod.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		g, err := got.Schedule(ctx, pod.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(describeResult(w), describeResult(g)); diff != "" {
			t.Errorf("%s (-NewScheduler +%s):\n%s", pod.Name, how, diff)
		}
		if reserve && w.Verdict == VerdictScheduled {
			for _, s := range []*Scheduler{want, got} {
				if err := s.Reserve(pod, w.SelectedNode); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// describeResult is what a decision says: verdict, message, node, and per
// node feasibility and every plugin's score.
func describeResult(r *Result) []string {
	out := []string{fmt.Sprintf("%s %s %q", r.Verdict, r.SelectedNode, r.Message)}
	for _, n := range r.Nodes {
		line := fmt.Sprintf("%s feasible=%v score=%d %s", n.Name, n.Feasible, n.Score, n.Status.Message())
		for _, s := range n.Scores {
			line += fmt.Sprintf(" %s=%d", s.Plugin, s.Score)
		}
		out = append(out, line)
	}
	return out
}

// WithNodesReplaced and Evict are the scheduler of the snapshot with the
// nodes changed and the pods gone: explain's repair and preemption
// what-ifs run on them.
func TestWithNodesReplacedAndEvictEqualNewScheduler(t *testing.T) {
	snap := loadExample(t)
	var cordoned []*corev1.Node
	for i, n := range snap.Nodes {
		if n.Name == "gpu-b-04" || n.Name == "gpu-a-03" {
			c := n.DeepCopy()
			c.Spec.Unschedulable = true
			c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
			snap.Nodes[i] = c
			cordoned = append(cordoned, n) // the healthy one
		}
	}
	var victims []*corev1.Pod
	for _, p := range snap.Pods {
		if p.Spec.NodeName == "gpu-b-07" && len(victims) < 2 && p.Spec.PriorityClassName != "system-node-critical" {
			victims = append(victims, p)
		}
	}
	if len(victims) == 0 {
		t.Fatal("no pod on gpu-b-07")
	}
	changed := *snap
	changed.Nodes = slices.Clone(snap.Nodes)
	for i, n := range changed.Nodes {
		for _, h := range cordoned {
			if h.Name == n.Name {
				changed.Nodes[i] = h
			}
		}
	}
	changed.Pods = slices.DeleteFunc(slices.Clone(snap.Pods), func(p *corev1.Pod) bool { return slices.Contains(victims, p) })

	full, err := NewScheduler(&changed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	base, err := NewScheduler(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := base.WithNodesReplaced(cordoned)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixed.Evict(victims, "gpu-b-07"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sameDecisions(t, full, fixed, []*corev1.Pod{gpuPod("train-8", "8", ""), gpuPod("train-4", "4", ""), gpuPod("cpu", "0", "")},
		"WithNodesReplaced/Evict", false)
	// The base is not changed: the cordoned nodes still refuse.
	res, err := base.Schedule(ctx, gpuPod("train-8", "8", ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Nodes {
		if (n.Name == "gpu-b-04" || n.Name == "gpu-a-03") && n.Feasible {
			t.Errorf("%s feasible on the base after WithNodesReplaced", n.Name)
		}
	}
	if _, err := base.WithNodesReplaced([]*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "nope"}}}); err == nil {
		t.Error("replacing a node that does not exist: no error")
	}
}
