// Package kube is the client-go side of the verbs that write: the bind
// protocol (bind.Gang: access reviews, consistent reads, Bindings with
// retries, deletes with UID preconditions, events and the PodGroup
// condition) and admit --ungate (admit.Ungate: updates with resourceVersion
// preconditions). It is the only part of pkg/gang that imports client-go.
package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/pager"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang/admit"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/bind"
	"github.com/kubectl-gang/kubectl-gang/pkg/kubelist"
)

// ReportingController names kubectl-gang in the events it records.
const ReportingController = "kubectl-gang"

// bindBackoff retries a Binding that met a transient failure: five tries
// over about three seconds. A retry of a Binding that had succeeded gets a
// 409, which the protocol settles by reading the pod.
var bindBackoff = wait.Backoff{Steps: 5, Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1}

// Client implements bind.Client and admit.UngateClient.
type Client struct {
	cs  kubernetes.Interface
	dyn dynamic.Interface
	md  metadata.Interface

	broadcaster events.EventBroadcaster
	recorder    events.EventRecorder
	sink        *countingSink
	stop        context.CancelFunc
}

var (
	_ bind.Client        = (*Client)(nil)
	_ admit.UngateClient = (*Client)(nil)
)

// New returns a Client for cfg. Close it (Flush does) to stop the event
// broadcaster.
func New(cfg *rest.Config) (*Client, error) {
	// Deprecation warnings for the PodGroup version would end up between
	// the report's lines; the snapshot reads keep them out too.
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = rest.NoWarnings{}
	// Built-in kinds travel as protobuf, which costs the server (and us)
	// far less than JSON for a thousand Bindings and events; PodGroups
	// (dynamic) stay JSON.
	proto := rest.CopyConfig(cfg)
	proto.ContentType = runtime.ContentTypeProtobuf
	proto.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cs, err := kubernetes.NewForConfig(proto)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return NewForClients(cs, dyn, md), nil
}

// NewForClients returns a Client on existing clients.
func NewForClients(cs kubernetes.Interface, dyn dynamic.Interface, md metadata.Interface) *Client {
	sink := newCountingSink(&events.EventSinkImpl{Interface: cs.EventsV1()})
	b := events.NewBroadcaster(sink)
	ctx, cancel := context.WithCancel(context.Background())
	_ = b.StartRecordingToSinkWithContext(ctx)
	return &Client{cs: cs, dyn: dyn, md: md, broadcaster: b, recorder: b.NewRecorder(scheme.Scheme, ReportingController), sink: sink, stop: cancel}
}

// Allowed runs a SelfSubjectAccessReview.
func (c *Client) Allowed(ctx context.Context, attr authorizationv1.ResourceAttributes) (bool, error) {
	r, err := c.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

// GetPod reads a pod; without a resourceVersion the read is consistent.
func (c *Client) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	pod, err := c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	return answered(pod, err, "pod "+namespace+"/"+name, name)
}

// UpdatePod writes a pod with its resourceVersion as the precondition.
func (c *Client) UpdatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	updated, err := c.cs.CoreV1().Pods(pod.Namespace).Update(ctx, pod, metav1.UpdateOptions{FieldManager: ReportingController})
	return answered(updated, err, "pod "+pod.Namespace+"/"+pod.Name, pod.Name)
}

// GetNode reads a node consistently.
func (c *Client) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	node, err := c.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	return answered(node, err, "node "+name, name)
}

// answered checks that the server's answer about what (named name) is that
// object: a typed client answered another kind (a misrouted or broken
// proxy) hands back the empty object it was given with no error
// (rest.Result.Into), and an empty pod would read as one nobody bound. Every
// object an API server returns has its name and UID.
func answered[T metav1.Object](obj T, err error, what, name string) (T, error) {
	if err != nil {
		return obj, err
	}
	if obj.GetName() != name || obj.GetUID() == "" {
		var none T
		return none, fmt.Errorf("the server's answer about %s is not that object (a proxy or a server that is not kube-apiserver answered)", what)
	}
	return obj, nil
}

// PodsOnNode lists, consistently and page by page, the pods bound to node
// that have not terminated.
func (c *Client) PodsOnNode(ctx context.Context, node string) ([]*corev1.Pod, error) {
	return c.listPods(ctx, metav1.NamespaceAll, fields.OneTermEqualSelector("spec.nodeName", node))
}

// ListPods lists, consistently and page by page, the pods in namespace
// (every namespace for "") that have not terminated.
func (c *Client) ListPods(ctx context.Context, namespace string) ([]*corev1.Pod, error) {
	return c.listPods(ctx, namespace, nil)
}

// nonTerminated selects, on the server, the pods that are neither
// Succeeded nor Failed.
var nonTerminated = fields.AndSelectors(
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
)

func (c *Client) listPods(ctx context.Context, namespace string, sel fields.Selector) ([]*corev1.Pod, error) {
	terminated := nonTerminated
	if sel != nil {
		terminated = fields.AndSelectors(sel, terminated)
	}
	return listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return c.cs.CoreV1().Pods(namespace).List(ctx, opts)
	}, metav1.ListOptions{FieldSelector: terminated.String()}, func(obj runtime.Object) *corev1.Pod { return obj.(*corev1.Pod) })
}

// listAll reads every item page reads, as T, page by page; a continue token
// that expires lists again in one request (kubelist.List), so no list mixes
// two resource versions.
func listAll[T any](ctx context.Context, page pager.ListPageFunc, opts metav1.ListOptions, as func(runtime.Object) T) ([]T, error) {
	items, err := kubelist.List(ctx, page, kubelist.DefaultPageSize, opts, nil)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(items))
	for i, obj := range items {
		out[i] = as(obj)
	}
	return out, nil
}

// PodVersions lists, consistently and page by page, the metadata of the
// pods in every namespace that have not terminated, and keeps their versions.
func (c *Client) PodVersions(ctx context.Context) ([]bind.Version, error) {
	return c.versions(ctx, corev1.SchemeGroupVersion.WithResource("pods"), nonTerminated.String())
}

// NodeVersions lists the metadata of every node and keeps their versions.
func (c *Client) NodeVersions(ctx context.Context) ([]bind.Version, error) {
	return c.versions(ctx, corev1.SchemeGroupVersion.WithResource("nodes"), "")
}

func (c *Client) versions(ctx context.Context, gvr schema.GroupVersionResource, fieldSelector string) ([]bind.Version, error) {
	return listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return c.md.Resource(gvr).List(ctx, opts)
	}, metav1.ListOptions{FieldSelector: fieldSelector}, func(obj runtime.Object) bind.Version {
		m := obj.(*metav1.PartialObjectMetadata)
		return bind.Version{Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion}
	})
}

// ListNodes lists every node, consistently and page by page.
func (c *Client) ListNodes(ctx context.Context) ([]*corev1.Node, error) {
	return listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return c.cs.CoreV1().Nodes().List(ctx, opts)
	}, metav1.ListOptions{}, func(obj runtime.Object) *corev1.Node { return obj.(*corev1.Node) })
}

// Bind creates the Binding, retrying transient failures.
func (c *Client) Bind(ctx context.Context, b *corev1.Binding, dryRun bool) error {
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return retry.OnError(bindBackoff, transient, func() error {
		return c.cs.CoreV1().Pods(b.Namespace).Bind(ctx, b, opts)
	})
}

// transient says whether a request may succeed if sent again.
func transient(err error) bool {
	if apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err) {
		return true
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == 502 || code == 503 || code == 504
	}
	var netErr net.Error
	return utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsConnectionRefused(err) || errors.As(err, &netErr)
}

// DeletePod deletes a pod if it still has uid.
func (c *Client) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	return c.cs.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
}

// Scheduled records kube-scheduler's event for a bound pod.
func (c *Client) Scheduled(pod *corev1.Pod, node string) {
	c.sink.expect()
	c.recorder.Eventf(pod, nil, corev1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %v/%v to %v", pod.Namespace, pod.Name, node)
}

// SetScheduled sets the PodGroupInitiallyScheduled condition of a native
// PodGroup to True, as kube-scheduler does once a gang is scheduled; a
// condition that is True already is left alone.
func (c *Client) SetScheduled(ctx context.Context, pg *unstructured.Unstructured, message string) error {
	gv, err := schema.ParseGroupVersion(pg.GetAPIVersion())
	if err != nil {
		return err
	}
	res := c.dyn.Resource(gv.WithResource("podgroups")).Namespace(pg.GetNamespace())
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := res.Get(ctx, pg.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		var status schedulingv1beta1.PodGroupStatus
		if raw, ok := current.Object["status"].(map[string]any); ok {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &status); err != nil {
				return err
			}
		}
		if meta.IsStatusConditionTrue(status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled) {
			return nil
		}
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: schedulingv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionTrue, Reason: "Scheduled",
			Message: message, ObservedGeneration: current.GetGeneration(),
		})
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&status)
		if err != nil {
			return err
		}
		current.Object["status"] = raw
		_, err = res.UpdateStatus(ctx, current, metav1.UpdateOptions{FieldManager: ReportingController})
		return err
	})
}

// Flush waits until every recorded event was written or given up, at most
// until ctx ends or ten seconds pass, stops the broadcaster, and returns how
// many events were not written.
func (c *Client) Flush(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lost := c.sink.wait(ctx)
	c.stop()
	c.broadcaster.Shutdown()
	return lost
}

// eventsInFlight bounds the events written at once: the broadcaster hands
// them over one by one, and writing them one after another would put a
// round trip per member at the end of a bind. They are written once the
// Bindings are done, so they may have as many in flight as the Bindings.
const eventsInFlight = bind.DefaultParallelism

// eventBackoff retries an event that met a transient failure.
var eventBackoff = wait.Backoff{Steps: 4, Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.1}

// countingSink writes the events the broadcaster hands over in the
// background, eventsInFlight at a time (retrying transient failures), and
// counts them and their answers, so Flush can wait for them: the
// broadcaster has no flush of its own.
type countingSink struct {
	inner events.EventSink
	slots chan struct{}

	mu       sync.Mutex
	cond     *sync.Cond
	expected int
	written  int
	lost     int
}

func newCountingSink(inner events.EventSink) *countingSink {
	s := &countingSink{inner: inner, slots: make(chan struct{}, eventsInFlight)}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *countingSink) expect() {
	s.mu.Lock()
	s.expected++
	s.mu.Unlock()
}

// settle counts a final answer: written, or given up.
func (s *countingSink) settle(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.written++
	} else {
		s.lost++
	}
	s.cond.Broadcast()
}

func (s *countingSink) wait(ctx context.Context) int {
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.written+s.lost < s.expected && ctx.Err() == nil {
		s.cond.Wait()
	}
	return s.expected - s.written
}

// Create writes the event in the background and answers at once; the
// answer that counts is the one settle gets.
func (s *countingSink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	ctx = context.WithoutCancel(ctx)
	s.slots <- struct{}{}
	go func() {
		defer func() { <-s.slots }()
		s.settle(retry.OnError(eventBackoff, transient, func() error {
			_, err := s.inner.Create(ctx, e)
			return err
		}))
	}()
	return e, nil
}

func (s *countingSink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return s.inner.Update(ctx, e)
}

func (s *countingSink) Patch(ctx context.Context, old *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	return s.inner.Patch(ctx, old, data)
}
