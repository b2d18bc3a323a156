package gang_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	// Every gang system, registered for the tests of this package, the
	// internal ones included (one test binary).
	_ "github.com/kubectl-gang/kubectl-gang/pkg/systems"
)

// TestEverySystemRegistered keeps the internal tests' sources the wings'.
func TestEverySystemRegistered(t *testing.T) {
	for _, src := range []gang.Source{gang.SourceNative, "scheduling.volcano.sh", "scheduling.x-k8s.io", "kueue.x-k8s.io"} {
		if gang.SystemOf(src) == nil {
			t.Errorf("no gang system %q registered", src)
		}
	}
	// A system's group objects are a kind the snapshot reads and keeps:
	// without it, its PodGroups would be ignored and never found.
	for _, s := range gang.Systems() {
		if r := s.Rules(); r.Group != "" && !schedule.IsPodGroup(schema.GroupVersionKind{Group: r.Group, Kind: schedule.PodGroupKind}) {
			t.Errorf("gang system %q has PodGroups of %s, which no schedule.RegisterObjectKind names", r.Source, r.Group)
		}
	}
}

// TestCopyRenamesEverySystemsGroupLabel: a copy of a gang renames the
// group labels of every system in its members' selectors, so that copies
// of a Coscheduling or Kueue gang whose members repel each other by their
// group label repel only their own copy's members (docs/design.md#capacity).
func TestCopyRenamesEverySystemsGroupLabel(t *testing.T) {
	for _, key := range []string{"scheduling.x-k8s.io/pod-group", "kueue.x-k8s.io/pod-group-name", "volcano.sh/job-name"} {
		if !slices.Contains(gang.CopyLabels(), key) {
			t.Errorf("CopyLabels() lacks %s", key)
		}
		pod := testutil.MakePod().Namespace("ml").Name("train-0").Label(key, "train").Obj()
		pod.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: "train"}}}}}}
		g := &gang.Gang{Source: gang.SourceSelector, Namespace: "ml", Name: "train", MinMember: 1, Members: []*corev1.Pod{pod}}
		c := g.Copy(2).Members[0]
		if got := c.Labels[key]; got != "train-copy2" {
			t.Errorf("%s: the copy's label is %q, want train-copy2", key, got)
		}
		if got := c.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels[key]; got != "train-copy2" {
			t.Errorf("%s: the copy's anti-affinity selects %q, want train-copy2", key, got)
		}
	}
}
