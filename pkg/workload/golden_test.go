package workload_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// expandedPod is what a workload golden file records of each pod: what the
// controllers and webhooks give it that scheduling reads.
type expandedPod struct {
	Name          string               `json:"name"`
	Labels        map[string]string    `json:"labels,omitempty"`
	Annotations   map[string]string    `json:"annotations,omitempty"`
	Hostname      string               `json:"hostname,omitempty"`
	Subdomain     string               `json:"subdomain,omitempty"`
	RestartPolicy corev1.RestartPolicy `json:"restartPolicy,omitempty"`
	Priority      *int32               `json:"priority,omitempty"`
	NodeSelector  map[string]string    `json:"nodeSelector,omitempty"`
	Tolerations   []corev1.Toleration  `json:"tolerations,omitempty"`
	Affinity      *corev1.Affinity     `json:"affinity,omitempty"`
}

// whatIf reads manifests as -f does (workload.WhatIf): expanded, then
// priorities (from classes) and the workloads' webhooks, members in queue
// order.
func whatIf(t *testing.T, data []byte, source string, classes []*schedulingv1.PriorityClass) *gang.Gang {
	t.Helper()
	g, err := workload.WhatIf(data, source, &schedule.Snapshot{PriorityClasses: classes}, workload.Options{Namespace: "ml"})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestWorkloadExpansion expands every manifest in testdata into
// the pods its controllers would create (after the Priority admission
// plugin and the workloads' webhooks) and compares them with the golden
// file beside it; -update rewrites them.
func TestWorkloadExpansion(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no workloads: %v", err)
	}
	classes := []*schedulingv1.PriorityClass{{Value: 1000, GlobalDefault: true}}
	classes[0].Name = "training"
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			g := whatIf(t, data, file, classes)
			var pods []expandedPod
			for _, p := range g.Members {
				pods = append(pods, expandedPod{Name: p.Namespace + "/" + p.Name, Labels: p.Labels, Annotations: p.Annotations,
					Hostname: p.Spec.Hostname, Subdomain: p.Spec.Subdomain, RestartPolicy: p.Spec.RestartPolicy, Priority: p.Spec.Priority,
					NodeSelector: p.Spec.NodeSelector, Tolerations: p.Spec.Tolerations, Affinity: p.Spec.Affinity})
			}
			out, err := yaml.Marshal(map[string]any{"gang": g.Key(), "minMember": g.MinMember, "pods": pods})
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			testutil.Golden(t, golden, out)
		})
	}
}

// block is the node label the JobSet tests place exclusively on.
const block = "network.topology.kubernetes.io/block"

// blockNodes makes 8-GPU nodes in blocks a, b, c, ... of the given sizes,
// named <block>-<i>.
func blockNodes(sizes ...int) []*corev1.Node {
	var nodes []*corev1.Node
	for b, size := range sizes {
		name := string(rune('a' + b))
		for i := range size {
			nodes = append(nodes, testutil.MakeNode().Name(fmt.Sprintf("%s-%d", name, i)).Label(block, name).
				Capacity(testutil.Res{"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8"}).Obj())
		}
	}
	return nodes
}

// A JobSet with exclusive placement puts each child Job alone in one value
// of the key: the affinities JobSet's pod webhook injects enforce it, and
// each Job's leader goes first, to a node of the top score, its follower
// after it in its block. On empty nodes every node ties, so the leader may
// take c-0, where its follower has no room: a coin toss, never a plain
// yes; the plan is the first tie that works. A third Job finds only
// block c, whose second pod has nowhere to go though a-2 is free: block a
// is another Job's.
func TestJobSetExclusivePlacement(t *testing.T) {
	nodes := blockNodes(3, 2, 1)
	jobSet := func(jobs int) string {
		return fmt.Sprintf(`apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: %s}}
spec:
  replicatedJobs:
  - name: w
    replicas: %d
    template:
      spec:
        parallelism: 2
        template:
          spec:
            containers: [{name: c, image: c, resources: {limits: {nvidia.com/gpu: "8"}}}]
`, block, jobs)
	}
	place := func(jobs int) *gang.Placement {
		g := whatIf(t, []byte(jobSet(jobs)), "js.yaml", nil)
		p, err := gang.Place(context.Background(), &schedule.Snapshot{Nodes: nodes}, g, gang.PlaceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := place(2)
	var got []string
	for _, a := range p.Assignments {
		got = append(got, a.Pod.Name+"->"+a.Node)
	}
	want := []string{"js-w-0-0->a-0", "js-w-0-1->a-1", "js-w-1-0->b-0", "js-w-1-1->b-1"}
	if diff := cmp.Diff(want, got); diff != "" || p.Verdict != gang.VerdictPlaced || p.Verified() ||
		!strings.Contains(strings.Join(p.AllNotEvaluated(), "\n"), "may land on c-0 ("+block+"=c), where the rest cannot follow") {
		t.Errorf("two Jobs: %s, verified %v, %v (-want +got):\n%s", p.Verdict, p.Verified(), p.AllNotEvaluated(), diff)
	}
	p = place(3)
	if p.Verdict != gang.VerdictUnschedulable || p.MaxPlaceable != 5 || p.Blocker == nil || p.Blocker.Pod.Name != "js-w-2-1" ||
		!strings.Contains(p.Blocker.Message, "didn't match pod affinity rules") {
		t.Errorf("three Jobs: %s, %d fit, blocker %v: %s", p.Verdict, p.MaxPlaceable, p.Blocker != nil, p.Message)
	}
}

// kube-scheduler puts a child Job's leader on the best-scored node (any of
// equal scores) and the followers must join it: with a one-node block
// first by name, the leader may take a-0 and its follower stays Pending,
// so the answer is a coin toss naming a-0, whose plan uses block b. By the
// affinities alone (no sub-groups), the leader takes a-0 and the follower
// has nowhere to go.
func TestJobSetExclusiveFollowsTheLeader(t *testing.T) {
	nodes := blockNodes(1, 2)
	g := whatIf(t, []byte(`apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: `+block+`}}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        parallelism: 2
        template:
          spec:
            containers: [{name: c, image: c, resources: {limits: {nvidia.com/gpu: "8"}}}]
`), "js.yaml", nil)
	snap := &schedule.Snapshot{Nodes: nodes}
	p, err := gang.Place(context.Background(), snap, g, gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Verdict != gang.VerdictPlaced || p.Verified() || p.Assignments[0].Node != "b-0" || p.Assignments[1].Node != "b-1" ||
		!strings.Contains(strings.Join(p.AllNotEvaluated(), "\n"), "may land on a-0 ("+block+"=a)") {
		t.Errorf("%s, verified %v: %s %v", p.Verdict, p.Verified(), p.Message, p.AllNotEvaluated())
	}
	g.SubGroups = nil
	if p, err = gang.Place(context.Background(), snap, g, gang.PlaceOptions{}); err != nil || p.Verdict != gang.VerdictUnschedulable {
		t.Errorf("without the search: %v, %v", p.Verdict, err)
	}
}
