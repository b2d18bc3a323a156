package conformance

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-gang/kubectl-gang/test/conformance/scenario"
)

// Scenario counts.
const (
	defaultScenarios = 500
	shortScenarios   = 25
	// maxDumps bounds how many failing scenarios are written out per run.
	maxDumps = 50
	// maxHarnessErrors stops the run after this many scenarios in a row fail
	// for reasons of the cluster or the harness rather than a disagreement.
	maxHarnessErrors = 3
)

// TestRandomScenarios runs seeded random scenarios against kube-scheduler and
// our pipeline. Each subtest is named after its scenario (s<seed>), so one
// seed also replays with -run 'TestRandomScenarios/s<seed>$' when it lies in
// the run's seed range.
func TestRandomScenarios(t *testing.T) {
	seeds, err := seedsToRun()
	if err != nil {
		t.Fatal(err)
	}
	h := sharedHarness(t)
	began := time.Now()
	var ran, agreed, harnessErrors int
	for _, seed := range seeds {
		sc := scenario.Generate(seed)
		ok := t.Run(sc.Name, func(t *testing.T) {
			r, err := h.Run(t.Context(), sc)
			if err != nil {
				harnessErrors++
				t.Fatalf("seed %d: the harness failed (not a disagreement): %v\n%s", seed, err, replayHint(seed))
			}
			harnessErrors = 0
			ran++
			t.Logf("seed %d (%s): kube-scheduler %s; ours %s", seed, sc.Summary(), r.kube, describe(r))
			if len(r.problems) == 0 {
				agreed++
				return
			}
			report(t, h, r, replayHint(seed))
		})
		if !ok && harnessErrors >= maxHarnessErrors {
			t.Fatalf("stopping after %d harness failures in a row", harnessErrors)
		}
	}
	if ran > 0 {
		t.Logf("random scenarios: %d/%d agree (%.1f%%) in %v", agreed, ran, 100*float64(agreed)/float64(ran), time.Since(began).Round(time.Millisecond))
	}
	t.Log(h.Summary())
}

// seedsToRun reads CONFORMANCE_SEED, CONFORMANCE_SCENARIOS and
// CONFORMANCE_SEED_BASE.
func seedsToRun() ([]uint64, error) {
	return seedsFromEnv("CONFORMANCE", defaultScenarios, shortScenarios)
}

// seedsFromEnv reads PREFIX_SEED (a list of seeds to replay), else
// PREFIX_SCENARIOS (how many, n by default and short with -short) and
// PREFIX_SEED_BASE (the first seed).
func seedsFromEnv(prefix string, n, short int) ([]uint64, error) {
	if v := os.Getenv(prefix + "_SEED"); v != "" {
		var seeds []uint64
		for _, f := range strings.Split(v, ",") {
			s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s_SEED: %q is not a seed: %w", prefix, f, err)
			}
			seeds = append(seeds, s)
		}
		return seeds, nil
	}
	if testing.Short() {
		n = short
	}
	if v := os.Getenv(prefix + "_SCENARIOS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 0 {
			return nil, fmt.Errorf("%s_SCENARIOS: %q is not a count", prefix, v)
		}
	}
	base := uint64(1)
	if v := os.Getenv(prefix + "_SEED_BASE"); v != "" {
		var err error
		if base, err = strconv.ParseUint(v, 10, 64); err != nil {
			return nil, fmt.Errorf("%s_SEED_BASE: %q is not a seed: %w", prefix, v, err)
		}
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = base + uint64(i)
	}
	return seeds, nil
}

func replayHint(seed uint64) string {
	return fmt.Sprintf("replay: CONFORMANCE_SEED=%d go test ./test/conformance/ -run 'TestRandomScenarios' -v", seed)
}

// describe is our decision in a few words.
func describe(r *run) string {
	if r.ours.Verdict == "Scheduled" {
		return fmt.Sprintf("%s on %s (top %v)", r.ours.Verdict, r.ours.SelectedNode, r.ours.TopNodes())
	}
	return fmt.Sprintf("%s %q", r.ours.Verdict, r.ours.Message)
}

var dumps int

// report fails t with everything needed to act on a disagreement.
func report(t *testing.T, h *harness, r *run, replay string) {
	t.Helper()
	where := "(not written: too many failures)"
	if dumps < maxDumps {
		dumps++
		if path, err := h.dumpRun(r); err != nil {
			where = "(not written: " + err.Error() + ")"
		} else {
			where = path + " (" + replayDump(t.Context(), path, r) + ")"
		}
	}
	plugins := "unknown"
	if len(r.plugins) > 0 {
		plugins = strings.Join(r.plugins, ", ")
	}
	t.Errorf("scenario %s (seed %d, %s): kube-scheduler and our pipeline disagree; plugin(s) at fault: %s\n%s\n%s\nscenario file: %s\noffline: kubectl gang explain pod/%s -n %s --snapshot FILE",
		r.sc.Name, r.sc.Seed, r.sc.Summary(), plugins, strings.Join(r.problems, "\n"), replay, where, r.pending.Name, r.pending.Namespace)
}
