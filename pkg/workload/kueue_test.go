package workload_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/kueue"
)

// Pods of one Kueue pod group from -f are that group, its total count the
// minimum.
func TestKueuePodGroupFromManifests(t *testing.T) {
	g := whatIf(t, []byte(`apiVersion: v1
kind: Pod
metadata: {name: p-0, labels: {kueue.x-k8s.io/pod-group-name: pg}, annotations: {kueue.x-k8s.io/pod-group-total-count: "2"}}
spec: {containers: [{name: c, image: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p-1, labels: {kueue.x-k8s.io/pod-group-name: pg}, annotations: {kueue.x-k8s.io/pod-group-total-count: "2"}}
spec: {containers: [{name: c, image: c}]}
`), "pods.yaml", nil)
	if g.Source != kueue.Source || g.Name != "pg" || g.MinMember != 2 {
		t.Errorf("from -f: %s %s min %d", g.Source, g.Name, g.MinMember)
	}
}

// Kueue's topology-aware scheduling annotations on a pod set: required
// keeps every pod in one value of the label, as --topology-key does.
func TestKueueTopology(t *testing.T) {
	job := func(annotation string) *gang.Gang {
		return whatIf(t, []byte(`apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 3
  completionMode: Indexed
  template:
    metadata: {annotations: {`+annotation+`: `+block+`}}
    spec:
      containers: [{name: c, image: c, resources: {limits: {nvidia.com/gpu: "8"}}}]
`), "job.yaml", nil)
	}
	g := job(kueue.RequiredTopology)
	if g.TopologyKey != block {
		t.Fatalf("required: topology key %q", g.TopologyKey)
	}
	// Blocks of 2, 3 and 2 nodes: only b holds all three.
	nodes := blockNodes(2, 3, 2)
	p, err := gang.Place(context.Background(), &schedule.Snapshot{Nodes: nodes}, g, gang.PlaceOptions{})
	if err != nil || p.Verdict != gang.VerdictPlaced || p.Domain != "b" {
		t.Errorf("required: %v %s in %q: %v", p.Verdict, p.Message, p.Domain, err)
	}
	g = job(kueue.PreferredTopology)
	if g.TopologyKey != "" || g.PreferredTopologyKey != block {
		t.Errorf("preferred: %q %q", g.TopologyKey, g.PreferredTopologyKey)
	}
	// One pod set with the annotation and one without: not evaluated.
	g = whatIf(t, []byte(`apiVersion: v1
kind: Pod
metadata: {name: a, annotations: {kueue.x-k8s.io/podset-required-topology: rack}}
spec: {containers: [{name: c, image: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec: {containers: [{name: c, image: c}]}
`), "pods.yaml", nil)
	if g.TopologyKey != "" || len(g.NotEvaluatedFields) != 1 || !strings.Contains(g.NotEvaluatedFields[0].Value, "rack on 1 member(s), none on 1") {
		t.Errorf("mixed: %q %+v", g.TopologyKey, g.NotEvaluatedFields)
	}
}

// A workload that names a Kueue LocalQueue and that Kueue has not admitted
// (not created yet, or stored suspended) waits for Kueue: it is recorded
// with its pods as queued (gang.Gang.Queued), and every verb asks Kueue's
// admission first (issue #39's wrong yes). A stored workload that runs was
// admitted; one without the label is not Kueue's.
func TestKueueQueuedWorkloads(t *testing.T) {
	job := func(meta, spec string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train" + meta + "}\nspec:\n  parallelism: 2" + spec +
			"\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: c}]\n"
	}
	pod := func(name, meta string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + meta + "}\nspec: {containers: [{name: c, image: c}]}\n"
	}
	const label = ", labels: {kueue.x-k8s.io/queue-name: team-a}"
	for _, tt := range []struct {
		name, manifests string
		// want are the queued workloads, "Kind name: queue [members]".
		want []string
	}{
		{"a Job to create", job(label, ""), []string{"Job train: team-a [train-0 train-1]"}},
		{"the legacy annotation", job(", annotations: {kueue.x-k8s.io/queue-name: team-b}", ""), []string{"Job train: team-b [train-0 train-1]"}},
		{"a stored suspended Job", job(label+", uid: 9f1c", "\n  suspend: true"), []string{"Job train: team-a [train-0 train-1]"}},
		{"a stored Job Kueue resumed", job(label+", uid: 9f1c", "\n  suspend: false"), nil},
		{"no queue", job("", ""), nil},
		{"pods, each its own", pod("p-0", label) + "---\n" + pod("p-1", label), []string{"Pod p-0: team-a [p-0]", "Pod p-1: team-a [p-1]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := whatIf(t, []byte(tt.manifests), "f.yaml", nil)
			var got []string
			for _, q := range g.Queued {
				got = append(got, fmt.Sprintf("%s %s: %s %v", q.Object.GetKind(), q.Object.GetName(), q.Queue, q.Members))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("queued %q, want %q", got, tt.want)
			}
			for _, f := range g.NotEvaluatedFields {
				if strings.Contains(f.Field, "queue-name") {
					t.Errorf("the queue is still a not-evaluated field: %+v", f)
				}
			}
		})
	}
}
