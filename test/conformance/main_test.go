// Package conformance proves that our pipeline (pkg/schedule) decides like
// the real kube-scheduler v1.37.1: random and hand-written scenarios are
// created on a real kube-apiserver, kube-scheduler decides each one's pending
// pod, and our pipeline decides the same pod on a snapshot of the same
// cluster. Kube-scheduler's pick must be among our top-scored nodes, its
// FailedScheduling message must be ours byte for byte, and (from its
// --vmodule=schedule_one=10 log) its feasible nodes and per-node scores must
// be ours. For a pod with resource claims (the DRA scenarios), the devices
// kube-scheduler writes into the claims must be the ones our Reserve
// allocates on the node it chose.
//
// Environment:
//
//	CONFORMANCE_SCENARIOS=N   random scenarios to run (default 500, 25 with -short)
//	CONFORMANCE_SEED=S[,S...] run only these seeds (replay)
//	CONFORMANCE_SEED_BASE=B   first seed of the run (default 1)
//	CONFORMANCE_DRA_SCENARIOS=N, CONFORMANCE_DRA_SEED=S[,S...], CONFORMANCE_DRA_SEED_BASE=B
//	                          the same for the DRA scenarios (default 40, 10 with -short)
//	CONFORMANCE_SCORES=0      do not compare per-node scores from the scheduler's log
//	CONFORMANCE_DUMP_DIR=DIR  where failing scenarios are written as snapshot files
//	                          (default: the test bed's log directory, kept on failure)
package conformance

import (
	"fmt"
	"os"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/test/testbed"
)

var (
	env *testbed.Env
	// h is the harness every test shares, created on first use.
	h *harness
	// scoreLogging is whether kube-scheduler logs its scores for us to compare.
	scoreLogging = os.Getenv("CONFORMANCE_SCORES") != "0"
)

func TestMain(m *testing.M) {
	// The apiserver deletes a collection one object at a time unless told
	// otherwise; every scenario starts by deleting the previous one.
	opts := testbed.Options{Scheduler: true, APIServerArgs: []string{"--delete-collection-workers=8"}}
	if scoreLogging {
		opts.SchedulerArgs = []string{"--vmodule=schedule_one=10"}
	}
	os.Exit(testbed.RunTests(summarizing{m}, opts, func(e *testbed.Env) { env = e }))
}

// summarizing prints the agreement summary after the tests, whatever -v says.
type summarizing struct{ m *testing.M }

func (s summarizing) Run() int {
	code := s.m.Run()
	if h != nil {
		fmt.Println("conformance:", h.Summary())
	}
	return code
}

// sharedHarness returns the harness, creating it (and the priority classes)
// on first use.
func sharedHarness(t *testing.T) *harness {
	t.Helper()
	if h == nil {
		var err error
		if h, err = newHarness(env); err != nil {
			t.Fatal(err)
		}
	}
	return h
}
