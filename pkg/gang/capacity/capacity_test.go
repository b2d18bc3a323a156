package capacity

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

func capacityOf(t *testing.T, snap *schedule.Snapshot, g *gang.Gang, opts Options) *Result {
	t.Helper()
	s, err := schedule.NewScheduler(snap, schedule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Count(context.Background(), snap, s, g, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCapacity derives its counts by hand: 10 nodes of 8 GPUs, one of them
// busy, leave 9 free nodes; a gang of 2 x 8-GPU members takes 2 nodes a
// copy, so 4 copies fit and the 5th finds one free node for two members.
func TestCapacity(t *testing.T) {
	nodes := testutil.GPUNodes("zone-a", 10)
	busy := testutil.MakePod().Namespace("other").Name("busy").Node("zone-a-3").Req(testutil.Res{"nvidia.com/gpu": "8"}).Obj()
	snap := &schedule.Snapshot{Nodes: nodes, Pods: []*corev1.Pod{busy}}
	c := capacityOf(t, snap, gangOf(2, testutil.GPUWorkers(2, "8")), Options{})
	if c.Copies != 4 || c.AtLeast || !c.Verified() {
		t.Fatalf("copies %d (at least %v, verified %v), want 4", c.Copies, c.AtLeast, c.Verified())
	}
	if !strings.Contains(c.Reason, "Insufficient nvidia.com/gpu") {
		t.Errorf("reason %q, want Insufficient nvidia.com/gpu", c.Reason)
	}
	if c.Stop == nil || c.Stop.Gang.Name != "train-copy5" {
		t.Errorf("stopped at %v, want the 5th copy train-copy5", c.Stop)
	}
	// The snapshot itself is not changed.
	if len(snap.Pods) != 1 {
		t.Errorf("the snapshot holds %d pods after the count, want 1", len(snap.Pods))
	}

	// --max: 3 copies fit, and more are not tried.
	c = capacityOf(t, snap, gangOf(2, testutil.GPUWorkers(2, "8")), Options{Max: 3})
	if c.Copies != 3 || !c.AtLeast || c.Stop != nil {
		t.Errorf("with max 3: copies %d, at least %v, want at least 3", c.Copies, c.AtLeast)
	}
}

// TestCapacityTopology: a gang that needs one zone counts per zone: 3 free
// nodes in zone-a hold one copy of 2 x 8 GPUs (one node left over), 5 in
// zone-b two (one left over): 3 copies, where 8 nodes without the
// topology would hold 4.
func TestCapacityTopology(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: append(testutil.GPUNodes("zone-a", 3), testutil.GPUNodes("zone-b", 5)...)}
	g := gangOf(2, testutil.GPUWorkers(2, "8"))
	g.TopologyKey = zoneKey
	c := capacityOf(t, snap, g, Options{})
	if c.Copies != 3 {
		t.Fatalf("copies %d, want 3", c.Copies)
	}
	if got := strings.Join(c.Domains, ","); got != "zone-a,zone-b,zone-b" && got != "zone-b,zone-b,zone-a" && got != "zone-b,zone-a,zone-b" {
		t.Errorf("domains %s, want zone-a once and zone-b twice", got)
	}
	if !strings.Contains(c.Stop.Message, "in one "+zoneKey) {
		t.Errorf("stop message %q, want the topology named", c.Stop.Message)
	}
	g.TopologyKey = ""
	if c := capacityOf(t, snap, g, Options{}); c.Copies != 4 {
		t.Errorf("without the topology: copies %d, want 4", c.Copies)
	}
}

// TestCapacityCopiesAreTheirOwn: members that require pod affinity to their
// own Job (job-name) in one zone go together; a copy is a second Job, so its
// members do not follow the first copy's into its full zone. Two zones of
// two 8-GPU nodes hold two copies of 2 x 8 GPUs; were the copies one Job,
// the second would be drawn to the first's zone and fit nowhere.
func TestCapacityCopiesAreTheirOwn(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: append(testutil.GPUNodes("zone-a", 2), testutil.GPUNodes("zone-b", 2)...)}
	members := testutil.GPUWorkers(2, "8")
	for _, m := range members {
		m.Labels["batch.kubernetes.io/job-name"] = "train"
		m.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: "batch.kubernetes.io/job-name", Operator: metav1.LabelSelectorOpIn, Values: []string{"train"}}}},
				TopologyKey: zoneKey,
			}},
		}}
	}
	g := gangOf(2, members)
	c := capacityOf(t, snap, g, Options{})
	if c.Copies != 2 {
		t.Fatalf("copies %d, want 2: %s", c.Copies, c.Reason)
	}
	cp := g.Copy(2)
	m := cp.Members[0]
	if m.Name != "w-0-copy2" || m.Labels["batch.kubernetes.io/job-name"] != "train-copy2" || m.Labels["app"] != "train" ||
		m.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions[0].Values[0] != "train-copy2" {
		t.Errorf("copy 2's member: name %s, labels %v, affinity %v", m.Name, m.Labels, m.Spec.Affinity.PodAffinity)
	}
	if cp.Name != "train-copy2" || gang.GroupNameOf(m, gang.SourceNative) != "train-copy2" {
		t.Errorf("copy 2 is group %s, its member names group %s; want train-copy2", cp.Name, gang.GroupNameOf(m, gang.SourceNative))
	}
	if members[0].Labels["batch.kubernetes.io/job-name"] != "train" {
		t.Error("Copy changed the gang's own member")
	}
}

// TestCapacityQuota: the namespace's quota allows 40 GPUs, 8 are used: two
// copies of 2 x 8 GPUs (32) fit it, a third would not, though the nodes
// have room for it.
func TestCapacityQuota(t *testing.T) {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "gpus"},
		Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{"requests.nvidia.com/gpu": resource.MustParse("40")},
			Used: corev1.ResourceList{"requests.nvidia.com/gpu": resource.MustParse("8")},
		}}
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 10), ResourceQuotas: []*corev1.ResourceQuota{q}}
	c := capacityOf(t, snap, gangOf(2, testutil.GPUWorkers(2, "8")), Options{})
	if c.Copies != 2 {
		t.Fatalf("copies %d, want 2", c.Copies)
	}
	if !strings.Contains(c.Reason, "exceeded quota: gpus") {
		t.Errorf("reason %q, want the quota's refusal", c.Reason)
	}
}

// TestCapacityVolcanoQueue: each Volcano copy that starts is a job its
// queue has allocated in the next session (its PodGroup Running, its tasks
// bound), so the queue's capability stops the count, not the nodes: a
// queue capped at 12 cpu, 4 of them taken by the running job, holds two
// copies of its 2 x 2-cpu shape on nodes with room for many (proportion's
// allocatable: allocated + request <= capability; session.go). Before the
// copies' PodGroups were committed, the count was 31.
func TestCapacityVolcanoQueue(t *testing.T) {
	var nodes []*corev1.Node
	for i := range 4 {
		nodes = append(nodes, testutil.MakeNode().Name(fmt.Sprintf("n%d", i)).Capacity(testutil.Res{"cpu": "32", "memory": "128Gi"}).Obj())
	}
	pg := testutil.MakeVolcanoPodGroup("ml", "train", 2).Queue("q").MinResources(testutil.Res{"cpu": "4"}).Phase("Running").Obj()
	snap := &schedule.Snapshot{Nodes: nodes, PodGroups: []*unstructured.Unstructured{pg},
		Objects: []*unstructured.Unstructured{testutil.MakeVolcanoQueue("q").Capability(testutil.Res{"cpu": "12"}).Obj()}}
	for i := range 2 {
		snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("train-%d", i)).
			Req(testutil.Res{"cpu": "2"}).VolcanoGroup("train").Node("n0").Phase(corev1.PodRunning).Obj())
	}
	g, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "train"})
	if err != nil {
		t.Fatal(err)
	}
	c := capacityOf(t, snap, g, Options{})
	if c.Copies != 2 {
		t.Fatalf("copies %d, want 2 (the queue's capability): %s", c.Copies, c.Reason)
	}
	t.Logf("stopped: %s", c.Reason)
}

// TestCapacityCopyNamesAreFree: a copy never takes the name of a pod or a
// PodGroup the snapshot holds (a second submission would get another
// name, and committing the copy must not stand for them): with a pod named
// w-0-copy1 (copy 1's first member) and a PodGroup train-copy3, the four
// copies that fit are
// copies 2, 4, 5 and 6, and the 7th is the one that stops.
func TestCapacityCopyNamesAreFree(t *testing.T) {
	nodes := testutil.GPUNodes("zone-a", 10)
	busy := testutil.MakePod().Namespace("ml").Name("w-0-copy1").Node("zone-a-3").Req(testutil.Res{"nvidia.com/gpu": "8"}).Obj()
	snap := &schedule.Snapshot{Nodes: nodes, Pods: []*corev1.Pod{busy},
		PodGroups: []*unstructured.Unstructured{testutil.MakeVolcanoPodGroup("ml", "train-copy3", 2).Obj()}}
	g := gangOf(2, testutil.GPUWorkers(2, "8"))
	if g.Namespace != "ml" || g.Name != "train" {
		t.Fatalf("gang %s/%s, want ml/train", g.Namespace, g.Name)
	}
	c := capacityOf(t, snap, g, Options{})
	if c.Copies != 4 || c.Stop == nil || c.Stop.Gang.Name != "train-copy7" {
		stop := "none"
		if c.Stop != nil {
			stop = c.Stop.Gang.Name
		}
		t.Fatalf("copies %d, stopped at %s; want 4, stopped at train-copy7", c.Copies, stop)
	}
}
