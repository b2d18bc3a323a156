// Package kueue checks kubectl-gang's model of Kueue's admission
// (pkg/systems/kueue) against Kueue v0.17.0's controller manager itself,
// built from the Go module proxy (hack/build-kueue.sh) and run on the test
// bed's real kube-apiserver with its webhooks: real Jobs submitted to real
// LocalQueues, kubectl-gang's verdict compared with the Workload's
// conditions and admission. See docs/design.md#kueue.
package kueue

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kubectl-gang/kubectl-gang/test/testbed"
)

// env is the test bed every test in the package shares; Kueue runs on it.
var env *testbed.Env

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // a first build takes a few
	dir, err := testbed.ResolveKueue(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(testbed.RunTests(m, testbed.Options{}, func(e *testbed.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := e.StartKueue(ctx, dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			_ = e.Stop()
			os.Exit(1)
		}
		env = e
	}))
}
