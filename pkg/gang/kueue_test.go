package gang_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

func kueueMember(name, group, count string) *testutil.PodWrapper {
	w := member(name, 0).Label(gang.KueuePodGroupLabel, group).Req(testutil.Res{"nvidia.com/gpu": "8"})
	if count != "" {
		w = w.Annotation(gang.KueueTotalCountAnnotation, count)
	}
	return w
}

// A Kueue pod group is the pods carrying its label, its total count the
// minimum: by a member, by a selector of all of it, and from -f.
func TestKueuePodGroup(t *testing.T) {
	pods := []*corev1.Pod{kueueMember("w-0", "train", "3").Obj(), kueueMember("w-1", "train", "3").Obj(),
		kueueMember("x", "other", "1").Obj()}
	snap := snapshotOf(pods)
	g, _, err := gang.ResolvePod(snap, "ml", "w-1")
	if err != nil || g == nil || g.Source != gang.SourceKueue || g.Name != "train" || g.MinMember != 3 || len(g.Members) != 2 {
		t.Fatalf("by a member: %+v, %v", g, err)
	}
	// Two of three exist: Kueue waits for the third, so the gang is invalid.
	if v := gang.Validate(g); v.Valid {
		t.Errorf("two of three members valid: %+v", v)
	}
	sel := labels.SelectorFromSet(labels.Set{gang.KueuePodGroupLabel: "train"})
	if g, err := gang.ResolveSelector(snap, "ml", sel, 0); err != nil || g.Source != gang.SourceKueue || g.MinMember != 3 {
		t.Errorf("by its label: %+v, %v", g, err)
	}
	all, _ := labels.Parse(gang.KueuePodGroupLabel)
	if _, err := gang.ResolveSelector(snap, "ml", all, 0); err == nil || !strings.Contains(err.Error(), "belong to Kueue pod group(s) other, train") {
		t.Errorf("two groups: %v", err)
	}
	bad := snapshotOf([]*corev1.Pod{kueueMember("a", "g", "2").Obj(), kueueMember("b", "g", "3").Obj(), kueueMember("c", "h", "").Obj()})
	if _, _, err := gang.ResolvePod(bad, "ml", "a"); err == nil || err.Error() != "the pods of Kueue pod group g give different kueue.x-k8s.io/pod-group-total-count (2 and 3)" {
		t.Errorf("different counts: %v", err)
	}
	if _, _, err := gang.ResolvePod(bad, "ml", "c"); err == nil || !strings.Contains(err.Error(), "has no kueue.x-k8s.io/pod-group-total-count") {
		t.Errorf("no count: %v", err)
	}

	g = whatIf(t, []byte(`apiVersion: v1
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
	if g.TopologyKey != "" || len(g.Unevaluated) != 1 || !strings.Contains(g.Unevaluated[0].Value, "rack on 1 member(s), none on 1") {
		t.Errorf("mixed: %q %+v", g.TopologyKey, g.Unevaluated)
	}
}
