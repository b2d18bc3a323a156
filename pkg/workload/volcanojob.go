package workload

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// volcanoTask is one task of a Volcano Job.
type volcanoTask struct {
	name         string
	replicas     int32
	minAvailable int32
	template     corev1.PodTemplateSpec
}

// addVolcanoJob adds a Volcano Job's pods and the PodGroup its controller
// creates, with the defaults Volcano's admission webhook applies: task names
// default<i>, a task's minAvailable its replicas, the job's minAvailable the
// sum of its tasks', queue "default", scheduler "volcano".
func (m *builder) addVolcanoJob(obj *unstructured.Unstructured, ns, name, what string) error {
	named := obj.DeepCopy()
	named.SetNamespace(ns)
	named.SetName(name)
	p := fields.New(named)
	rawTasks, err := p.Slice("spec", "tasks")
	if err != nil {
		return err
	}
	if len(rawTasks) == 0 {
		return p.Errorf([]string{"spec", "tasks"}, "is required")
	}
	tasks, sumMin, err := readVolcanoTasks(p, rawTasks)
	if err != nil {
		return err
	}
	minAvailable, _, err := p.Int32(0, 0, "spec", "minAvailable")
	if err != nil {
		return err
	}
	if minAvailable == 0 {
		minAvailable = sumMin
	}
	var replicas int32
	for _, t := range tasks {
		replicas += t.replicas
	}
	m.recordMinimum(what, "spec.minAvailable", minAvailable, replicas)
	queue, err := p.String("spec", "queue")
	if err != nil {
		return err
	}
	if queue == "" {
		queue = volcano.DefaultQueue
	}
	priorityClass, err := p.String("spec", "priorityClassName")
	if err != nil {
		return err
	}
	schedulerName, err := p.String("spec", "schedulerName")
	if err != nil {
		return err
	}
	if schedulerName == "" {
		schedulerName = volcanoSchedulerName
	}

	minTaskMember := map[string]any{}
	for _, t := range tasks {
		minTaskMember[t.name] = int64(t.minAvailable)
	}
	minResources := map[string]any{}
	for rn, q := range volcanoJobMinResources(tasks, minAvailable) {
		minResources[string(rn)] = q.String()
	}
	spec := map[string]any{
		"minMember":     int64(minAvailable),
		"minTaskMember": minTaskMember,
		"queue":         queue,
		"minResources":  minResources,
	}
	if priorityClass != "" {
		spec["priorityClassName"] = priorityClass
	}
	if nt, err := p.Map("spec", "networkTopology"); err != nil {
		return err
	} else if nt != nil {
		spec["networkTopology"] = runtime.DeepCopyJSONValue(nt)
	}
	pg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": volcano.Group + "/v1beta1",
		"kind":       schedule.PodGroupKind,
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec":       spec,
	}}
	if err := m.setPodGroup(pg, what); err != nil {
		return err
	}

	return m.addVolcanoTaskPods(tasks, ns, name, queue, schedulerName, priorityClass)
}

// volcanoJobMinResources is the minResources Volcano's job controller gives
// the PodGroup of a job (calcPGMinResources): the requests of the first
// minAvailable pods, taking each task's minAvailable first and then its
// remaining replicas, in task order. Volcano orders the tasks by the value
// of their PriorityClass first; that needs the cluster's classes, so here
// every task counts as priority 0 (Volcano's own fallback when it cannot
// read a class). Volcano derives the requests from quota usage; the quota-only
// names that yields (requests.*, limits.*, count/*) are left out, as its
// scheduler ignores them.
func volcanoJobMinResources(tasks []volcanoTask, jobMin int32) corev1.ResourceList {
	out := corev1.ResourceList{}
	add := func(t volcanoTask, count int32) {
		if count <= 0 {
			return
		}
		pod := &corev1.Pod{Spec: t.template.Spec}
		usage := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		usage[corev1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
		for name, q := range usage {
			q.Mul(int64(count))
			sum := out[name]
			sum.Add(q)
			out[name] = sum
		}
	}
	var total int32
	for _, t := range tasks {
		total += t.minAvailable
	}
	if jobMin < total {
		count := jobMin
		for _, t := range tasks {
			if count <= t.replicas {
				add(t, count)
				break
			}
			add(t, t.replicas)
			count -= t.replicas
		}
		return out
	}
	var placed int32
	for _, t := range tasks {
		n := min(t.minAvailable, jobMin-placed)
		add(t, n)
		placed += n
		if placed >= jobMin {
			return out
		}
	}
	left := jobMin - placed
	for _, t := range tasks {
		if t.minAvailable == t.replicas {
			continue
		}
		n := min(left, t.replicas-t.minAvailable)
		add(t, n)
		left -= n
		if left <= 0 {
			break
		}
	}
	return out
}

// readVolcanoTasks reads a Volcano Job's spec.tasks: each task's name (a
// default for none), replicas, minAvailable (its replicas when unset) and
// pod template; sumMin is the tasks' minAvailable summed.
func readVolcanoTasks(p *fields.Reader, rawTasks []any) ([]volcanoTask, int32, error) {
	var err error
	tasks := make([]volcanoTask, len(rawTasks))
	var sumMin int32
	for i, raw := range rawTasks {
		path := []string{"spec", fmt.Sprintf("tasks[%d]", i)}
		tm, ok := raw.(map[string]any)
		if !ok {
			return nil, 0, p.Errorf(path, "must be an object, got %s", fields.Describe(raw))
		}
		tp := p.Within(tm)
		t := &tasks[i]
		if t.name, err = tp.String("name"); err != nil {
			return nil, 0, fields.Prefix(err, path)
		}
		if t.name == "" {
			t.name = volcanoDefaultTask + strconv.Itoa(i)
		}
		if t.replicas, _, err = tp.Int32(0, 0, "replicas"); err != nil {
			return nil, 0, fields.Prefix(err, path)
		}
		var found bool
		if t.minAvailable, found, err = tp.Int32(0, 0, "minAvailable"); err != nil {
			return nil, 0, fields.Prefix(err, path)
		}
		if !found {
			t.minAvailable = t.replicas
		}
		sumMin += t.minAvailable
		tmpl, err := tp.Map("template")
		if err != nil {
			return nil, 0, fields.Prefix(err, path)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &t.template); err != nil {
			return nil, 0, p.Errorf(append(path, "template"), "%v", err)
		}
	}
	return tasks, sumMin, nil
}

// addVolcanoTaskPods adds the pods of a Volcano Job's tasks, as its
// controller creates them: named JOB-TASK-INDEX, with the scheduler, the
// priority class and the job's, task's and queue's keys.
func (m *builder) addVolcanoTaskPods(tasks []volcanoTask, ns, name, queue, schedulerName, priorityClass string) error {
	for _, t := range tasks {
		for i := range int(t.replicas) {
			pod := podFromTemplate(&t.template, ns, fmt.Sprintf("%s-%s-%d", name, t.name, i))
			if pod.Spec.SchedulerName == "" {
				pod.Spec.SchedulerName = schedulerName
			}
			if pod.Spec.PriorityClassName == "" {
				pod.Spec.PriorityClassName = priorityClass
			}
			index := strconv.Itoa(i)
			pod.Annotations[volcano.TaskAnnotation] = t.name
			pod.Annotations[volcano.GroupAnnotation] = name
			pod.Annotations[volcanoJobNameKey] = name
			pod.Annotations[volcanoQueueNameKey] = queue
			pod.Annotations[volcanoTaskIndexKey] = index
			pod.Labels[volcano.TaskAnnotation] = t.name
			pod.Labels[volcanoJobNameKey] = name
			pod.Labels[volcanoJobNamespace] = ns
			pod.Labels[volcanoQueueNameKey] = queue
			pod.Labels[volcanoTaskIndexKey] = index
			if err := m.addPod(pod); err != nil {
				return err
			}
		}
	}
	return nil
}
