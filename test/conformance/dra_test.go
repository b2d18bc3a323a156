package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
	"github.com/kubectl-gang/kubectl-gang/test/conformance/scenario"
)

// DRA scenario counts: each costs a DRA barrier and, for claims from
// templates, a second scheduling attempt, so fewer than the random ones.
const (
	defaultDRAScenarios = 40
	shortDRAScenarios   = 10
)

// TestDRAScenarios runs seeded Dynamic Resource Allocation scenarios
// (scenario.GenerateDRA) against kube-scheduler and our pipeline: on top of
// what every scenario compares (feasible nodes, the FailedScheduling
// message, per-node scores, DynamicResources' included), when kube-scheduler
// binds the pod, the devices it wrote into each of the pod's claims must be
// the ones our Reserve allocates on the same node, and so must the claim it
// made for the pod's extended resources backed by a class (scenarios of
// scenario.ExtendedResourceProb), or neither must make one (on a node whose
// device plugin advertises them). Subtests are named d<seed>;
// CONFORMANCE_DRA_SCENARIOS, CONFORMANCE_DRA_SEED and
// CONFORMANCE_DRA_SEED_BASE work as their CONFORMANCE_ counterparts.
func TestDRAScenarios(t *testing.T) {
	seeds, err := seedsFromEnv("CONFORMANCE_DRA", defaultDRAScenarios, shortDRAScenarios)
	if err != nil {
		t.Fatal(err)
	}
	if err := servesDRA(env.Clientset().Discovery().ServerResourcesForGroupVersion); err != nil {
		t.Fatal(err)
	}
	h := sharedHarness(t)
	began := time.Now()
	var ran, agreed, harnessErrors, draAtWork int
	var extRan, extAgreed int
	for _, seed := range seeds {
		sc := scenario.GenerateDRA(seed)
		ok := t.Run(sc.Name, func(t *testing.T) {
			r, err := h.Run(t.Context(), sc)
			if err != nil {
				harnessErrors++
				t.Fatalf("seed %d: the harness failed (not a disagreement): %v\n%s", seed, err, draReplayHint(seed))
			}
			harnessErrors = 0
			ran++
			if kubeRanDynamicResources(r) {
				draAtWork++
			}
			t.Logf("seed %d (%s): kube-scheduler %s; ours %s%s", seed, sc.Summary(), r.kube, describe(r), describeClaims(r))
			if len(sc.ExtendedResources) > 0 {
				extRan++
			}
			if len(r.problems) == 0 {
				agreed++
				if len(sc.ExtendedResources) > 0 {
					extAgreed++
				}
				return
			}
			report(t, h, r, draReplayHint(seed))
		})
		if !ok && harnessErrors >= maxHarnessErrors {
			t.Fatalf("stopping after %d harness failures in a row", harnessErrors)
		}
	}
	if ran > 0 {
		t.Logf("DRA scenarios: %d/%d agree (%.1f%%) in %v; DynamicResources seen at work in kube-scheduler in %d",
			agreed, ran, 100*float64(agreed)/float64(ran), time.Since(began).Round(time.Millisecond), draAtWork)
		t.Logf("of them with extended resources backed by device classes: %d/%d agree", extAgreed, extRan)
	}
	// Every scenario's pod has claims: a kube-scheduler that never allocates
	// and never names a claim in a failure does not run DynamicResources,
	// and agreeing with it would prove nothing.
	if ran >= 5 && draAtWork == 0 {
		t.Errorf("kube-scheduler showed no sign of DynamicResources in %d scenarios (no allocation written, no claim in any message)", ran)
	}
	t.Log(h.Summary())
}

func draReplayHint(seed uint64) string {
	return fmt.Sprintf("replay: CONFORMANCE_DRA_SEED=%d go test ./test/conformance/ -run 'TestDRAScenarios' -v", seed)
}

// servesDRA checks that the API server serves resource.k8s.io/v1 with the
// four kinds the scenarios create (on by default since Kubernetes 1.34).
func servesDRA(resources func(string) (*metav1.APIResourceList, error)) error {
	list, err := resources(resourcev1.SchemeGroupVersion.String())
	if err != nil {
		return fmt.Errorf("the API server does not serve %s: %w", resourcev1.SchemeGroupVersion, err)
	}
	var have []string
	for _, r := range list.APIResources {
		have = append(have, r.Name)
	}
	for _, want := range []string{"deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates"} {
		if !slices.Contains(have, want) {
			return fmt.Errorf("the API server serves %s without %s (has %v)", resourcev1.SchemeGroupVersion, want, have)
		}
	}
	return nil
}

// kubeRanDynamicResources tells whether kube-scheduler's decision shows
// its DynamicResources plugin at work: an allocation written into a claim
// (the pod's own, or the one it made for the pod's extended resources), a
// message that names claims or classes or says an extended resource
// fits neither way, or a non-zero score.
func kubeRanDynamicResources(r *run) bool {
	for _, c := range r.kubeClaims {
		if c.Status.Allocation != nil {
			return true
		}
	}
	if r.kubeExtClaim != nil && r.kubeExtClaim.Status.Allocation != nil {
		return true
	}
	if strings.Contains(r.kube.Message, "claim") || strings.Contains(r.kube.Message, "device class") ||
		strings.Contains(r.kube.Message, dynamicresources.ReasonCannotFitResource) {
		return true
	}
	if s := r.kube.Scores; s != nil {
		for _, perPlugin := range s.Plugins {
			if perPlugin[dynamicresources.Name] != 0 {
				return true
			}
		}
	}
	return false
}

// describeClaims is the devices kube-scheduler allocated, in a few words.
func describeClaims(r *run) string {
	var parts []string
	for _, pc := range r.pending.Spec.ResourceClaims {
		if c := r.kubeClaims[pc.Name]; c != nil && c.Status.Allocation != nil {
			parts = append(parts, fmt.Sprintf("%s: %s", pc.Name, strings.Join(deviceResults(c.Status.Allocation), ", ")))
		}
	}
	if c := r.kubeExtClaim; c != nil && c.Status.Allocation != nil {
		parts = append(parts, fmt.Sprintf("extended resources (%s): %s", c.Name, strings.Join(deviceResults(c.Status.Allocation), ", ")))
	}
	out := ""
	if len(parts) > 0 {
		out = "; kube-scheduler allocated " + strings.Join(parts, "; ")
	}
	if r.extCompared && r.kubeExtClaim == nil {
		out += "; kube-scheduler made no claim for the extended resources (the node's device plugin provides them)"
	}
	return out
}

// claimProblem starts every problem compareClaims finds with the pod's own
// claims, extClaimProblem every one with the claim for its extended
// resources.
const (
	claimProblem    = "claim "
	extClaimProblem = "extended-resource claim: "
)

// compareClaims reserves the pending pod on the node kube-scheduler bound
// it to, in our working copy, and compares the allocation our Reserve
// makes for each of the pod's claims with the one kube-scheduler wrote,
// device by device (request, driver, pool, device, in the allocator's
// order), plus the allocation's node selector and the pod's reservation;
// then the claim kube-scheduler made for the pod's extended resources with
// ours (compareExtendedClaim).
func (r *run) compareClaims(sched *schedule.Scheduler) {
	r.claimsCompared = len(r.pending.Spec.ResourceClaims) > 0
	fail := func(format string, args ...any) {
		r.problems = append(r.problems, claimProblem+fmt.Sprintf(format, args...))
		r.blame(dynamicresources.Name)
	}
	pod := r.pending
	if err := sched.Reserve(pod, r.kube.Node); err != nil {
		fail("allocations not compared: our Reserve on %s, where kube-scheduler bound the pod, fails: %v", r.kube.Node, err)
		return
	}
	ours := sched.Claims(pod)
	defer r.compareExtendedClaim(sched, ours)
	r.ourClaims = map[string]*resourcev1.ResourceClaim{}
	for _, pc := range pod.Spec.ResourceClaims {
		for _, c := range ours {
			if pc.ResourceClaimName != nil && c.Name == *pc.ResourceClaimName ||
				pc.ResourceClaimTemplateName != nil && c.Annotations[dynamicresources.PodClaimAnnotation] == pc.Name && metav1.IsControlledBy(c, pod) {
				r.ourClaims[pc.Name] = c
			}
		}
	}
	for _, pc := range pod.Spec.ResourceClaims {
		kube, ours := r.kubeClaims[pc.Name], r.ourClaims[pc.Name]
		switch {
		case kube.Status.Allocation == nil:
			fail("%s (%s): kube-scheduler bound the pod to %s without allocating it", pc.Name, kube.Name, r.kube.Node)
			continue
		case ours == nil:
			fail("%s (%s): kube-scheduler allocated %v; our Reserve on %s has no such claim (ours: %v)", pc.Name, kube.Name,
				deviceResults(kube.Status.Allocation), r.kube.Node, names(sched.Claims(pod)))
			continue
		case ours.Status.Allocation == nil:
			fail("%s (%s): kube-scheduler allocated %v; our Reserve on %s did not", pc.Name, kube.Name, deviceResults(kube.Status.Allocation), r.kube.Node)
			continue
		}
		k, o := deviceResults(kube.Status.Allocation), deviceResults(ours.Status.Allocation)
		if !slices.Equal(k, o) {
			fail("%s (%s) on %s: devices differ:\n  kube-scheduler: %v\n  ours:           %v", pc.Name, kube.Name, r.kube.Node, k, o)
		}
		if kSel, oSel := kube.Status.Allocation.NodeSelector, ours.Status.Allocation.NodeSelector; !equality.Semantic.DeepEqual(kSel, oSel) {
			fail("%s (%s): node selectors differ:\n  kube-scheduler: %v\n  ours:           %v", pc.Name, kube.Name, kSel, oSel)
		}
		if !reservedForPod(kube, pod) {
			fail("%s (%s): kube-scheduler did not reserve it for the pod: %v", pc.Name, kube.Name, kube.Status.ReservedFor)
		}
		if !reservedForPod(ours, pod) {
			fail("%s (%s): our Reserve did not reserve it for the pod: %v", pc.Name, kube.Name, ours.Status.ReservedFor)
		}
	}
}

// compareExtendedClaim compares the claim kube-scheduler made for the
// pending pod's extended resources backed by DRA (kubeExtClaim) with the
// one our Reserve made on the same node (ours, by
// dynamicresources.ExtendedClaimName): both or neither must exist (neither
// where the node's device plugin advertises every such resource the pod
// requests), with the same requests (one per container and resource, named
// container-<i>-request-<j>), the same devices, node selector, owner,
// annotation and reservation.
func (r *run) compareExtendedClaim(sched *schedule.Scheduler, ours []*resourcev1.ResourceClaim) {
	pod := r.pending
	fail := func(format string, args ...any) {
		r.problems = append(r.problems, extClaimProblem+fmt.Sprintf(format, args...))
		r.blame(dynamicresources.Name)
	}
	for _, c := range ours {
		if c.Name == dynamicresources.ExtendedClaimName(pod) {
			r.ourExtClaim = c
		}
	}
	kube, our := r.kubeExtClaim, r.ourExtClaim
	if kube == nil && our == nil && sched.DRA().ExtendedRequests(pod) == nil {
		return // the pod requests no extended resource a class backs
	}
	r.extCompared = true
	plugin := r.devicePluginResources(sched)
	switch {
	case kube == nil && our == nil:
		return
	case kube == nil:
		fail("on %s (device plugin there: %v) kube-scheduler made no claim; our Reserve made %s with requests %s: %v",
			r.kube.Node, plugin, our.Name, requestsOf(our), allocationOf(our))
		return
	case our == nil:
		fail("on %s (device plugin there: %v) kube-scheduler made %s with requests %s: %v; our Reserve made none (ours: %v)",
			r.kube.Node, plugin, kube.Name, requestsOf(kube), allocationOf(kube), names(ours))
		return
	}
	if k, o := requestsOf(kube), requestsOf(our); k != o {
		fail("requests differ on %s:\n  kube-scheduler (%s): %s\n  ours (%s):           %s", r.kube.Node, kube.Name, k, our.Name, o)
	}
	switch {
	case kube.Status.Allocation == nil:
		fail("%s: kube-scheduler bound the pod to %s without allocating it", kube.Name, r.kube.Node)
		return
	case our.Status.Allocation == nil:
		fail("%s: kube-scheduler allocated %v; our Reserve on %s did not", kube.Name, deviceResults(kube.Status.Allocation), r.kube.Node)
		return
	}
	if k, o := deviceResults(kube.Status.Allocation), deviceResults(our.Status.Allocation); !slices.Equal(k, o) {
		fail("%s on %s: devices differ:\n  kube-scheduler: %v\n  ours:           %v", kube.Name, r.kube.Node, k, o)
	}
	if kSel, oSel := kube.Status.Allocation.NodeSelector, our.Status.Allocation.NodeSelector; !equality.Semantic.DeepEqual(kSel, oSel) {
		fail("%s: node selectors differ:\n  kube-scheduler: %v\n  ours:           %v", kube.Name, kSel, oSel)
	}
	for _, c := range []*resourcev1.ResourceClaim{kube, our} {
		who := "kube-scheduler's"
		if c == our {
			who = "our"
		}
		if !reservedForPod(c, pod) {
			fail("%s claim %s is not reserved for the pod: %v", who, c.Name, c.Status.ReservedFor)
		}
		if c.Annotations[resourcev1.ExtendedResourceClaimAnnotation] != "true" || !metav1.IsControlledBy(c, pod) {
			fail("%s claim %s lacks the annotation %s or the pod as controller: %v, %v", who, c.Name,
				resourcev1.ExtendedResourceClaimAnnotation, c.Annotations, c.OwnerReferences)
		}
		if c.GenerateName != pod.Name+"-extended-resources-" {
			fail("%s claim %s: generateName %q", who, c.Name, c.GenerateName)
		}
	}
}

// devicePluginResources lists the pod's extended resources a class backs
// that the bound node advertises (allocatable above 0), as "name=count":
// those NodeResourcesFit checks there, and no claim allocates.
func (r *run) devicePluginResources(sched *schedule.Scheduler) []string {
	var node *corev1.Node
	for _, n := range r.snap.Nodes {
		if n.Name == r.kube.Node {
			node = n
		}
	}
	if node == nil {
		return nil
	}
	var out []string
	for name := range sched.DRA().ExtendedRequests(r.pending) {
		if q, ok := node.Status.Allocatable[name]; ok && !q.IsZero() {
			out = append(out, fmt.Sprintf("%s=%s", name, q.String()))
		}
	}
	slices.Sort(out)
	return out
}

// requestsOf is a claim's requests in a few words: "name class xcount".
func requestsOf(c *resourcev1.ResourceClaim) string {
	var out []string
	for _, req := range c.Spec.Devices.Requests {
		if e := req.Exactly; e != nil {
			out = append(out, fmt.Sprintf("%s %s x%d (%s)", req.Name, e.DeviceClassName, e.Count, e.AllocationMode))
		} else {
			out = append(out, req.Name+" (not exactly)")
		}
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func allocationOf(c *resourcev1.ResourceClaim) []string {
	if c.Status.Allocation == nil {
		return []string{"not allocated"}
	}
	return deviceResults(c.Status.Allocation)
}

// deviceResults lists an allocation's devices as "request driver/pool/device".
func deviceResults(a *resourcev1.AllocationResult) []string {
	out := make([]string, 0, len(a.Devices.Results))
	for _, d := range a.Devices.Results {
		s := fmt.Sprintf("%s %s/%s/%s", d.Request, d.Driver, d.Pool, d.Device)
		if d.AdminAccess != nil && *d.AdminAccess {
			s += " (admin access)"
		}
		if d.ShareID != nil {
			s += " share " + string(*d.ShareID)
		}
		out = append(out, s)
	}
	return out
}

func reservedForPod(c *resourcev1.ResourceClaim, pod *corev1.Pod) bool {
	return slices.ContainsFunc(c.Status.ReservedFor, func(r resourcev1.ResourceClaimConsumerReference) bool {
		return r.Resource == "pods" && r.Name == pod.Name && r.UID == pod.UID
	})
}

// createDRA creates a scenario's resource.k8s.io objects once its running
// pods exist (created holds them, for the UIDs reservations name), then
// waits for kube-scheduler to have seen them all: see draBarrier.
func (h *harness) createDRA(ctx context.Context, sc *scenario.Scenario, created []*corev1.Pod) error {
	uids := map[string]types.UID{}
	for _, p := range created {
		if p != nil {
			uids[p.Namespace+"/"+p.Name] = p.UID
		}
	}
	api := h.cs.ResourceV1()
	if err := parallel(len(sc.DeviceClasses), apiWorkers, func(i int) error {
		_, err := api.DeviceClasses().Create(ctx, sc.DeviceClasses[i].DeepCopy(), metav1.CreateOptions{})
		return wrap(err, "create device class %s", sc.DeviceClasses[i].Name)
	}); err != nil {
		return err
	}
	if err := parallel(len(sc.ResourceSlices), apiWorkers, func(i int) error {
		_, err := api.ResourceSlices().Create(ctx, sc.ResourceSlices[i].DeepCopy(), metav1.CreateOptions{})
		return wrap(err, "create resource slice %s", sc.ResourceSlices[i].Name)
	}); err != nil {
		return err
	}
	if err := parallel(len(sc.ResourceClaimTemplates), apiWorkers, func(i int) error {
		t := sc.ResourceClaimTemplates[i]
		_, err := api.ResourceClaimTemplates(t.Namespace).Create(ctx, t.DeepCopy(), metav1.CreateOptions{})
		return wrap(err, "create resource claim template %s/%s", t.Namespace, t.Name)
	}); err != nil {
		return err
	}
	// A claim's status is written after it is created, as the scheduler
	// that allocated it would have.
	if err := parallel(len(sc.ResourceClaims), apiWorkers, func(i int) error {
		c := sc.ResourceClaims[i]
		got, err := api.ResourceClaims(c.Namespace).Create(ctx, c.DeepCopy(), metav1.CreateOptions{})
		if err != nil || c.Status.Allocation == nil {
			return wrap(err, "create resource claim %s/%s", c.Namespace, c.Name)
		}
		got.Status = *c.Status.DeepCopy()
		for j := range got.Status.ReservedFor {
			ref := &got.Status.ReservedFor[j]
			uid, ok := uids[c.Namespace+"/"+ref.Name]
			if !ok {
				return fmt.Errorf("resource claim %s/%s is reserved for pod %s, which the scenario does not run", c.Namespace, c.Name, ref.Name)
			}
			ref.UID = uid
		}
		_, err = api.ResourceClaims(c.Namespace).UpdateStatus(ctx, got, metav1.UpdateOptions{})
		return wrap(err, "allocate resource claim %s/%s", c.Namespace, c.Name)
	}); err != nil {
		return err
	}
	return h.draBarrier(ctx, sc)
}

func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}

// barrierDriver is the driver of the DRA barrier's device, which no
// scenario class selects.
const barrierDriver = "barrier.conformance.kubectl-gang.io"

// draBarrier waits until kube-scheduler has seen every resource.k8s.io
// object of the scenario. Its DeviceClass, ResourceSlice and ResourceClaim
// informers are not ordered with each other nor with pods, but each is
// ordered in itself: a class, a slice and a claim created after the
// scenario's, for a pod pinned to the last node, let kube-scheduler bind
// that pod only once it has seen all three, and with them everything
// written before. The pod, claim, slice and class are deleted again before
// the snapshot; the scheduler may see those deletions late, which changes
// nothing, as the barrier's device is of a driver no other class selects.
func (h *harness) draBarrier(ctx context.Context, sc *scenario.Scenario) error {
	api := h.cs.ResourceV1()
	ns, name := sc.Namespace(), sc.Name+"-dra-barrier"
	node := sc.Nodes[len(sc.Nodes)-1]
	labels := map[string]string{scenario.ScenarioLabel: sc.Name}
	class := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: fmt.Sprintf("device.driver == %q", barrierDriver),
		}}}},
	}
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: resourcev1.ResourceSliceSpec{
			Driver: barrierDriver, NodeName: &node.Name,
			Pool:    resourcev1.ResourcePool{Name: name, Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "barrier"}},
		},
	}
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name:    "barrier",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: name, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}}}},
	}
	if _, err := api.DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("DRA barrier: %w", err)
	}
	if _, err := api.ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("DRA barrier: %w", err)
	}
	if _, err := api.ResourceClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("DRA barrier: %w", err)
	}
	pod := barrierPod(ns, node, "dra-barrier")
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "barrier", ResourceClaimName: &name}}
	if _, _, err := h.decide(ctx, pod, true, nil); err != nil {
		return fmt.Errorf("DRA barrier on node %s: %w", node.Name, err)
	}
	zero := int64(0)
	if err := h.cs.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		return fmt.Errorf("DRA barrier: %w", err)
	}
	if err := h.deleteClaims(ctx, ns, name); err != nil {
		return fmt.Errorf("DRA barrier: %w", err)
	}
	if err := api.ResourceSlices().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("DRA barrier: %w", err)
	}
	if err := api.DeviceClasses().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("DRA barrier: %w", err)
	}
	return nil
}

// resetDRA deletes the previous scenario's resource.k8s.io objects: the
// claims and templates of its namespaces (the claims kube-scheduler made for
// the pending pod's extended resources included: they are in the pod's
// namespace, and no garbage collector deletes them with their pod), and
// every labelled slice and class (the classes backing extended resources
// included).
func (h *harness) resetDRA(ctx context.Context) error {
	api := h.cs.ResourceV1()
	if err := parallel(len(h.dirty), apiWorkers, func(i int) error {
		if err := h.deleteClaims(ctx, h.dirty[i], ""); err != nil {
			return err
		}
		return api.ResourceClaimTemplates(h.dirty[i]).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}); err != nil {
		return err
	}
	labelled := metav1.ListOptions{LabelSelector: scenario.ScenarioLabel}
	if err := api.ResourceSlices().DeleteCollection(ctx, metav1.DeleteOptions{}, labelled); err != nil {
		return err
	}
	return api.DeviceClasses().DeleteCollection(ctx, metav1.DeleteOptions{}, labelled)
}

// claimDeleteTimeout bounds deleteClaims.
const claimDeleteTimeout = 10 * time.Second

// deleteClaims deletes the claims of namespace (only the one named, unless
// name is empty) and waits until they are gone. Kube-scheduler puts a
// finalizer on the claims it allocates, which only the resourceclaim
// controller (not running) would take off: the harness takes it off, again
// should the scheduler allocate a claim once more (it retries a pod whose
// claim it deallocated) while the claim goes.
func (h *harness) deleteClaims(ctx context.Context, namespace, name string) error {
	claims := h.cs.ResourceV1().ResourceClaims(namespace)
	opts := metav1.ListOptions{}
	if name != "" {
		opts.FieldSelector = "metadata.name=" + name
	}
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	deadline := time.Now().Add(claimDeleteTimeout)
	for {
		list, err := claims.List(ctx, opts)
		if err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("resource claims in %s not gone after %v: %v", namespace, claimDeleteTimeout, names(ptrs(list.Items)))
		}
		for i := range list.Items {
			c := &list.Items[i]
			if len(c.Finalizers) > 0 {
				if _, err := claims.Patch(ctx, c.Name, types.MergePatchType, unfinalize, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
			}
			if c.DeletionTimestamp == nil {
				if err := claims.Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// makeTemplateClaims does for pod what the resourceclaim controller does
// (kube-controller-manager does not run): for each pod claim made from a
// template, it creates the claim (generated name from the pod and claim
// names, the template's metadata and spec, the pod as controlling owner,
// the pod-claim-name annotation) and records it in the pod's
// status.resourceClaimStatuses, which lets kube-scheduler's PreEnqueue pass.
// It returns the claims' names by pod claim name.
func (h *harness) makeTemplateClaims(ctx context.Context, pod *corev1.Pod) (map[string]string, error) {
	out := map[string]string{}
	var statuses []*corev1apply.PodResourceClaimStatusApplyConfiguration
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName == nil {
			continue
		}
		t, err := h.cs.ResourceV1().ResourceClaimTemplates(pod.Namespace).Get(ctx, *pc.ResourceClaimTemplateName, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("claim %s of pod %s/%s: %w", pc.Name, pod.Namespace, pod.Name, err)
		}
		annotations := map[string]string{resourcev1.PodResourceClaimAnnotation: pc.Name}
		for k, v := range t.Spec.Annotations {
			annotations[k] = v
		}
		// The pod and claim names of the scenarios are short: the
		// controller's truncation to 57 characters never applies.
		claim := &resourcev1.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{
				GenerateName: pod.Name + "-" + pc.Name + "-",
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr(true),
				}},
				Annotations: annotations,
				Labels:      t.Spec.Labels,
			},
			Spec: t.Spec.Spec,
		}
		created, err := h.cs.ResourceV1().ResourceClaims(pod.Namespace).Create(ctx, claim, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("create claim %s of pod %s/%s: %w", pc.Name, pod.Namespace, pod.Name, err)
		}
		out[pc.Name] = created.Name
		statuses = append(statuses, corev1apply.PodResourceClaimStatus().WithName(pc.Name).WithResourceClaimName(created.Name))
	}
	if len(statuses) == 0 {
		return nil, nil
	}
	apply := corev1apply.Pod(pod.Name, pod.Namespace).WithStatus(corev1apply.PodStatus().WithResourceClaimStatuses(statuses...))
	if _, err := h.cs.CoreV1().Pods(pod.Namespace).ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: "resource-claim-controller", Force: true}); err != nil {
		return nil, fmt.Errorf("record the claims of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return out, nil
}

// extendedClaim reads back the claim kube-scheduler made for the pending
// pod's extended resources backed by DRA once it bound the pod (it creates
// it in PreBind, before binding): the claim of the pod's namespace with the
// annotation resource.kubernetes.io/extended-resource-claim "true" and the
// pod as controller, as its findExtendedResourceClaim finds it. Nil when
// there is none.
func (h *harness) extendedClaim(ctx context.Context, r *run) (*resourcev1.ResourceClaim, error) {
	list, err := h.cs.ResourceV1().ResourceClaims(r.pending.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the claims of %s: %w", r.pending.Namespace, err)
	}
	var found []*resourcev1.ResourceClaim
	for i := range list.Items {
		if c := &list.Items[i]; isExtendedClaimOf(c, r.pending) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("kube-scheduler made %d claims for the extended resources of pod %s/%s: %v", len(found), r.pending.Namespace, r.pending.Name, names(found))
}

// isExtendedClaimOf tells whether c is a claim kube-scheduler made for the
// extended resources of pod.
func isExtendedClaimOf(c *resourcev1.ResourceClaim, pod *corev1.Pod) bool {
	return c.Annotations[resourcev1.ExtendedResourceClaimAnnotation] == "true" && metav1.IsControlledBy(c, pod)
}

// boundClaims reads the pending pod's claims back once kube-scheduler has
// bound it (it writes their allocation in PreBind, before binding), by pod
// claim name.
func (h *harness) boundClaims(ctx context.Context, r *run) (map[string]*resourcev1.ResourceClaim, error) {
	out := map[string]*resourcev1.ResourceClaim{}
	for _, pc := range r.pending.Spec.ResourceClaims {
		name := r.templateClaims[pc.Name]
		if pc.ResourceClaimName != nil {
			name = *pc.ResourceClaimName
		}
		if name == "" {
			return nil, fmt.Errorf("pod claim %s: no claim was made for it", pc.Name)
		}
		c, err := h.cs.ResourceV1().ResourceClaims(r.pending.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("read back claim %s: %w", name, err)
		}
		out[pc.Name] = c
	}
	return out, nil
}

// draSnapshotProblems lists how the snapshot's resource.k8s.io objects
// differ from the scenario's (names only): the barrier's and the previous
// scenario's must be gone, and the pending pod's claims from templates and
// the claim kube-scheduler makes for its extended resources do not exist
// yet (one from an earlier scenario, which resetDRA failed to delete, is
// named as such). A class backing an extended resource must back the one
// the scenario says.
func draSnapshotProblems(snap *schedule.Snapshot, sc *scenario.Scenario) []string {
	var problems []string
	var extended []*resourcev1.ResourceClaim
	for _, c := range snap.ResourceClaims {
		if c.Annotations[resourcev1.ExtendedResourceClaimAnnotation] == "true" {
			extended = append(extended, c)
		}
	}
	if len(extended) > 0 {
		problems = append(problems, fmt.Sprintf("claims kube-scheduler made for extended resources in an earlier scenario are left: %v", names(extended)))
	}
	for _, c := range snap.DeviceClasses {
		if n := c.Spec.ExtendedResourceName; n != nil && *n != string(scenario.ExtendedResourceName(sc.Name)) {
			problems = append(problems, fmt.Sprintf("device class %s backs %s, not this scenario's %s", c.Name, *n, scenario.ExtendedResourceName(sc.Name)))
		}
	}
	check := func(kind string, got, want []string) {
		if !slices.Equal(got, want) {
			problems = append(problems, fmt.Sprintf("%s %v, want %v", kind, got, want))
		}
	}
	check("device classes", names(snap.DeviceClasses), names(sc.DeviceClasses))
	check("resource slices", names(snap.ResourceSlices), names(sc.ResourceSlices))
	check("resource claims", names(snap.ResourceClaims), names(sc.ResourceClaims))
	check("resource claim templates", names(snap.ResourceClaimTemplates), names(sc.ResourceClaimTemplates))
	return problems
}

// draCases are hand-written DRA scenarios, each for one behaviour of
// kube-scheduler's DynamicResources plugin that random scenarios only meet
// now and then.
var draCases = []reasonCase{
	{
		// The pod shares a claim allocated on a, where it does not fit; on b
		// the claim is not available. Nobody holds a reservation on the
		// claim, so kube-scheduler's PostFilter deallocates it (so that the
		// next attempt may allocate it elsewhere) and says so in the message.
		name: "dra-deallocate-unreserved-claim", plugin: "DynamicResources", want: "deallocation of ResourceClaim completed",
		build: func(b *caseBuilder) { sharedClaimCase(b, false) },
	},
	{
		// The same, but the claim is reserved for a pod running on a: it is
		// not deallocated.
		name: "dra-keep-reserved-claim", plugin: "DynamicResources", want: "1 resourceclaim not available on the node",
		build: func(b *caseBuilder) { sharedClaimCase(b, true) },
	},
	{
		// An earlier PreFilter plugin (VolumeBinding: the claimed
		// PersistentVolumeClaim does not exist) rejects the pod for every
		// node, so DynamicResources' PreFilter does not run; its PostFilter
		// then finds no state of its own and fails, which ends the PostFilter
		// phase before preemption: kube-scheduler's message ends in "not
		// found" instead of the preemption part.
		name: "prefilter-rejects-before-dra", plugin: "DynamicResources", want: `persistentvolumeclaim "missing" not found`,
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-b")
			b.pending("web").Obj().Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "missing"},
			}}}
		},
	},
	{
		// Extended resources backed by DRA: a's device plugin advertises
		// the resource but has too little left for the pod (an init
		// container needs 3, the main container 2); b advertises 0 of it
		// and c nothing, which leaves it to DynamicResources there: b has
		// too few GPUs for the 3 devices the pod's claim asks (the init
		// container's 1 beyond the main container's 2), c enough. Only c
		// fits, and kube-scheduler makes the pod a claim for its devices.
		name: "dra-extended-resource-dra-node", plugin: "DynamicResources",
		build: func(b *caseBuilder) {
			x := scenario.ExtendedResourceName(b.sc.Name)
			extendedClass(b)
			b.node("a", "zone-a").Capacity(testutil.Res{x: "4"})
			b.node("b", "zone-a").Capacity(testutil.Res{x: "0"})
			b.node("c", "zone-b")
			b.running("a", "ml").Req(testutil.Res{"cpu": "500m", x: "3"})
			b.sc.ResourceSlices = []*resourcev1.ResourceSlice{gpuSlice(b, "b", 2), gpuSlice(b, "c", 4)}
			b.pending("ml").InitReq(testutil.Res{x: "3"}).Req(testutil.Res{"cpu": "1", x: "2"})
			b.sc.ExtendedResources = []corev1.ResourceName{x}
		},
	},
	{
		// a's device plugin advertises one of the two the pod asks for
		// (NodeResourcesFit: Insufficient), b has one GPU for them
		// (DynamicResources: cannot allocate all claims).
		name: "dra-extended-resource-device-plugin-too-small", plugin: "NodeResourcesFit",
		want: "1 Insufficient t-dra-extended-resource-device-plugin-too-small.example.com/gpu",
		build: func(b *caseBuilder) {
			x := scenario.ExtendedResourceName(b.sc.Name)
			extendedClass(b)
			b.node("a", "zone-a").Capacity(testutil.Res{x: "1"})
			b.node("b", "zone-b")
			b.sc.ResourceSlices = []*resourcev1.ResourceSlice{gpuSlice(b, "b", 1)}
			b.pending("ml").Req(testutil.Res{"cpu": "1", x: "2"})
			b.sc.ExtendedResources = []corev1.ResourceName{x}
		},
	},
	{
		// An extended resource no class backs (the class backs another
		// one): NodeResourcesFit checks it on every node, as before
		// DRAExtendedResource, and DynamicResources has nothing to do.
		name: "dra-extended-resource-not-backed", plugin: "NodeResourcesFit",
		want: "2 Insufficient t-dra-extended-resource-not-backed.example.com/tpu",
		build: func(b *caseBuilder) {
			tpu := corev1.ResourceName(b.sc.Name + ".example.com/tpu")
			extendedClass(b)
			b.node("a", "zone-a")
			b.node("b", "zone-b").Capacity(testutil.Res{tpu: "0"})
			b.sc.ResourceSlices = []*resourcev1.ResourceSlice{gpuSlice(b, "a", 2), gpuSlice(b, "b", 2)}
			b.pending("ml").Req(testutil.Res{"cpu": "1", tpu: "1"})
		},
	},
}

// extendedClass gives a case one DeviceClass of all GPUs that backs
// scenario.ExtendedResourceName.
func extendedClass(b *caseBuilder) {
	class := testutil.MakeDeviceClass(b.sc.Name+"-gpu", scenario.GPUDriver)
	class.Labels = map[string]string{scenario.ScenarioLabel: b.sc.Name}
	class.Spec.ExtendedResourceName = ptr(string(scenario.ExtendedResourceName(b.sc.Name)))
	b.sc.DeviceClasses = append(b.sc.DeviceClasses, class)
}

// gpuSlice is the slice of n GPUs of the node named by suffix, labelled
// with the case.
func gpuSlice(b *caseBuilder, node string, n int) *resourcev1.ResourceSlice {
	s := testutil.MakeNodeSlice(b.nodeName(node), scenario.GPUDriver, testutil.Devices("gpu", n, nil)...)
	s.Labels = map[string]string{scenario.ScenarioLabel: b.sc.Name}
	return s
}

// TestDRACases runs draCases, each compared with kube-scheduler as the
// random scenarios are.
func TestDRACases(t *testing.T) { runCases(t, "TestDRACases", draCases) }

// sharedClaimCase is two nodes, two GPUs on a, one of them held by a claim
// (reserved for a pod running on a, or for nobody) that the pending pod
// shares, and a pending pod that needs more cpu than a has left.
func sharedClaimCase(b *caseBuilder, reserved bool) {
	b.node("a", "zone-a")
	b.node("b", "zone-b")
	labels := map[string]string{scenario.ScenarioLabel: b.sc.Name}
	class := testutil.MakeDeviceClass(b.sc.Name+"-gpu", scenario.GPUDriver)
	class.Labels = labels
	slice := testutil.MakeNodeSlice(b.nodeName("a"), scenario.GPUDriver, testutil.Devices("gpu", 2, nil)...)
	slice.Labels = labels
	claim := testutil.MakeClaim(b.sc.Name, b.sc.Name+"-shared", testutil.ExactRequest("gpu", class.Name, 1))
	claim.UID = ""
	claim.Status.Allocation = &resourcev1.AllocationResult{
		Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{
			Request: "gpu", Driver: scenario.GPUDriver, Pool: b.nodeName("a"), Device: "gpu0",
		}}},
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{b.nodeName("a")},
		}}}}},
		AllocationTimestamp: &metav1.Time{Time: time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)},
	}
	running := b.running("a", "db").Req(testutil.Res{"cpu": "2"}).Claim("gpus", claim.Name).Obj()
	if reserved {
		claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: running.Name}}
	}
	b.sc.DeviceClasses = []*resourcev1.DeviceClass{class}
	b.sc.ResourceSlices = []*resourcev1.ResourceSlice{slice}
	b.sc.ResourceClaims = []*resourcev1.ResourceClaim{claim}
	b.pending("ml").Req(testutil.Res{"cpu": "3"}).Claim("gpus", claim.Name)
}
