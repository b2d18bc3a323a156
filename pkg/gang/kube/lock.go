package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// The bind lock's defaults (docs/design.md#binding-a-gang): one Lease for
// the whole cluster, since gangs of every namespace share the nodes.
const (
	DefaultLockNamespace = "kube-system"
	DefaultLockName      = "kubectl-gang-bind"
)

// The bind lock's timing, as leader election counts it. A holder renews
// every lockRetry; one that died is taken over lockDuration after a waiter
// last saw it renew; a waiter tries every lockRetry (plus jitter), so it
// starts about a second after the holder releases.
const (
	lockDuration = 15 * time.Second
	lockRenew    = 10 * time.Second
	lockRetry    = 500 * time.Millisecond
)

// LockOptions say which Lease serializes the verbs that write placements,
// and how long to wait for it.
type LockOptions struct {
	Namespace, Name string
	// Timeout bounds the wait for a lock another run holds.
	Timeout time.Duration
	// Holding says what the run does, for whoever waits: "bind ml/train".
	Holding string
	// Waiting, if set, is told each holder the run waits for.
	Waiting func(holder string)
}

// LockTimeoutError is a wait for the lock that ran out.
type LockTimeoutError struct {
	Namespace, Name string
	Holder          string
	Waited          time.Duration
}

func (e *LockTimeoutError) Error() string {
	return fmt.Sprintf("waited %s for the bind lock (Lease %s/%s) held by %s; nothing was written (raise --lock-timeout; kubectl get lease %s -n %s shows the holder)",
		e.Waited.Round(time.Second), e.Namespace, e.Name, e.Holder, e.Name, e.Namespace)
}

// LockForbiddenError is a user who may not take the lock.
type LockForbiddenError struct {
	Namespace, Name string
	Verbs           []string
}

func (e *LockForbiddenError) Error() string {
	return fmt.Sprintf("you may not %v the Lease %s/%s that serializes binds; add a Role in namespace %s with the rule "+
		"{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, create, update]} and bind it to you, "+
		"or give --no-lock to bind without it (not safe when others bind at the same moment)",
		e.Verbs, e.Namespace, e.Name, e.Namespace)
}

// WithLock runs run while holding the bind lock, as leader election holds
// a Lease: taken (waiting for another holder, which is taken over once its
// Lease expires), renewed while run works, released when run returns or
// the context ends. run's context ends if the lock is lost; its caller
// decides what may still finish then. A user who may not take the Lease
// gets a *LockForbiddenError before anything is written; a wait past
// Timeout a *LockTimeoutError.
func WithLock(ctx context.Context, cfg *rest.Config, opts LockOptions, run func(context.Context) error) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := checkLockAccess(ctx, cs, opts); err != nil {
		return err
	}
	identity, err := lockIdentity(opts.Holding)
	if err != nil {
		return err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: opts.Namespace, Name: opts.Name},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	// Leader election logs every acquisition at the default level; the
	// command says what matters itself.
	lctx, cancel := context.WithCancel(klog.NewContext(ctx, logr.Discard()))
	defer cancel()
	var (
		mu      sync.Mutex
		started bool
		runErr  error
		done    = make(chan struct{})
	)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   lockDuration,
		RenewDeadline:   lockRenew,
		RetryPeriod:     lockRetry,
		ReleaseOnCancel: true,
		Name:            opts.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				mu.Lock()
				started = true
				mu.Unlock()
				err := run(ctx)
				mu.Lock()
				runErr = err
				mu.Unlock()
				close(done)
				cancel() // release
			},
			OnStoppedLeading: func() {},
			OnNewLeader: func(holder string) {
				if holder != identity && opts.Waiting != nil {
					opts.Waiting(holder)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	ran := make(chan struct{})
	go func() {
		le.Run(lctx)
		close(ran)
	}()
	var timeout <-chan time.Time
	if opts.Timeout > 0 {
		t := time.NewTimer(opts.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	start := time.Now()
	// stopWaiting ends a wait that has not begun the run (the run goes on
	// when the lock was taken just now): it reports whether the run began.
	stopWaiting := func() bool {
		mu.Lock()
		begun := started
		mu.Unlock()
		if begun {
			<-done
			return true
		}
		cancel()
		<-ran
		return false
	}
	select {
	case <-done:
	case <-timeout:
		if !stopWaiting() {
			return &LockTimeoutError{Namespace: opts.Namespace, Name: opts.Name, Holder: le.GetLeader(), Waited: time.Since(start)}
		}
	case <-ctx.Done():
		// A run that began sees the same end of its context and stops as
		// it must (nothing new is written); the lock is released after.
		if !stopWaiting() {
			return ctx.Err()
		}
	}
	<-ran // released
	mu.Lock()
	defer mu.Unlock()
	return runErr
}

// checkLockAccess asks the server whether the user may read, create and
// update the Lease, so that a missing permission is one clear line rather
// than a wait that never ends.
func checkLockAccess(ctx context.Context, cs kubernetes.Interface, opts LockOptions) error {
	verbs := []string{"get", "create", "update"}
	denied := make([]bool, len(verbs))
	errs := make([]error, len(verbs))
	var wg sync.WaitGroup
	for i, verb := range verbs {
		wg.Go(func() {
			attr := authorizationv1.ResourceAttributes{Namespace: opts.Namespace, Verb: verb, Group: coordinationv1.GroupName,
				Resource: "leases", Name: opts.Name}
			if verb == "create" {
				attr.Name = "" // create is authorized without a name
			}
			review, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
				&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr}}, metav1.CreateOptions{})
			if err != nil {
				errs[i] = fmt.Errorf("checking access to the bind lock: %w", err)
				return
			}
			denied[i] = !review.Status.Allowed
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var missing []string
	for i, d := range denied {
		if d {
			missing = append(missing, verbs[i])
		}
	}
	if len(missing) > 0 {
		return &LockForbiddenError{Namespace: opts.Namespace, Name: opts.Name, Verbs: missing}
	}
	return nil
}

// lockIdentity names this run in the Lease, for whoever waits: user on
// host, process, what it does, and a random suffix so that two runs never
// share an identity.
func lockIdentity(holding string) (string, error) {
	host, _ := os.Hostname()
	suffix := make([]byte, 3)
	if _, err := rand.Read(suffix); err != nil {
		return "", err
	}
	id := fmt.Sprintf("kubectl-gang %s on %s pid %d (%s)", holding, host, os.Getpid(), hex.EncodeToString(suffix))
	if len(id) > 250 {
		id = id[:250]
	}
	return id, nil
}
