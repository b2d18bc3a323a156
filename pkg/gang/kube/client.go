// Package kube is the client-go side of the verbs that write: the bind
// protocol (bind.Gang: access reviews, consistent reads, Bindings with
// retries, deletes with UID preconditions, events and the PodGroup
// condition) and admit --ungate (admit.Ungate: updates with resourceVersion
// preconditions). It is the only part of pkg/gang that imports client-go.
package kube

import (
	"context"
	"errors"
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
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/pager"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang/admit"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/bind"
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
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return NewForClients(cs, dyn), nil
}

// NewForClients returns a Client on existing clients.
func NewForClients(cs kubernetes.Interface, dyn dynamic.Interface) *Client {
	sink := &countingSink{inner: &events.EventSinkImpl{Interface: cs.EventsV1()}}
	sink.cond = sync.NewCond(&sink.mu)
	b := events.NewBroadcaster(sink)
	ctx, cancel := context.WithCancel(context.Background())
	_ = b.StartRecordingToSinkWithContext(ctx)
	return &Client{cs: cs, dyn: dyn, broadcaster: b, recorder: b.NewRecorder(scheme.Scheme, ReportingController), sink: sink, stop: cancel}
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
	return c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

// UpdatePod writes a pod with its resourceVersion as the precondition.
func (c *Client) UpdatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return c.cs.CoreV1().Pods(pod.Namespace).Update(ctx, pod, metav1.UpdateOptions{FieldManager: ReportingController})
}

// GetNode reads a node consistently.
func (c *Client) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	return c.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// PodsOnNode lists, consistently and page by page, the pods bound to node
// that have not terminated.
func (c *Client) PodsOnNode(ctx context.Context, node string) ([]*corev1.Pod, error) {
	selector := fields.AndSelectors(
		fields.OneTermEqualSelector("spec.nodeName", node),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
	).String()
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return c.cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
	})
	var out []*corev1.Pod
	err := p.EachListItem(ctx, metav1.ListOptions{FieldSelector: selector}, func(obj runtime.Object) error {
		out = append(out, obj.(*corev1.Pod))
		return nil
	})
	return out, err
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

// countingSink counts the events the recorder hands over and the answers
// they get, so Flush can wait for them: the broadcaster writes in the
// background and has no flush of its own.
type countingSink struct {
	inner events.EventSink

	mu       sync.Mutex
	cond     *sync.Cond
	expected int
	written  int
	rejected int
}

func (s *countingSink) expect() {
	s.mu.Lock()
	s.expected++
	s.mu.Unlock()
}

// settle counts an answer: a success, or a rejection the broadcaster will
// not retry (an API status). A network error is retried, so it settles
// nothing yet.
func (s *countingSink) settle(err error) {
	var status apierrors.APIStatus
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil:
		s.written++
	case errors.As(err, &status):
		s.rejected++
	default:
		return
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
	for s.written+s.rejected < s.expected && ctx.Err() == nil {
		s.cond.Wait()
	}
	return s.expected - s.written
}

func (s *countingSink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	out, err := s.inner.Create(ctx, e)
	s.settle(err)
	return out, err
}

func (s *countingSink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return s.inner.Update(ctx, e)
}

func (s *countingSink) Patch(ctx context.Context, old *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	return s.inner.Patch(ctx, old, data)
}
