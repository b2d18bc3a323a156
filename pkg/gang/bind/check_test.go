package bind

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// The plan is run again (recheck) unless the target nodes and the pods on
// them, and the pending pods, are the snapshot's very objects.
func TestSameObjects(t *testing.T) {
	node := func(name, rv string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv}}
	}
	pod := func(name, node, rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv},
			Spec: corev1.PodSpec{NodeName: node}}
	}
	snap := &schedule.Snapshot{
		Nodes: []*corev1.Node{node("a", "1"), node("b", "2")},
		Pods:  []*corev1.Pod{pod("on-a", "a", "3"), pod("on-b", "b", "4"), pod("member", "", "5")},
	}
	target := map[string]bool{"a": true}
	with := func(change func(s *schedule.Snapshot)) *schedule.Snapshot {
		c := *snap
		c.Nodes = append([]*corev1.Node(nil), snap.Nodes...)
		c.Pods = append([]*corev1.Pod(nil), snap.Pods...)
		change(&c)
		return &c
	}
	for _, tc := range []struct {
		name  string
		fresh *schedule.Snapshot
		want  bool
	}{
		{"the same objects", with(func(*schedule.Snapshot) {}), true},
		{"another node changed (not a target)", with(func(s *schedule.Snapshot) { s.Nodes[1] = node("b", "9") }), true},
		{"a pod on another node changed", with(func(s *schedule.Snapshot) { s.Pods[1] = pod("on-b", "b", "9") }), true},
		{"the target node changed", with(func(s *schedule.Snapshot) { s.Nodes[0] = node("a", "9") }), false},
		{"a pod on it changed", with(func(s *schedule.Snapshot) { s.Pods[0] = pod("on-a", "a", "9") }), false},
		{"a pod came to it", with(func(s *schedule.Snapshot) { s.Pods = append(s.Pods, pod("new", "a", "10")) }), false},
		{"a pod left it", with(func(s *schedule.Snapshot) { s.Pods = s.Pods[1:] }), false},
		{"a pending pod was bound there", with(func(s *schedule.Snapshot) { s.Pods[2] = pod("member", "a", "11") }), false},
		{"no resource version", with(func(s *schedule.Snapshot) { s.Nodes[0] = node("a", "") }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameObjects(snap, tc.fresh, target); got != tc.want {
				t.Errorf("sameObjects = %v, want %v", got, tc.want)
			}
		})
	}
}
