package gang

import (
	corev1 "k8s.io/api/core/v1"
)

// TaskStatus is a member's state as Volcano's scheduler sees it.
type TaskStatus string

// The task statuses of Volcano's scheduler (pkg/scheduler/api/types.go).
// TaskAllocated, TaskPipelined and TaskBinding exist only inside a scheduling session;
// TaskStatusOf never returns them, but a placement can assign them to the
// members it places (see ValidateWith).
const (
	TaskPending   TaskStatus = "Pending"
	TaskAllocated TaskStatus = "Allocated"
	TaskPipelined TaskStatus = "Pipelined"
	TaskBinding   TaskStatus = "Binding"
	TaskBound     TaskStatus = "Bound"
	TaskRunning   TaskStatus = "Running"
	TaskReleasing TaskStatus = "Releasing"
	TaskSucceeded TaskStatus = "Succeeded"
	TaskFailed    TaskStatus = "Failed"
	TaskUnknown   TaskStatus = "Unknown"
)

// The reasons Validate gives for an invalid gang.
const (
	// ReasonNotEnoughPods is kubectl-gang's reason for too few valid members.
	// Volcano's constant is called NotEnoughPodsReason but its value is
	// "NotEnoughTasks"; kubectl-gang's contract (docs/design.md#gangs) names it after
	// the constant.
	ReasonNotEnoughPods = "NotEnoughPods"
	// ReasonNotEnoughPodsOfTask is Volcano's reason for a task below its
	// minTaskMember.
	ReasonNotEnoughPodsOfTask = "NotEnoughPodsOfTask"
)

// IsAllocated reports the statuses Volcano counts as holding a node
// (AllocatedStatus): Bound, Binding, Running, Allocated.
func (s TaskStatus) IsAllocated() bool {
	switch s {
	case TaskBound, TaskBinding, TaskRunning, TaskAllocated:
		return true
	}
	return false
}

// countsAsValid reports the statuses the gang plugin counts toward the
// minimum (ValidTaskNum): the allocated family, Succeeded, Pipelined and Pending.
func (s TaskStatus) countsAsValid() bool {
	return s.IsAllocated() || s == TaskSucceeded || s == TaskPipelined || s == TaskPending
}

// TaskStatusOf derives a member's task status from its pod as Volcano's
// getTaskStatus does: a pod being deleted is Releasing; a Pending pod with a
// node is Bound; a phase Volcano does not know (including none) is Unknown.
func TaskStatusOf(pod *corev1.Pod) TaskStatus {
	switch pod.Status.Phase {
	case corev1.PodRunning:
		if pod.DeletionTimestamp != nil {
			return TaskReleasing
		}
		return TaskRunning
	case corev1.PodPending:
		if pod.DeletionTimestamp != nil {
			return TaskReleasing
		}
		if pod.Spec.NodeName == "" {
			return TaskPending
		}
		return TaskBound
	case corev1.PodSucceeded:
		return TaskSucceeded
	case corev1.PodFailed:
		return TaskFailed
	}
	return TaskUnknown
}

// Validity is a gang's validity as Volcano's gang plugin decides it.
type Validity struct {
	Valid bool
	// Reason and Message explain an invalid gang; empty when valid.
	Reason  string
	Message string
	// ValidCount is how many members count toward the minimum.
	ValidCount int32
	MinMember  int32
	// Tasks are the per-task figures, one per minTaskMember entry, by name.
	Tasks []TaskValidity
	// TasksChecked is false when Volcano skips the per-task check because
	// minMember is below the sum of the task minimums.
	TasksChecked bool
}

// TaskValidity is one Volcano task's valid member count against its minimum.
type TaskValidity struct {
	Name  string
	Valid int32
	Min   int32
}

// Validate decides a gang's validity from its members' pods (TaskStatusOf)
// and its Succeeded members, which Volcano counts toward the minimum.
func Validate(g *Gang) Validity {
	return ValidateWith(g, TaskStatusOf)
}

// ValidateWith is Validate with the members' statuses given by status, so a
// placement can mark the members it places Allocated or Pipelined. It follows
// Volcano's gang plugin validJobFn: first the per-task check (CheckTaskValid,
// skipped when minMember is below the sum of minTaskMember), then the member
// count (ValidTaskNum) against minMember. Volcano's sub-group check
// (subGroupPolicy) is not made; Resolve reports that field as notEvaluated.
func ValidateWith(g *Gang, status func(*corev1.Pod) TaskStatus) Validity {
	v := Validity{Valid: true, MinMember: g.MinMember}
	perTask := map[string]int32{}
	taskOf := func(*corev1.Pod) string { return "" }
	if t, ok := SystemOf(g.Source).(Tasker); ok {
		taskOf = t.TaskOf
	}
	for _, pod := range g.Members {
		if status(pod).countsAsValid() {
			v.ValidCount++
			perTask[taskOf(pod)]++
		}
	}
	for _, pod := range g.Succeeded {
		v.ValidCount++
		perTask[taskOf(pod)]++
	}
	var taskMinTotal int32
	for _, name := range sortedKeys(g.MinTaskMember) {
		minimum := g.MinTaskMember[name]
		taskMinTotal += minimum
		v.Tasks = append(v.Tasks, TaskValidity{Name: name, Valid: perTask[name], Min: minimum})
	}
	v.TasksChecked = len(g.MinTaskMember) > 0 && g.MinMember >= taskMinTotal
	if v.TasksChecked {
		for _, t := range v.Tasks {
			if t.Min > 0 && t.Valid < t.Min {
				v.Valid = false
				v.Reason = ReasonNotEnoughPodsOfTask
				// validJobFn's words (pkg/scheduler/plugins/gang/gang.go).
				v.Message = "Not enough valid pods of each task for gang-scheduling"
				return v
			}
		}
	}
	if v.ValidCount < g.MinMember {
		v.Valid = false
		v.Reason = ReasonNotEnoughPods
		v.Message = shortMessage(g, v)
	}
	return v
}
