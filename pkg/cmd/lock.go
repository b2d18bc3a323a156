package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang/kube"
)

// LockFlags say which Lease serializes the verbs that write placements
// (bind, admit --ungate) on a cluster (docs/design.md#binding-a-gang).
type LockFlags struct {
	Namespace string
	Name      string
	Timeout   time.Duration
	NoLock    bool
}

// AddFlags adds --lock-namespace, --lock-name, --lock-timeout and --no-lock.
func (f *LockFlags) AddFlags(flags *pflag.FlagSet) {
	f.Namespace, f.Name, f.Timeout = kube.DefaultLockNamespace, kube.DefaultLockName, 5*time.Minute
	flags.StringVar(&f.Namespace, "lock-namespace", f.Namespace, "Namespace of the Lease that makes runs of bind and admit --ungate on this cluster take turns.")
	flags.StringVar(&f.Name, "lock-name", f.Name, "Name of that Lease.")
	flags.DurationVar(&f.Timeout, "lock-timeout", f.Timeout, "How long to wait for the Lease while another run holds it; then give up, writing nothing.")
	flags.BoolVar(&f.NoLock, "no-lock", f.NoLock, "Write without taking the Lease (not safe when others bind or ungate at the same moment).")
}

// hold runs run while holding the lock, saying on stderr whom it waits for;
// what identifies the run to others ("bind ml/train").
func (f *LockFlags) hold(ctx context.Context, o *GangVerbOptions, verb string, run func(context.Context) error) error {
	if f.NoLock {
		fmt.Fprintf(o.ErrOut, "Warning: --no-lock: %s runs without the Lease %s/%s, so a run at the same moment may place onto the same room\n",
			verb, f.Namespace, f.Name)
		return run(ctx)
	}
	cfg, err := o.Snapshot.RESTConfig()
	if err != nil {
		return err
	}
	subject := o.subject.Arg
	if subject == "" {
		subject = "-l " + o.Subject.Selector
	}
	err = kube.WithLock(ctx, cfg, kube.LockOptions{
		Namespace: f.Namespace, Name: f.Name, Timeout: f.Timeout,
		Holding: fmt.Sprintf("%s %s -n %s", verb, subject, o.namespace),
		Waiting: func(holder string) {
			if holder != "" {
				fmt.Fprintf(o.ErrOut, "Waiting for the Lease %s/%s, held by %s (up to %s)\n", f.Namespace, f.Name, holder, f.Timeout)
			}
		},
	}, run)
	var forbidden *kube.LockForbiddenError
	var timedOut *kube.LockTimeoutError
	switch {
	case errors.As(err, &forbidden):
		return &exitError{code: ExitError, err: err}
	case errors.As(err, &timedOut):
		return &exitError{code: ExitNo, err: err}
	}
	return err
}
