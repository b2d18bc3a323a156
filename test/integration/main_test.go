// Package integration tests kubectl-gang against a real kube-apiserver and etcd
// started on loopback by test/testbed.
package integration

import (
	"os"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/test/testbed"
)

// env is the test bed every test in the package shares.
var env *testbed.Env

func TestMain(m *testing.M) {
	os.Exit(testbed.RunTests(m, testbed.Options{}, func(e *testbed.Env) { env = e }))
}
