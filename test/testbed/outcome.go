package testbed

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Settle waits until the scheduler is done with the named pods of ns: each
// is bound or has PodScheduled=False, and that has held for longer than
// stable (a gang scheduler's cycle that failed leaves its members waiting
// for an event or a Permit timeout; one that succeeds binds within it), or
// every pod is bound. It returns how many are bound and the PodScheduled
// messages of the others, "name: message".
func (e *Env) Settle(ctx context.Context, ns string, names []string, stable, timeout time.Duration) (int, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last, stableSince := -1, time.Time{}
	for {
		bound, settled := 0, 0
		var messages []string
		for _, name := range names {
			pod, err := e.clientset.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return 0, nil, fmt.Errorf("get %s/%s: %w", ns, name, err)
			}
			if pod.Spec.NodeName != "" {
				bound++
				settled++
				continue
			}
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
					settled++
					messages = append(messages, name+": "+c.Message)
				}
			}
		}
		switch {
		case settled != len(names) || bound != last:
			last, stableSince = bound, time.Now()
		case bound == len(names) || time.Since(stableSince) > stable:
			return bound, messages, nil
		}
		select {
		case <-ctx.Done():
			return bound, messages, fmt.Errorf("pods of %s not settled: %d bound, %d settled of %d", ns, bound, settled, len(names))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DeleteScenario deletes the pods of ns, the nodes and ns, and waits up to
// 30 s for the pods and nodes to be gone (no kubelet or node controller
// runs here to do it).
func (e *Env) DeleteScenario(ctx context.Context, ns string, nodes []string) error {
	cs := e.clientset
	zero := int64(0)
	_ = cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	for _, n := range nodes {
		_ = cs.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
	}
	_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		left := err != nil || len(pods.Items) > 0
		for _, n := range nodes {
			if _, err := cs.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = true
			}
		}
		if !left {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("scenario %s not cleaned up in 30s", ns)
}
