package bind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// bindFault is what goes wrong with one member's (real, not dry-run)
// Binding. Client.Bind retries transient failures itself, so each fault is
// what bind sees once those retries are over.
type bindFault int

const (
	// bindFails: a 5xx the retries did not get past; nothing is written.
	bindFails bindFault = iota + 1
	// replyLost: the server binds the pod and the connection breaks before
	// the answer arrives.
	replyLost
	// requestLost: the connection breaks before the server sees the
	// Binding; nothing is written.
	requestLost
	// conflictAfterRetry: the server bound the pod, the answer was lost, and
	// the Client's retry met a 409 (the pod is assigned already).
	conflictAfterRetry
	// answersButUnbound: the server answers success and writes nothing.
	answersButUnbound
)

// errLost is the error of a broken connection, as bind sees it.
var errLost = fmt.Errorf("post binding: %w", io.ErrUnexpectedEOF)

// fakeClient is an in-memory API server for the bind protocol: pods and
// nodes keyed by namespace/name with UIDs and resource versions, Bindings
// checked as pods/binding checks them (UID precondition, a pod assigned
// once), faults to inject, and a record of everything written. Its hooks
// run with mu held and change the store through the unlocked helpers
// (addPod, updatePod, ...).
type fakeClient struct {
	mu    sync.Mutex
	pods  map[string]*corev1.Pod
	nodes map[string]*corev1.Node
	rv    int

	// denied are the permissions refused: "verb resource/subresource"
	// ("create pods/binding", "delete pods/").
	denied map[string]bool
	// fail makes a method (by name: "Allowed", "ListPods", "GetNode", ...)
	// answer this error.
	fail map[string]error
	// getPodFault, if set, may fail a GetPod of key; it sees the store, so
	// it can tell the re-read from the read-back (written > 0).
	getPodFault func(f *fakeClient, key string) error
	// refuse are the server's dry-run refusals, by pod key.
	refuse map[string]error
	// faults are the real Bindings' faults, by pod key.
	faults map[string]bindFault
	// beforeBind, if set, runs before each real Binding is handled: another
	// client acting, or the user interrupting, mid-commit.
	beforeBind func(f *fakeClient, key string)
	// lostEvents is what Flush reports.
	lostEvents int

	// What the run did.
	asked      []string // access reviews: "verb resource in namespace"
	dryRuns    []string // pod keys
	sent       []string // real Bindings sent: "ns/name node"
	written    int      // real Bindings the store took
	bindings   []string // real Bindings the store took: "ns/name node"
	deletes    []string // "ns/name uid"
	events     []string // "ns/name node"
	conditions []string // "ns/name: message"
	calls      map[string]int
}

// newFakeClient holds copies of the snapshot's nodes and pods: the cluster
// as it was when the snapshot was taken.
func newFakeClient(snap *schedule.Snapshot) *fakeClient {
	f := &fakeClient{pods: map[string]*corev1.Pod{}, nodes: map[string]*corev1.Node{}, rv: 100,
		denied: map[string]bool{}, fail: map[string]error{}, refuse: map[string]error{},
		faults: map[string]bindFault{}, calls: map[string]int{}}
	for _, n := range snap.Nodes {
		f.nodes[n.Name] = n.DeepCopy()
	}
	for _, pod := range snap.Pods {
		f.pods[podKey(pod)] = pod.DeepCopy()
	}
	return f
}

// The unlocked helpers: for a test before the run, or a hook.

func (f *fakeClient) nextVersion() string {
	f.rv++
	return strconv.Itoa(f.rv)
}

// addPod stores a new pod.
func (f *fakeClient) addPod(pod *corev1.Pod) {
	pod = pod.DeepCopy()
	if pod.UID == "" {
		pod.UID = types.UID("uid-" + pod.Name)
	}
	pod.ResourceVersion = f.nextVersion()
	f.pods[podKey(pod)] = pod
}

// updatePod changes a stored pod, giving it a new resource version.
func (f *fakeClient) updatePod(key string, change func(*corev1.Pod)) {
	pod := f.pods[key].DeepCopy()
	change(pod)
	pod.ResourceVersion = f.nextVersion()
	f.pods[key] = pod
}

// recreatePod deletes a pod and creates it again, pending, under a new UID.
func (f *fakeClient) recreatePod(key string) {
	pod := f.pods[key].DeepCopy()
	pod.UID = types.UID("uid-" + pod.Name + "-again")
	pod.Spec.NodeName = ""
	f.addPod(pod)
}

// updateNode changes a stored node, giving it a new resource version.
func (f *fakeClient) updateNode(name string, change func(*corev1.Node)) {
	n := f.nodes[name].DeepCopy()
	change(n)
	n.ResourceVersion = f.nextVersion()
	f.nodes[name] = n
}

func (f *fakeClient) call(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[method]++
	return f.fail[method]
}

func terminated(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// Allowed answers from denied.
func (f *fakeClient) Allowed(_ context.Context, attr authorizationv1.ResourceAttributes) (bool, error) {
	if err := f.call("Allowed"); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	asked := describeAttr(attr)
	if attr.Name != "" {
		asked += " named " + attr.Name
	}
	f.asked = append(f.asked, asked)
	return !f.denied[attr.Verb+" "+attr.Resource+"/"+attr.Subresource], nil
}

// GetPod reads a pod.
func (f *fakeClient) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	if err := f.call("GetPod"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := namespace + "/" + name
	if f.getPodFault != nil {
		if err := f.getPodFault(f, key); err != nil {
			return nil, err
		}
	}
	pod, ok := f.pods[key]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), name)
	}
	return pod.DeepCopy(), nil
}

// GetNode reads a node.
func (f *fakeClient) GetNode(_ context.Context, name string) (*corev1.Node, error) {
	if err := f.call("GetNode"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	return n.DeepCopy(), nil
}

// PodsOnNode lists the pods on node that have not terminated.
func (f *fakeClient) PodsOnNode(_ context.Context, node string) ([]*corev1.Pod, error) {
	if err := f.call("PodsOnNode"); err != nil {
		return nil, err
	}
	return f.listPods(func(pod *corev1.Pod) bool { return pod.Spec.NodeName == node }), nil
}

// ListPods lists the pods of namespace ("" for all) that have not terminated.
func (f *fakeClient) ListPods(_ context.Context, namespace string) ([]*corev1.Pod, error) {
	if err := f.call("ListPods"); err != nil {
		return nil, err
	}
	return f.listPods(func(pod *corev1.Pod) bool { return namespace == "" || pod.Namespace == namespace }), nil
}

func (f *fakeClient) listPods(keep func(*corev1.Pod) bool) []*corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*corev1.Pod
	for _, key := range slices.Sorted(maps.Keys(f.pods)) {
		if pod := f.pods[key]; !terminated(pod) && keep(pod) {
			out = append(out, pod.DeepCopy())
		}
	}
	return out
}

// ListNodes lists every node.
func (f *fakeClient) ListNodes(context.Context) ([]*corev1.Node, error) {
	if err := f.call("ListNodes"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*corev1.Node
	for _, name := range slices.Sorted(maps.Keys(f.nodes)) {
		out = append(out, f.nodes[name].DeepCopy())
	}
	return out, nil
}

// PodVersions lists the versions of the pods that have not terminated.
func (f *fakeClient) PodVersions(ctx context.Context) ([]Version, error) {
	if err := f.call("PodVersions"); err != nil {
		return nil, err
	}
	var out []Version
	for _, pod := range f.listPods(func(*corev1.Pod) bool { return true }) {
		out = append(out, Version{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, ResourceVersion: pod.ResourceVersion})
	}
	return out, nil
}

// NodeVersions lists the versions of every node.
func (f *fakeClient) NodeVersions(ctx context.Context) ([]Version, error) {
	if err := f.call("NodeVersions"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Version
	for _, n := range f.nodes {
		out = append(out, Version{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion})
	}
	return out, nil
}

// Bind checks the Binding as pods/binding does and, unless dryRun or a
// fault says otherwise, assigns the pod.
func (f *fakeClient) Bind(_ context.Context, b *corev1.Binding, dryRun bool) error {
	if err := f.call("Bind"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := b.Namespace + "/" + b.Name
	if dryRun {
		f.dryRuns = append(f.dryRuns, key)
		if err := f.refuse[key]; err != nil {
			return err
		}
		return f.bindable(b)
	}
	f.sent = append(f.sent, key+" "+b.Target.Name)
	if f.beforeBind != nil {
		f.beforeBind(f, key)
	}
	switch f.faults[key] {
	case bindFails:
		return apierrors.NewInternalError(errors.New("injected"))
	case requestLost:
		return errLost
	case answersButUnbound:
		return nil
	}
	if err := f.bindable(b); err != nil {
		return err
	}
	f.assign(key, b.Target.Name)
	switch f.faults[key] {
	case replyLost:
		return errLost
	case conflictAfterRetry:
		return f.bindable(b)
	}
	return nil
}

// bindable is pods/binding's check: the pod exists with the Binding's UID
// and is not assigned yet.
func (f *fakeClient) bindable(b *corev1.Binding) error {
	pod, ok := f.pods[b.Namespace+"/"+b.Name]
	switch {
	case !ok:
		return apierrors.NewNotFound(corev1.Resource("pods"), b.Name)
	case b.UID != "" && b.UID != pod.UID:
		return apierrors.NewConflict(corev1.Resource("pods/binding"), b.Name,
			fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", b.UID, pod.UID))
	case pod.Spec.NodeName != "":
		return apierrors.NewConflict(corev1.Resource("pods/binding"), b.Name,
			fmt.Errorf("pod %s is already assigned to node %q", b.Name, pod.Spec.NodeName))
	}
	return nil
}

// assign binds a stored pod, as a Binding another client sent would.
func (f *fakeClient) assign(key, node string) {
	f.updatePod(key, func(pod *corev1.Pod) { pod.Spec.NodeName = node })
	f.written++
	f.bindings = append(f.bindings, key+" "+node)
}

// DeletePod deletes a pod if it still has uid.
func (f *fakeClient) DeletePod(_ context.Context, namespace, name string, uid types.UID) error {
	if err := f.call("DeletePod"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := namespace + "/" + name
	pod, ok := f.pods[key]
	switch {
	case !ok:
		return apierrors.NewNotFound(corev1.Resource("pods"), name)
	case pod.UID != uid:
		return apierrors.NewConflict(corev1.Resource("pods"), name, errors.New("precondition failed: UID"))
	}
	delete(f.pods, key)
	f.deletes = append(f.deletes, key+" "+string(uid))
	return nil
}

// Scheduled records the event.
func (f *fakeClient) Scheduled(pod *corev1.Pod, node string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, podKey(pod)+" "+node)
}

// SetScheduled records the condition.
func (f *fakeClient) SetScheduled(_ context.Context, pg *unstructured.Unstructured, message string) error {
	if err := f.call("SetScheduled"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conditions = append(f.conditions, pg.GetNamespace()+"/"+pg.GetName()+": "+message)
	return nil
}

// Flush reports lostEvents.
func (f *fakeClient) Flush(context.Context) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["Flush"]++
	return f.lostEvents
}

// writes is what a run wrote, in a stable order.
type writes struct {
	Bindings   []string
	Deletes    []string
	Events     []string
	Conditions []string
}

func (f *fakeClient) writes() writes {
	f.mu.Lock()
	defer f.mu.Unlock()
	return writes{Bindings: slices.Sorted(slices.Values(f.bindings)), Deletes: slices.Sorted(slices.Values(f.deletes)),
		Events: slices.Sorted(slices.Values(f.events)), Conditions: slices.Clone(f.conditions)}
}

var _ Client = &fakeClient{}
