// Package coscheduling checks kubectl-gang's gang placement of coscheduling
// PodGroups (scheduling.x-k8s.io) against the scheduler that owns them:
// scheduler-plugins' kube-scheduler with its documented Coscheduling
// profile, built from the Go module proxy (hack/build-schedplugins.sh) and
// run on the test bed's real kube-apiserver. See docs/design.md#tests.
package coscheduling

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kubectl-gang/kubectl-gang/test/testbed"
)

// env is the test bed every test in the package shares; its scheduler is
// scheduler-plugins'.
var env *testbed.Env

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a first build takes about 3
	bin, err := testbed.ResolveSchedulerPlugins(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opts := testbed.Options{Scheduler: true, SchedulerBinary: bin, SchedulerConfig: "testdata/scheduler-config.yaml"}
	os.Exit(testbed.RunTests(m, opts, func(e *testbed.Env) { env = e }))
}
