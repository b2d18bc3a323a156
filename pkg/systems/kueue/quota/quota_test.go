package quota

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"
)

// load reads YAML documents (kueue.x-k8s.io objects) into a model.
func load(t *testing.T, docs string) *Model {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, d := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(d) == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
	m := Load(objs, nil)
	for _, p := range m.Problems {
		t.Errorf("problem: %s", p)
	}
	return m
}

func admitted(name, cq string, gpu, cpu int, prio int32, at string) string {
	return `apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: ` + name + `, namespace: ns, uid: ` + name + `, creationTimestamp: "` + at + `"}
spec:
  priority: ` + itoa(int(prio)) + `
  queueName: q
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, image: c}]}}}]
status:
  admission:
    clusterQueue: ` + cq + `
    podSetAssignments: [{name: main, count: 1, flavors: {cpu: f0, nvidia.com/gpu: f0}, resourceUsage: {cpu: "` + itoa(cpu) + `", nvidia.com/gpu: "` + itoa(gpu) + `"}}]
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved, message: m, lastTransitionTime: "` + at + `"}
`
}

func itoa(i int) string { return strconv.Itoa(i) }

func subject(gpu, cpu int64, count int32, prio int32) *Subject {
	return &Subject{Namespace: "ns", Name: "subject", Queue: "q0", Priority: prio, QueueTime: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		PodSets: []SubjectPodSet{{Name: "main", Count: count, MinCount: count, Spec: &corev1.PodSpec{},
			PerPod: map[corev1.ResourceName]int64{"nvidia.com/gpu": gpu, "cpu": cpu * 1000}}}}
}

// Reclaim within a cohort whose members lend all or part of their quota
// (conformance seed 161, where Kueue preempted the lower-priority Workload
// of the ClusterQueue borrowing from the cohort): cq0's 3 GPUs fit its
// nominal quota, but the cohort has 1 left, so Kueue reclaims from cq2.
func TestReclaimFromBorrowingQueue(t *testing.T) {
	m := load(t, `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f0}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: co}
spec: {resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 0}, {name: cpu, nominalQuota: 24}]}]}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq0}
spec: {cohortName: co, namespaceSelector: {}, queueingStrategy: StrictFIFO, resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 7}, {name: cpu, nominalQuota: 16}]}]}], preemption: {withinClusterQueue: Never, reclaimWithinCohort: LowerPriority}, flavorFungibility: {whenCanBorrow: MayStopSearch, whenCanPreempt: MayStopSearch}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq1}
spec: {cohortName: co, namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 7, lendingLimit: 1}, {name: cpu, nominalQuota: 32, lendingLimit: 18}]}]}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq2}
spec: {cohortName: co, namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 2}, {name: cpu, nominalQuota: 16, lendingLimit: 4}]}]}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q0, namespace: ns}
spec: {clusterQueue: cq0}
---
`+admitted("bg1", "cq2", 3, 6, 0, "2026-01-01T00:00:01Z")+`
---
`+admitted("bg2", "cq0", 2, 1, 0, "2026-01-01T00:00:02Z")+`
---
`+admitted("bg3", "cq1", 2, 2, 100, "2026-01-01T00:00:03Z")+`
---
`+admitted("bg4", "cq1", 8, 8, 1000, "2026-01-01T00:00:04Z"))
	d := m.Admit(subject(1, 1, 3, 1000))
	if !d.Admitted || len(d.Preempts) != 1 || d.Preempts[0].Workload.Name != "bg1" || d.Preempts[0].Reason != "InCohortReclamation" {
		t.Errorf("got %+v", d)
	}
}
