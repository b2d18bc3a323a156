package kueue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	sigsyaml "sigs.k8s.io/yaml"

	v1alpha1 "github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

// The conformance scenarios: each seed makes flavors, ClusterQueues (alone,
// in a cohort, in a tree of Cohorts with quota of their own), LocalQueues
// and WorkloadPriorityClasses of its own, submits background Jobs one at a
// time and lets Kueue settle each, then asks kubectl-gang about one more
// Job (place -f, read live) and submits it: Kueue's decision (quota
// reserved or not, the flavors, the Workloads it preempts, its message)
// must be kubectl-gang's. KUEUE_CONFORMANCE_SCENARIOS sets how many (200 by
// default), KUEUE_CONFORMANCE_SEED replays one.
func TestKueueConformance(t *testing.T) {
	n := 200
	if v := os.Getenv("KUEUE_CONFORMANCE_SCENARIOS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	if v := os.Getenv("KUEUE_CONFORMANCE_SEED"); v != "" {
		s, _ := strconv.ParseUint(v, 10, 64)
		seeds = []uint64{s}
	}
	dyn := dynamic.NewForConfigOrDie(env.Config)
	// Scenarios share nothing (their own queues, cohorts and namespace),
	// so several run at once: Kueue schedules their ClusterQueues side by
	// side, as it would any cluster's.
	const parallel = 20
	sem := make(chan struct{}, parallel)
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	stats := map[string]int{}
	for _, seed := range seeds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			sc := newScenario(seed)
			outcome, err := sc.run(t, dyn)
			mu.Lock()
			defer mu.Unlock()
			stats[outcome]++
			if err != nil {
				failed = append(failed, fmt.Sprintf("seed %d: %v\n  replay: KUEUE_CONFORMANCE_SEED=%d\n%s", seed, err, seed, sc.describe()))
			}
		}()
	}
	wg.Wait()
	slices.Sort(failed)
	for _, f := range failed {
		t.Error(f)
	}
	t.Logf("conformance: %d scenarios, %d disagree; outcomes %v", len(seeds), len(failed), stats)
}

var (
	gvrJob      = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	gvrWorkload = kueueGVR("workloads")
)

func kueueGVR(r string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: r}
}

// scenario is one seed's objects.
type scenario struct {
	seed     uint64
	r        *rand.Rand
	ns       string
	objects  []string // cluster-scoped and queue objects, YAML, in order
	jobs     []string // background Jobs, YAML
	subject  string
	names    []string // of the Jobs, background then subject
	log      []string
	flavors  int
	cqs      []string
	priority []string // WorkloadPriorityClass names
}

func newScenario(seed uint64) *scenario {
	s := &scenario{seed: seed, r: rand.New(rand.NewPCG(seed, 0x6b756575)), ns: fmt.Sprintf("kq-%d", seed)}
	s.generate()
	return s
}

func (s *scenario) name(what string, i int) string { return fmt.Sprintf("s%d-%s%d", s.seed, what, i) }

// generate draws the scenario.
func (s *scenario) generate() {
	r := s.r
	s.flavors = 1 + r.IntN(3)
	for i := range s.flavors {
		spec := fmt.Sprintf("nodeLabels: {pool: %s}", s.name("p", i))
		if r.IntN(4) == 0 {
			spec += ", nodeTaints: [{key: spot, value: \"true\", effect: NoSchedule}]"
			if r.IntN(3) == 0 {
				spec += ", tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]"
			}
		}
		s.objects = append(s.objects, fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: %s}\nspec: {%s}\n", s.name("f", i), spec))
	}
	for i, v := range []int{0, 100, 1000} {
		name := s.name("prio", i)
		s.priority = append(s.priority, name)
		s.objects = append(s.objects, fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: %s}\nvalue: %d\n", name, v))
	}
	// The cohort shape: none, one flat cohort, or a root with two child
	// cohorts (each a Cohort object, quota of their own sometimes).
	shape := r.IntN(3)
	nCQ := 1 + r.IntN(3)
	cohortOf := func(i int) string { return "" }
	switch shape {
	case 1:
		cohortOf = func(int) string { return s.name("co", 0) }
		if r.IntN(2) == 0 {
			s.objects = append(s.objects, s.cohort(s.name("co", 0), ""))
		}
	case 2:
		s.objects = append(s.objects, s.cohort(s.name("co", 0), ""))
		s.objects = append(s.objects, s.cohort(s.name("co", 1), s.name("co", 0)))
		s.objects = append(s.objects, s.cohort(s.name("co", 2), s.name("co", 0)))
		cohortOf = func(i int) string { return s.name("co", 1+i%2) }
	}
	for i := range nCQ {
		s.objects = append(s.objects, s.clusterQueue(i, cohortOf(i)))
		s.cqs = append(s.cqs, s.name("cq", i))
		s.objects = append(s.objects, fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq%d, namespace: %s}\nspec: {clusterQueue: %s}\n", i, s.ns, s.name("cq", i)))
	}
	for i := range 1 + r.IntN(6) {
		s.jobs = append(s.jobs, s.job(fmt.Sprintf("bg%d", i), false))
		s.names = append(s.names, fmt.Sprintf("bg%d", i))
	}
	s.subject = s.job("subject", true)
	s.names = append(s.names, "subject")
}

// quota draws one flavor's quota for the two resources.
func (s *scenario) quota(inCohort bool) string {
	r := s.r
	res := func(name string, nominal int) string {
		q := fmt.Sprintf("{name: %s, nominalQuota: %d", name, nominal)
		if inCohort && r.IntN(3) == 0 {
			q += fmt.Sprintf(", borrowingLimit: %d", r.IntN(9))
		}
		if inCohort && r.IntN(3) == 0 {
			q += fmt.Sprintf(", lendingLimit: %d", r.IntN(nominal+1))
		}
		return q + "}"
	}
	return "[" + res("nvidia.com/gpu", r.IntN(9)) + ", " + res("cpu", 16+r.IntN(3)*8) + "]"
}

func (s *scenario) cohort(name, parent string) string {
	spec := ""
	if parent != "" {
		spec = "parentName: " + parent
	}
	if s.r.IntN(2) == 0 {
		f := s.r.IntN(s.flavors)
		if spec != "" {
			spec += ", "
		}
		spec += fmt.Sprintf("resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [{name: %s, resources: %s}]}]", s.name("f", f), s.quota(parent != ""))
	}
	return fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: %s}\nspec: {%s}\n", name, spec)
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func (s *scenario) clusterQueue(i int, cohort string) string {
	r := s.r
	order := r.Perm(s.flavors)[:1+r.IntN(s.flavors)]
	var flavors []string
	for _, f := range order {
		flavors = append(flavors, fmt.Sprintf("{name: %s, resources: %s}", s.name("f", f), s.quota(cohort != "")))
	}
	var spec []string
	if cohort != "" {
		spec = append(spec, "cohortName: "+cohort)
	}
	spec = append(spec, "namespaceSelector: {}", "queueingStrategy: "+pick(r, "BestEffortFIFO", "StrictFIFO"),
		fmt.Sprintf("resourceGroups: [{coveredResources: [nvidia.com/gpu, cpu], flavors: [%s]}]", strings.Join(flavors, ", ")))
	reclaim := "Never"
	if cohort != "" {
		reclaim = pick(r, "Never", "LowerPriority", "Any")
	}
	pre := fmt.Sprintf("withinClusterQueue: %s, reclaimWithinCohort: %s", pick(r, "Never", "LowerPriority", "LowerPriority", "LowerOrNewerEqualPriority"), reclaim)
	if reclaim != "Never" && r.IntN(3) == 0 {
		pre += ", borrowWithinCohort: {policy: LowerPriority"
		if r.IntN(2) == 0 {
			pre += ", maxPriorityThreshold: 100"
		}
		pre += "}"
	}
	spec = append(spec, "preemption: {"+pre+"}")
	ff := []string{"whenCanBorrow: " + pick(r, "MayStopSearch", "TryNextFlavor"), "whenCanPreempt: " + pick(r, "MayStopSearch", "TryNextFlavor")}
	if ff[0] == "whenCanBorrow: TryNextFlavor" && ff[1] == "whenCanPreempt: TryNextFlavor" && r.IntN(2) == 0 {
		ff = append(ff, "preference: "+pick(r, "BorrowingOverPreemption", "PreemptionOverBorrowing"))
	}
	spec = append(spec, "flavorFungibility: {"+strings.Join(ff, ", ")+"}")
	if r.IntN(20) == 0 {
		spec = append(spec, "stopPolicy: Hold")
	}
	return fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: %s}\nspec: {%s}\n", s.name("cq", i), strings.Join(spec, ", "))
}

// job draws a Job for one of the LocalQueues (for the subject, now and
// then one that does not exist).
func (s *scenario) job(name string, subject bool) string {
	r := s.r
	queue := fmt.Sprintf("lq%d", r.IntN(len(s.cqs)))
	if subject && r.IntN(15) == 0 {
		queue = "missing"
	}
	labels := "kueue.x-k8s.io/queue-name: " + queue
	switch {
	case subject && r.IntN(2) == 0:
		// Subjects that outrank the background more often: preemption.
		labels += ", kueue.x-k8s.io/priority-class: " + s.priority[2]
	case r.IntN(4) != 0:
		labels += ", kueue.x-k8s.io/priority-class: " + pick(r, s.priority...)
	}
	parallelism := 1 + r.IntN(4)
	annotations := ""
	if parallelism > 1 && r.IntN(4) == 0 {
		annotations = fmt.Sprintf(", annotations: {kueue.x-k8s.io/job-min-parallelism: \"%d\"}", 1+r.IntN(parallelism-1))
	}
	gpu := 1 + r.IntN(4)
	var pod []string
	if r.IntN(4) == 0 {
		pod = append(pod, fmt.Sprintf("nodeSelector: {pool: %s}", s.name("p", r.IntN(s.flavors))))
	}
	if r.IntN(3) == 0 {
		pod = append(pod, "tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]")
	}
	pod = append(pod, "restartPolicy: Never",
		fmt.Sprintf("containers: [{name: c, image: c, resources: {requests: {cpu: \"%d\", nvidia.com/gpu: \"%d\"}, limits: {nvidia.com/gpu: \"%d\"}}}]", 1+r.IntN(2), gpu, gpu))
	return fmt.Sprintf("apiVersion: batch/v1\nkind: Job\nmetadata: {name: %s, namespace: %s, labels: {%s}%s}\nspec:\n  parallelism: %d\n  completions: %d\n  template:\n    spec: {%s}\n",
		name, s.ns, labels, annotations, parallelism, parallelism, strings.Join(pod, ", "))
}

func (s *scenario) describe() string {
	var b strings.Builder
	for _, o := range append(append(slices.Clone(s.objects), s.jobs...), s.subject) {
		b.WriteString("---\n" + o)
	}
	for _, l := range s.log {
		b.WriteString("# " + l + "\n")
	}
	return b.String()
}

func decode(y string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal([]byte(y), &u.Object); err != nil {
		panic(err)
	}
	return u
}

// create creates one object of the scenario.
func create(t *testing.T, dyn dynamic.Interface, y string) (*unstructured.Unstructured, error) {
	u := decode(y)
	gvk := u.GroupVersionKind()
	resource := strings.ToLower(gvk.Kind) + "s"
	if gvk.Kind == "WorkloadPriorityClass" {
		resource = "workloadpriorityclasses"
	}
	gvr := gvk.GroupVersion().WithResource(resource)
	ctx := t.Context()
	if u.GetNamespace() != "" {
		return dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
	}
	return dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{})
}

// kueueOutcome is what Kueue did with one Job, settled.
type kueueOutcome struct {
	admitted bool
	flavors  map[string]map[string]string
	counts   map[string]int32
	preempts []string
	message  string
	// neverTried: Kueue's scheduler never took the Workload up (it waits
	// behind a StrictFIFO queue's head).
	neverTried bool
}

func (o kueueOutcome) String() string {
	if o.admitted {
		return fmt.Sprintf("admitted %v counts %v preempting %v", o.flavors, o.counts, o.preempts)
	}
	if o.neverTried {
		return "never tried (no QuotaReserved condition)"
	}
	return "not admitted: " + o.message
}

// run sets the scenario up on the test bed, asks kubectl-gang, submits the
// subject and compares. It returns a word for the outcome (admitted,
// preempts, pending, ...) for the statistics.
func (s *scenario) run(t *testing.T, dyn dynamic.Interface) (string, error) {
	ctx := t.Context()
	if _, err := env.Clientset().CoreV1().Namespaces().Create(ctx, nsObj(s.ns), metav1.CreateOptions{}); err != nil {
		return "error", err
	}
	for _, o := range s.objects {
		if _, err := create(t, dyn, o); err != nil {
			return "error", fmt.Errorf("creating %s: %w", strings.SplitN(o, "\n", 4)[2], err)
		}
	}
	// Kueue's cache sees the queues before the first Job is queued.
	if err := s.waitQueuesActive(t, dyn); err != nil {
		return "error", err
	}
	for i, j := range s.jobs {
		job, err := create(t, dyn, j)
		if err != nil {
			return "error", fmt.Errorf("creating background Job %d: %w", i, err)
		}
		o, err := s.settle(t, dyn, job)
		if err != nil {
			return "error", err
		}
		s.log = append(s.log, fmt.Sprintf("background Job %s: %s", job.GetName(), o))
	}
	s.logWorkloads(t, dyn, "before the subject")
	// kubectl-gang's answer, on the cluster as it is before the subject.
	dir := t.TempDir()
	file := filepath.Join(dir, "subject.yaml")
	if err := os.WriteFile(file, []byte(s.subject), 0o644); err != nil {
		return "error", err
	}
	var out, errOut bytes.Buffer
	code := cmd.Main([]string{"place", "-f", file, "--kubeconfig", env.Kubeconfig, "-o", "json"}, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	var p v1alpha1.Placement
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		return "error", fmt.Errorf("place exit %d: %v: %s %s", code, err, out.String(), errOut.String())
	}
	job, err := create(t, dyn, s.subject)
	if err != nil {
		return "error", fmt.Errorf("creating the subject: %w", err)
	}
	real, err := s.settle(t, dyn, job)
	if err != nil {
		return "error", err
	}
	s.log = append(s.log, "subject: Kueue: "+real.String())
	s.logWorkloads(t, dyn, "after the subject")
	k := p.Kueue
	if k == nil {
		return "error", fmt.Errorf("place gave no kueue object (exit %d): %s", code, out.String())
	}
	s.log = append(s.log, fmt.Sprintf("subject: kubectl-gang: admitted %v flavors %v preempts %v message %q notEvaluated %q", k.Admitted, k.Flavors, k.Preempts, k.Message, k.NotEvaluated))
	outcome := "pending"
	switch {
	case real.admitted && len(real.preempts) > 0:
		outcome = "admitted after preemption"
	case real.admitted:
		outcome = "admitted"
	}
	var diffs []string
	if k.Admitted != real.admitted {
		diffs = append(diffs, fmt.Sprintf("admitted: kubectl-gang %v, Kueue %v", k.Admitted, real.admitted))
	}
	if real.admitted && k.Admitted && !equalFlavors(k.Flavors, real.flavors) {
		diffs = append(diffs, fmt.Sprintf("flavors: kubectl-gang %v, Kueue %v", k.Flavors, real.flavors))
	}
	if real.admitted && k.Admitted && !maps.Equal(k.Counts, real.counts) {
		diffs = append(diffs, fmt.Sprintf("counts: kubectl-gang %v, Kueue %v", k.Counts, real.counts))
	}
	if p, ok, _ := unstructured.NestedFieldNoCopy(decode(s.subject).Object, "spec", "parallelism"); ok && real.admitted && fmt.Sprint(real.counts["main"]) != fmt.Sprint(p) {
		outcome = "admitted partly"
	}
	if !slices.Equal(sorted(k.Preempts), sorted(real.preempts)) {
		diffs = append(diffs, fmt.Sprintf("preempts: kubectl-gang %v, Kueue %v", k.Preempts, real.preempts))
	}
	if real.neverTried {
		outcome = "behind a StrictFIFO head"
		if k.Admitted || !strings.HasPrefix(k.Message, "waiting behind Workload") {
			diffs = append(diffs, fmt.Sprintf("Kueue never tried it (behind its StrictFIFO queue's head); kubectl-gang says %q", k.Message))
		}
	} else if !real.admitted && k.Message != real.message {
		diffs = append(diffs, fmt.Sprintf("message:\n    kubectl-gang %q\n    Kueue        %q", k.Message, real.message))
	}
	if len(diffs) > 0 {
		return outcome, fmt.Errorf("%s", strings.Join(diffs, "; "))
	}
	return outcome, nil
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

func equalFlavors(a, b map[string]map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !maps.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// waitQueuesActive waits until every ClusterQueue of the scenario that
// should be active says so (Kueue's cache has them).
func (s *scenario) waitQueuesActive(t *testing.T, dyn dynamic.Interface) error {
	deadline := time.Now().Add(30 * time.Second)
	for _, name := range s.cqs {
		for {
			cq, err := dyn.Resource(kueueGVR("clusterqueues")).Get(t.Context(), name, metav1.GetOptions{})
			if err == nil {
				if c := condition(cq, "Active"); c != nil {
					break
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("ClusterQueue %s has no Active condition after 30s", name)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func condition(u *unstructured.Unstructured, typ string) *metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var conds []metav1.Condition
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &conds)
	return meta.FindStatusCondition(conds, typ)
}

// settle waits for Kueue's decision on a Job's Workload: quota reserved,
// or a QuotaReserved=False message that stays the same for two seconds
// and is not a pending preemption.
func (s *scenario) settle(t *testing.T, dyn dynamic.Interface, job *unstructured.Unstructured) (kueueOutcome, error) {
	ctx := t.Context()
	deadline := time.Now().Add(45 * time.Second)
	var last string
	var since, seen time.Time
	for {
		if time.Now().After(deadline) {
			return kueueOutcome{}, fmt.Errorf("Job %s: Kueue did not settle in 45s (last %q)", job.GetName(), last)
		}
		time.Sleep(150 * time.Millisecond)
		list, err := dyn.Resource(gvrWorkload).Namespace(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "kueue.x-k8s.io/job-uid=" + string(job.GetUID())})
		if err != nil || len(list.Items) == 0 {
			continue
		}
		w := &list.Items[0]
		c := condition(w, "QuotaReserved")
		if c == nil {
			// A Workload Kueue's scheduler never pops (behind the head of
			// a StrictFIFO queue) gets no condition at all.
			if seen.IsZero() {
				seen = time.Now()
			} else if time.Since(seen) > 4*time.Second {
				return kueueOutcome{neverTried: true}, nil
			}
			continue
		}
		if c.Status == metav1.ConditionTrue {
			o := kueueOutcome{admitted: true, flavors: map[string]map[string]string{}, counts: map[string]int32{}}
			psas, _, _ := unstructured.NestedSlice(w.Object, "status", "admission", "podSetAssignments")
			for _, p := range psas {
				pm := p.(map[string]any)
				fl := map[string]string{}
				for r, f := range pm["flavors"].(map[string]any) {
					fl[r] = f.(string)
				}
				o.flavors[pm["name"].(string)] = fl
				if c, ok := pm["count"].(int64); ok {
					o.counts[pm["name"].(string)] = int32(c)
				}
			}
			victims, err := s.victimsOf(t, dyn, string(w.GetUID()))
			if err != nil {
				return o, err
			}
			o.preempts = victims
			return o, nil
		}
		if c.Message != last {
			last, since = c.Message, time.Now()
			continue
		}
		if strings.Contains(last, "Pending the preemption") || time.Since(since) < 2*time.Second {
			continue
		}
		return kueueOutcome{message: last}, nil
	}
}

// victimsOf are the Workloads of the scenario Kueue preempted for the
// Workload of uid (their Preempted condition names it).
func (s *scenario) victimsOf(t *testing.T, dyn dynamic.Interface, uid string) ([]string, error) {
	list, err := dyn.Resource(gvrWorkload).Namespace(s.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for i := range list.Items {
		w := &list.Items[i]
		if c := condition(w, "Preempted"); c != nil && strings.Contains(c.Message, "(UID: "+uid+",") {
			out = append(out, w.GetNamespace()+"/"+w.GetName())
		}
	}
	return out, nil
}

func nsObj(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// logWorkloads records each Workload's conditions, for a failure's replay.
func (s *scenario) logWorkloads(t *testing.T, dyn dynamic.Interface, when string) {
	list, err := dyn.Resource(gvrWorkload).Namespace(s.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range list.Items {
		w := &list.Items[i]
		var conds []string
		for _, typ := range []string{"QuotaReserved", "Admitted", "Evicted", "Preempted"} {
			if c := condition(w, typ); c != nil {
				conds = append(conds, fmt.Sprintf("%s=%s(%s: %s)", typ, c.Status, c.Reason, c.Message))
			}
		}
		usage, _, _ := unstructured.NestedSlice(w.Object, "status", "admission", "podSetAssignments")
		s.log = append(s.log, fmt.Sprintf("%s: %s %v usage %v", when, w.GetName(), conds, usage))
	}
}
