package quota

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

const flavorF0 = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f0}
`

func queue(cq string) string {
	return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q0, namespace: ns}\nspec: {clusterQueue: " + cq + "}\n"
}

// The worked example of the quota tree (resource_node.go available,
// potentialAvailable, addUsage): a root cohort with 4 GPUs of its own, A
// with 8 nominal lending 2, B with none borrowing up to 6; A uses 7.
func TestQuotaTreeArithmetic(t *testing.T) {
	m := load(t, flavorF0+`---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: root}
spec: {resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec: {cohortName: root, namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 8, lendingLimit: 2}]}]}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: b}
spec: {cohortName: root, namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 0, borrowingLimit: 6}]}]}]}
---
`+strings.ReplaceAll(admitted("w", "a", 7, 0, 0, "2026-01-01T00:00:00Z"), "cpu: f0, ", ""))
	fr := FlavorResource{"f0", "nvidia.com/gpu"}
	a, b := m.ClusterQueues["a"].node, m.ClusterQueues["b"].node
	for _, c := range []struct {
		what      string
		got, want int64
	}{
		{"root subtree", a.parent.subtree[fr], 6}, {"root usage", a.parent.usage[fr], 1},
		{"available(b)", b.available(fr), 5}, {"available(a)", a.available(fr), 5},
		{"potentialAvailable(b)", b.potentialAvailable(fr), 6}, {"potentialAvailable(a)", a.potentialAvailable(fr), 12},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
		}
	}
}

// Flavors the pods cannot use are skipped with Kueue's reasons, sorted
// (checkFlavorForPodSets, Assignment.Message): a taint they do not
// tolerate, node labels their selector excludes; then the quota of the
// flavor they may use.
func TestFlavorsSkippedAndMessage(t *testing.T) {
	m := load(t, `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
spec: {nodeLabels: {pool: a}, nodeTaints: [{key: spot, value: "true", effect: NoSchedule}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: b}
spec: {nodeLabels: {pool: b}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a}
spec: {nodeLabels: {pool: a}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [
  {name: spot, resources: [{name: nvidia.com/gpu, nominalQuota: 16}, {name: cpu, nominalQuota: 64}]},
  {name: b, resources: [{name: nvidia.com/gpu, nominalQuota: 16}, {name: cpu, nominalQuota: 64}]},
  {name: a, resources: [{name: nvidia.com/gpu, nominalQuota: 4}, {name: cpu, nominalQuota: 64}]}]}]}
---
`+queue("cq"))
	sub := subject(8, 1, 1, 0)
	sub.PodSets[0].Spec = &corev1.PodSpec{NodeSelector: map[string]string{"pool": "a"}}
	d := m.Admit(sub)
	want := "couldn't assign flavors to pod set main: flavor b doesn't match node affinity, insufficient quota for nvidia.com/gpu in flavor a, " +
		"previously considered podsets requests (0) + current podset request (8) > maximum capacity (4), untolerated taint {spot true NoSchedule <nil>} in flavor spot"
	if d.Admitted || d.Message != want {
		t.Errorf("got %+v\nwant %q", d, want)
	}
	// Tolerating the taint, the spot flavor holds it.
	sub.PodSets[0].Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
	if d := m.Admit(sub); !d.Admitted || d.PodSets[0].Flavors["nvidia.com/gpu"] != "spot" {
		t.Errorf("tolerating: %+v", d)
	}
}

// Partial admission (PodSetReducer.Search): a Job of 4 pods that may run
// with 2 gets the most that fit, 3.
func TestPartialAdmission(t *testing.T) {
	m := load(t, flavorF0+`---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 3}, {name: cpu, nominalQuota: 64}]}]}]}
---
`+queue("cq"))
	sub := subject(1, 1, 4, 0)
	if d := m.Admit(sub); d.Admitted {
		t.Fatalf("all 4: %+v", d)
	}
	sub.PodSets[0].MinCount = 2
	if d := m.Admit(sub); !d.Admitted || d.PodSets[0].Count != 3 {
		t.Errorf("min 2: %+v", d)
	}
}

// The workload controller's and scheduler's refusals before any flavor
// (workload_controller.go Reconcile, scheduler.go nominate), and admission
// checks left not evaluated (AdmissionChecksForWorkload).
func TestQueueRefusals(t *testing.T) {
	cq := func(name, extra string) string {
		return `apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: ` + name + `}
spec: {` + extra + `resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 8}, {name: cpu, nominalQuota: 64}]}]}]}
`
	}
	for _, c := range []struct {
		name, objects, want, detail string
		notEvaluated                string
	}{
		{"no LocalQueue", flavorF0 + "---\n" + cq("cq", "namespaceSelector: {}, "), "LocalQueue q0 doesn't exist", "", ""},
		{"no ClusterQueue", flavorF0 + "---\n" + queue("cq"), "ClusterQueue cq doesn't exist", "", ""},
		{"stopped", flavorF0 + "---\n" + cq("cq", "namespaceSelector: {}, stopPolicy: Hold, ") + "---\n" + queue("cq"),
			"ClusterQueue cq is inactive", "Can't admit new workloads: is stopped.", ""},
		{"missing flavor", cq("cq", "namespaceSelector: {}, ") + "---\n" + queue("cq"),
			"ClusterQueue cq is inactive", "Can't admit new workloads: references missing ResourceFlavor(s): f0.", ""},
		{"nil namespaceSelector selects none", flavorF0 + "---\n" + cq("cq", "") + "---\n" + queue("cq"),
			"Workload namespace doesn't match ClusterQueue selector", "", ""},
		{"admission check", flavorF0 + "---\n" + cq("cq", "namespaceSelector: {}, admissionChecksStrategy: {admissionChecks: [{name: prov}]}, ") + "---\n" + queue("cq") +
			"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: prov}\nspec: {controllerName: x}\nstatus: {conditions: [{type: Active, status: \"True\", reason: Active, message: ok, lastTransitionTime: \"2026-01-01T00:00:00Z\"}]}\n",
			"", "", "admission check prov of ClusterQueue cq"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := load(t, c.objects).Admit(subject(1, 1, 1, 0))
			if d.Message != c.want || d.Detail != c.detail || (c.want != "") == d.Admitted {
				t.Errorf("got %+v", d)
			}
			if c.notEvaluated != "" && (len(d.NotEvaluated) != 1 || !strings.HasPrefix(d.NotEvaluated[0], c.notEvaluated)) {
				t.Errorf("not evaluated %q", d.NotEvaluated)
			}
		})
	}
}

// Preemption within the ClusterQueue takes the lower-priority Workload
// reserved last (CandidatesOrdering) and no more than it needs
// (fillBackWorkloads).
func TestPreemptWithinClusterQueue(t *testing.T) {
	m := load(t, flavorF0+`---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {namespaceSelector: {}, preemption: {withinClusterQueue: LowerPriority}, resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 6}, {name: cpu, nominalQuota: 64}]}]}]}
---
`+queue("cq")+"---\n"+admitted("old", "cq", 2, 1, 0, "2026-01-01T00:00:00Z")+"---\n"+admitted("new", "cq", 2, 1, 0, "2026-01-02T00:00:00Z")+
		"---\n"+admitted("high", "cq", 2, 1, 500, "2026-01-03T00:00:00Z"))
	d := m.Admit(subject(2, 1, 1, 100))
	if !d.Admitted || len(d.Preempts) != 1 || d.Preempts[0].Workload.Name != "new" || d.Preempts[0].Reason != "InClusterQueue" ||
		d.Message != "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor f0, 2 more needed. Pending the preemption of 1 workload(s)" {
		t.Errorf("got %+v", d)
	}
	// Equal priority does not preempt under LowerPriority.
	if d := m.Admit(subject(2, 1, 1, 0)); d.Admitted {
		t.Errorf("equal priority: %+v", d)
	}
}

// A StrictFIFO queue holds every Workload behind a head it cannot admit.
func TestStrictFIFOHead(t *testing.T) {
	pending := `apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: head, namespace: ns, uid: head, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {queueName: q0, podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, image: c, resources: {requests: {nvidia.com/gpu: "16"}, limits: {nvidia.com/gpu: "16"}}}]}}}]}
`
	for _, strategy := range []string{"StrictFIFO", "BestEffortFIFO"} {
		m := load(t, flavorF0+`---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {namespaceSelector: {}, queueingStrategy: `+strategy+`, resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 8}, {name: cpu, nominalQuota: 64}]}]}]}
---
`+queue("cq")+"---\n"+pending)
		d := m.Admit(subject(1, 1, 1, 0))
		if strict := strategy == "StrictFIFO"; d.Admitted == strict || (strict && (d.Behind == nil || d.Behind.Name != "head")) {
			t.Errorf("%s: %+v", strategy, d)
		}
	}
}

// Reclaimable pods scale usage down only when the spec's count less them
// is below the admitted count (workload.totalRequestsFromAdmission): a
// partial admission of 6 of 10 with 3 reclaimable still holds 6.
func TestReclaimableScaling(t *testing.T) {
	w := load(t, strings.Replace(strings.Replace(admitted("w", "cq", 6, 6, 0, "2026-01-01T00:00:00Z"),
		"podSets: [{name: main, count: 1,", "podSets: [{name: main, count: 10,", 1),
		"podSetAssignments: [{name: main, count: 1,", "podSetAssignments: [{name: main, count: 6,", 1)+
		"  reclaimablePods: [{name: main, count: 3}]\n").Workloads["ns/w"]
	if got := w.Usage()[FlavorResource{"f0", "nvidia.com/gpu"}]; got != 6 {
		t.Errorf("7 left of 10, 6 admitted: usage %d, want 6", got)
	}
	w.Status.ReclaimablePods[0].Count = 7
	if got := w.Usage()[FlavorResource{"f0", "nvidia.com/gpu"}]; got != 3 {
		t.Errorf("3 left of 10, 6 admitted: usage %d, want 3", got)
	}
}

// A v1beta1 object is not read with v1beta2's field names: it is a
// problem, said once.
func TestOtherVersionIsAProblem(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal([]byte("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: old}\nspec: {cohort: c}\n"), &u.Object); err != nil {
		t.Fatal(err)
	}
	m := Load([]*unstructured.Unstructured{u}, nil)
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0], "ClusterQueue old is at kueue.x-k8s.io/v1beta1") || m.ClusterQueues["old"] != nil {
		t.Errorf("problems %q, queues %v", m.Problems, m.ClusterQueues)
	}
}

// A Workload Kueue decided is judged by its state: one holding quota is
// admitted as it is (not decided, nor charged, twice); a finished one is
// refused.
func TestSettledWorkload(t *testing.T) {
	m := load(t, flavorF0+`---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 4}, {name: cpu, nominalQuota: 64}]}]}]}
---
`+queue("cq")+"---\n"+admitted("held", "cq", 4, 1, 0, "2026-01-01T00:00:00Z"))
	w := m.Workloads["ns/held"]
	d := m.Admit(SubjectOf(w))
	if !d.Admitted || len(d.NotEvaluated) != 1 || !strings.Contains(d.NotEvaluated[0], "waits for its admission checks") {
		t.Errorf("holding quota, no Admitted condition: %+v", d)
	}
	w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: ConditionFinished, Status: metav1.ConditionTrue})
	if d := m.Admit(SubjectOf(w)); d.Admitted || d.Reason != "Finished" {
		t.Errorf("finished: %+v", d)
	}
}

// A Workload ahead that preempts is admitted first once its targets are
// gone (the sticky head), and the queue moves on: the subject gets what
// is left, not the room the ahead one takes.
func TestPreemptorAhead(t *testing.T) {
	pending := `apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: pre, namespace: ns, uid: pre, creationTimestamp: "2026-01-02T00:00:00Z"}
spec: {queueName: q0, priority: 500, podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, image: c, resources: {requests: {nvidia.com/gpu: "6"}, limits: {nvidia.com/gpu: "6"}}}]}}}]}
`
	m := load(t, flavorF0+`---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {namespaceSelector: {}, preemption: {withinClusterQueue: LowerPriority}, resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 8}, {name: cpu, nominalQuota: 64}]}]}]}
---
`+queue("cq")+"---\n"+admitted("low", "cq", 4, 1, 0, "2026-01-01T00:00:00Z")+"---\n"+pending)
	// 4 free now; once pre evicts low and takes 6 of 8, 2: 2 GPUs fit,
	// 3 do not (they would in the 4 free without pre).
	if d := m.Admit(subject(2, 1, 1, 0)); !d.Admitted {
		t.Errorf("2 GPUs: %+v", d)
	}
	if d := m.Admit(subject(3, 1, 1, 0)); d.Admitted {
		t.Errorf("3 GPUs: %+v", d)
	}
}

// A cohort whose queues set fairSharing may run Kueue's fair sharing (its
// Configuration says, which is not in the API): not evaluated, never a
// plain yes. A lone queue is never in a cohort's fair sharing.
func TestFairSharingNotEvaluated(t *testing.T) {
	cq := func(extra string) string {
		return flavorF0 + `---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {` + extra + `namespaceSelector: {}, fairSharing: {weight: 2}, resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: 8}, {name: cpu, nominalQuota: 64}]}]}]}
---
` + queue("cq")
	}
	if d := load(t, cq("cohortName: co, ")).Admit(subject(1, 1, 1, 0)); !d.Admitted || len(d.NotEvaluated) != 1 || !strings.Contains(d.NotEvaluated[0], "fairSharing") {
		t.Errorf("in a cohort: %+v", d)
	}
	if d := load(t, cq("")).Admit(subject(1, 1, 1, 0)); !d.Admitted || len(d.NotEvaluated) != 0 {
		t.Errorf("alone: %+v", d)
	}
}

// A malformed Workload is a problem that names the object and the field
// (pkg/fields), and the rest of the model is read.
func TestMalformedWorkload(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal([]byte("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec: {priority: high, podSets: []}\n"), &u.Object); err != nil {
		t.Fatal(err)
	}
	m := Load([]*unstructured.Unstructured{u}, nil)
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0], "workloads.kueue.x-k8s.io ns/w") || !strings.Contains(m.Problems[0], "spec.priority") {
		t.Errorf("problems %q", m.Problems)
	}
}

// A Workload of no pod set, or of more than eight, is one the API server
// refuses (MinItems=1, MaxItems=8): a problem naming the field, not a
// Workload decided with an empty message.
func TestWorkloadPodSetsCount(t *testing.T) {
	for _, sets := range []string{"[]", "[" + strings.TrimSuffix(strings.Repeat("{name: a, count: 1, template: {spec: {containers: [{name: c, image: c}]}}}, ", 9), ", ") + "]"} {
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal([]byte("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec: {queueName: q, podSets: "+sets+"}\n"), &u.Object); err != nil {
			t.Fatal(err)
		}
		m := Load([]*unstructured.Unstructured{u}, nil)
		if len(m.Problems) != 1 || !strings.Contains(m.Problems[0], "spec.podSets") || !strings.Contains(m.Problems[0], "must have 1 to 8 items") {
			t.Errorf("podSets %s: problems %q", sets[:min(len(sets), 20)], m.Problems)
		}
	}
}
