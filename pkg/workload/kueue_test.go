package workload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
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
	if g.Source != gang.SourceKueue || g.Name != "pg" || g.MinMember != 2 {
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
	g := job(gang.KueueRequiredTopology)
	if g.TopologyKey != block {
		t.Fatalf("required: topology key %q", g.TopologyKey)
	}
	// Blocks of 2, 3 and 2 nodes: only b holds all three.
	nodes := blockNodes(2, 3, 2)
	p, err := gang.Place(context.Background(), &schedule.Snapshot{Nodes: nodes}, g, gang.PlaceOptions{})
	if err != nil || p.Verdict != gang.VerdictPlaced || p.Domain != "b" {
		t.Errorf("required: %v %s in %q: %v", p.Verdict, p.Message, p.Domain, err)
	}
	g = job(gang.KueuePreferredTopology)
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
