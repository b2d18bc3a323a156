package gang_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// The cases of Volcano's getTaskStatus.
func TestTaskStatusOf(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want gang.TaskStatus
	}{
		{"pending", testutil.MakePod().Obj(), gang.TaskPending},
		{"pending with a node", testutil.MakePod().BoundTo("n1").Obj(), gang.TaskBound},
		{"pending being deleted", testutil.MakePod().Terminating().Obj(), gang.TaskReleasing},
		{"running", testutil.MakePod().Node("n1").Obj(), gang.TaskRunning},
		{"running being deleted", testutil.MakePod().Node("n1").Terminating().Obj(), gang.TaskReleasing},
		{"succeeded", testutil.MakePod().Phase(corev1.PodSucceeded).Obj(), gang.TaskSucceeded},
		{"failed", testutil.MakePod().Phase(corev1.PodFailed).Obj(), gang.TaskFailed},
		{"unknown", testutil.MakePod().Phase(corev1.PodUnknown).Obj(), gang.TaskUnknown},
		{"no phase", testutil.MakePod().Phase("").Obj(), gang.TaskUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gang.TaskStatusOf(tt.pod); got != tt.want {
				t.Errorf("TaskStatusOf = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestIsAllocated(t *testing.T) {
	for _, s := range []gang.TaskStatus{gang.TaskPending, gang.TaskAllocated, gang.TaskPipelined, gang.TaskBinding, gang.TaskBound,
		gang.TaskRunning, gang.TaskReleasing, gang.TaskSucceeded, gang.TaskFailed, gang.TaskUnknown} {
		want := s == gang.TaskAllocated || s == gang.TaskBinding || s == gang.TaskBound || s == gang.TaskRunning
		if got := s.IsAllocated(); got != want {
			t.Errorf("%s.IsAllocated() = %v, want %v", s, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	pending := func(name string) *testutil.PodWrapper { return testutil.MakePod().Name(name) }
	tests := []struct {
		name string
		gang *gang.Gang
		want gang.Validity
	}{
		{
			name: "enough pending members",
			gang: &gang.Gang{MinMember: 3, Members: []*corev1.Pod{pending("a").Obj(), pending("b").Obj(), pending("c").Obj()}},
			want: gang.Validity{Valid: true, ValidCount: 3, MinMember: 3},
		},
		{
			name: "running, bound and pending count; releasing, failed and unknown do not",
			gang: &gang.Gang{MinMember: 4, Members: []*corev1.Pod{
				pending("a").Obj(), pending("b").Node("n1").Obj(), pending("c").BoundTo("n1").Obj(),
				pending("d").Node("n1").Terminating().Obj(), pending("e").Phase(corev1.PodFailed).Obj(),
				pending("f").Phase(corev1.PodUnknown).Obj()}},
			want: gang.Validity{Reason: "NotEnoughPods", Message: "Not enough valid tasks for gang-scheduling, valid: 3, min: 4",
				ValidCount: 3, MinMember: 4},
		},
		{
			name: "succeeded members count",
			gang: &gang.Gang{MinMember: 2, Members: []*corev1.Pod{pending("a").Obj(), pending("b").Phase(corev1.PodSucceeded).Obj()}},
			want: gang.Validity{Valid: true, ValidCount: 2, MinMember: 2},
		},
		{
			name: "a selector's minimum above the pods it selects: members that do not exist",
			gang: &gang.Gang{Source: gang.SourceSelector, MinMember: 3, Members: []*corev1.Pod{pending("a").Obj()}},
			want: gang.Validity{Reason: "NotEnoughPods", Message: "2 member(s) do not exist: 1 of minimum 3 exist", ValidCount: 1, MinMember: 3},
		},
		{
			name: "a native gang short of members, in kube-scheduler's words",
			gang: &gang.Gang{Source: gang.SourceNative, MinMember: 4, Members: []*corev1.Pod{pending("a").Obj(), pending("b").Obj()}},
			want: gang.Validity{Reason: "NotEnoughPods", ValidCount: 2, MinMember: 4,
				Message: "waiting for minCount pods from a gang to appear in scheduling queue (minCount 4, 2 member(s) exist, 2 do not)"},
		},
		{
			name: "a native gang whose members exist but too few can count",
			gang: &gang.Gang{Source: gang.SourceNative, MinMember: 2, Members: []*corev1.Pod{pending("a").Obj(), pending("b").Node("n1").Terminating().Obj()}},
			want: gang.Validity{Reason: "NotEnoughPods", ValidCount: 1, MinMember: 2,
				Message: "minCount (2) cannot be satisfied: 1 member(s) can count (the others failed or are being deleted)"},
		},
		{
			name: "a coscheduling gang short of members, in Coscheduling's words",
			gang: &gang.Gang{Source: coscheduling.Source, MinMember: 3, Members: []*corev1.Pod{pending("a").Obj()}},
			want: gang.Validity{Reason: "NotEnoughPods", ValidCount: 1, MinMember: 3,
				Message: "pre-filter pod a cannot find enough sibling pods, current pods number: 1, minMember of group: 3"},
		},
		{
			name: "no minimum",
			gang: &gang.Gang{},
			want: gang.Validity{Valid: true},
		},
		{
			name: "a task below its minimum",
			gang: &gang.Gang{Source: volcano.Source, MinMember: 3, MinTaskMember: map[string]int32{"ps": 1, "worker": 2},
				Members: []*corev1.Pod{pending("w0").VolcanoTask("worker").Obj(), pending("w1").VolcanoTask("worker").Obj(),
					pending("w2").VolcanoTask("worker").Obj(), pending("p0").VolcanoTask("ps").Phase(corev1.PodFailed).Obj()}},
			want: gang.Validity{Reason: "NotEnoughPodsOfTask", Message: "Not enough valid pods of each task for gang-scheduling",
				ValidCount: 3, MinMember: 3, TasksChecked: true,
				Tasks: []gang.TaskValidity{{Name: "ps", Valid: 0, Min: 1}, {Name: "worker", Valid: 3, Min: 2}}},
		},
		{
			name: "tasks named by label; a task minimum of 0 is not checked",
			gang: &gang.Gang{Source: volcano.Source, MinMember: 2, MinTaskMember: map[string]int32{"ps": 0, "worker": 2},
				Members: []*corev1.Pod{pending("w0").Label("volcano.sh/task-spec", "worker").Obj(), pending("w1").VolcanoTask("worker").Obj()}},
			want: gang.Validity{Valid: true, ValidCount: 2, MinMember: 2, TasksChecked: true,
				Tasks: []gang.TaskValidity{{Name: "ps", Min: 0}, {Name: "worker", Valid: 2, Min: 2}}},
		},
		{
			name: "the task check is skipped when minMember is below the task minimums' sum",
			gang: &gang.Gang{Source: volcano.Source, MinMember: 2, MinTaskMember: map[string]int32{"ps": 1, "worker": 2},
				Members: []*corev1.Pod{pending("w0").VolcanoTask("worker").Obj(), pending("w1").VolcanoTask("worker").Obj()}},
			want: gang.Validity{Valid: true, ValidCount: 2, MinMember: 2,
				Tasks: []gang.TaskValidity{{Name: "ps", Min: 1}, {Name: "worker", Valid: 2, Min: 2}}},
		},
		{
			name: "tasks pass but the gang is short",
			gang: &gang.Gang{Source: volcano.Source, MinMember: 4, MinTaskMember: map[string]int32{"worker": 2},
				Members: []*corev1.Pod{pending("w0").VolcanoTask("worker").Obj(), pending("w1").VolcanoTask("worker").Obj()}},
			want: gang.Validity{Reason: "NotEnoughPods", Message: "Not enough valid tasks for gang-scheduling, valid: 2, min: 4",
				ValidCount: 2, MinMember: 4, TasksChecked: true, Tasks: []gang.TaskValidity{{Name: "worker", Valid: 2, Min: 2}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := testutil.Diff(tt.want, gang.Validate(tt.gang)); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateWith(t *testing.T) {
	a := testutil.MakePod().Name("a").Phase(corev1.PodFailed).Obj()
	b := testutil.MakePod().Name("b").Phase(corev1.PodFailed).Obj()
	c := testutil.MakePod().Name("c").Phase(corev1.PodFailed).Obj()
	g := &gang.Gang{MinMember: 3, Members: []*corev1.Pod{a, b, c}}
	// A placement marks the members it placed; everything else keeps its pod's status.
	statuses := map[*corev1.Pod]gang.TaskStatus{a: gang.TaskAllocated, b: gang.TaskPipelined}
	status := func(p *corev1.Pod) gang.TaskStatus {
		if s, ok := statuses[p]; ok {
			return s
		}
		return gang.TaskStatusOf(p)
	}
	want := gang.Validity{Reason: "NotEnoughPods", Message: "Not enough valid tasks for gang-scheduling, valid: 2, min: 3", ValidCount: 2, MinMember: 3}
	if diff := testutil.Diff(want, gang.ValidateWith(g, status)); diff != "" {
		t.Errorf("ValidateWith (-want +got):\n%s", diff)
	}
	statuses[c] = gang.TaskBinding
	if got := gang.ValidateWith(g, status); !got.Valid || got.ValidCount != 3 {
		t.Errorf("ValidateWith with all placed = %+v, want valid with 3", got)
	}
}
