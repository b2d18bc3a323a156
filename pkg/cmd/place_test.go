package cmd

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
)

// TestPlaceAndAdmitGolden pins the human output of place and admit for the
// example cluster's gang: nine members, eight of which fit in one zone.
func TestPlaceAndAdmitGolden(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"place", []string{"place", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot}, "place-llm-pretrain.golden"},
		{"admit", []string{"admit", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot}, "admit-llm-pretrain.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != ExitNo {
				t.Errorf("exit %d, want %d: the gang does not fit (stderr %q)", code, ExitNo, stderr)
			}
			if stderr != "" {
				t.Errorf("stderr = %q, want nothing", stderr)
			}
			testutil.Golden(t, filepath.Join("testdata", tt.golden), []byte(out))

			// The same run again prints the same bytes: ties between nodes
			// break by name, never at random.
			if _, again, _ := run(t, "", tt.args...); again != out {
				t.Errorf("a second run printed something else:\n%s", again)
			}
			// --no-headers drops exactly the table's header line (the
			// columns may narrow without it).
			_, bare, _ := run(t, "", append(tt.args, "--no-headers")...)
			lines := strings.Split(out, "\n")
			if len(lines) < 2 || fields(bare) != fields(strings.Join(append(lines[:1:1], lines[2:]...), "\n")) {
				t.Errorf("--no-headers output:\n%s\nwant the output above without its second line", bare)
			}
		})
	}
}

// fields normalises the spacing of each line, so tables compare by content.
func fields(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// TestPlaceOutputFormats checks that -o json, yaml and jsonpath print the
// same Placement, with the fields scripts read.
func TestPlaceOutputFormats(t *testing.T) {
	args := []string{"place", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot}
	code, out, stderr := run(t, "", append(args, "-o", "jsonpath={.kind} {.verdict} {.minMember} {.maxPlaceable} {.domain}")...)
	if want := "Placement Unschedulable 9 8 us-east-1b"; code != ExitNo || out != want {
		t.Errorf("jsonpath: exit %d, output %q (stderr %q), want 3 and %q", code, out, stderr, want)
	}
	code, out, _ = run(t, "", append(args, "-o", "yaml")...)
	for _, want := range []string{"apiVersion: " + v1alpha1.GroupVersion + "\n", "kind: Placement\n", "verdict: Unschedulable\n", "assignments: []\n", "minMember: 9\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("yaml: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	// A gang that does not fit keeps its partial plan, member by member:
	// the eight that fit in zone b, and the one that blocks.
	code, out, _ = run(t, "", append(args, "-o", `jsonpath={range .members[*]}{.status}/{.node};{end}`)...)
	var fits, blocks int
	for _, m := range strings.Split(strings.TrimSuffix(out, ";"), ";") {
		status, node, _ := strings.Cut(m, "/")
		switch {
		case status == "Fits (gang not placed)" && strings.Contains(node, "-b-"):
			fits++
		case status == "Does not fit" && node == "":
			blocks++
		}
	}
	if code != ExitNo || fits != 8 || blocks != 1 {
		t.Errorf("members: exit %d, %d fit in zone b and %d do not fit, want 8 and 1: %s", code, fits, blocks, out)
	}
	code, out, _ = run(t, "", "admit", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot,
		"-o", "jsonpath={.kind} {.verdict} {.admitted} {.checks[*].result}")
	if want := "Admission Rejected false Passed Passed Passed Failed"; code != ExitNo || out != want {
		t.Errorf("admit jsonpath: exit %d, output %q, want 3 and %q", code, out, want)
	}
}

// A selector's minimum above the pods it selects: the members that do not
// exist are counted and named, as a gang scheduler waits for them (a clean
// no, exit 3), never taken for members that do not fit.
func TestSelectorShortOfMembers(t *testing.T) {
	snap := "apiVersion: v1\nkind: List\nitems:\n" +
		"- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: \"8\", pods: \"10\"}}}\n"
	for i := range 4 {
		snap += fmt.Sprintf("- {apiVersion: v1, kind: Pod, metadata: {name: mpi-%d, namespace: ml, labels: {app: mpi}}, spec: {containers: [{name: c, image: x}]}, status: {phase: Pending}}\n", i)
	}
	args := []string{"-l", "app=mpi", "--min-member", "9", "-n", "ml", "--snapshot", "-"}
	code, out, _ := run(t, snap, append([]string{"place"}, args...)...)
	if want := "Unschedulable: gang ml/app=mpi cannot be placed: at most 4 of minimum 9 member(s) run or fit at once; 5 member(s) do not exist\n"; code != ExitNo || !strings.HasPrefix(out, want) {
		t.Errorf("place: exit %d, output %q; want 3 and %q", code, out, want)
	}
	code, out, _ = run(t, snap, append([]string{"explain"}, args...)...)
	if want := "5 member(s) do not exist: 4 of minimum 9 exist"; code != ExitNo || !strings.Contains(out, want) {
		t.Errorf("explain: exit %d, output %q; want 3 and %q", code, out, want)
	}
}

// Pods of a hand-made snapshot carry no status: the API server starts every
// pod Pending, and so does DefaultPod, so they count toward their gang.
func TestHandMadePodsArePending(t *testing.T) {
	snap := "apiVersion: v1\nkind: List\nitems:\n" +
		"- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: \"8\", pods: \"10\"}}}\n" +
		"- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: pg, namespace: ml}, spec: {schedulingPolicy: {gang: {minCount: 2}}}}\n" +
		"- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: ml}, spec: {schedulingGroup: {podGroupName: pg}, containers: [{name: c, image: x}]}}\n" +
		"- {apiVersion: v1, kind: Pod, metadata: {name: b, namespace: ml}, spec: {schedulingGroup: {podGroupName: pg}, containers: [{name: c, image: x}]}}\n"
	code, out, stderr := run(t, snap, "admit", "podgroup/pg", "-n", "ml", "--snapshot", "-", "-o", "jsonpath={.verdict} {.checks[0].result}")
	if code != ExitOK || out != "Admitted Passed" {
		t.Errorf("admit: exit %d, output %q (stderr %q); want 0 and Admitted Passed", code, out, stderr)
	}
}

// writeCounter counts the writes made to it.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestOutputIsWrittenInBlocks checks that a verb's table reaches output
// that is not a terminal in blocks, not a write per cell (the table writer
// writes each cell alone: -o wide on 65,000 nodes was half a million
// writes), and is the same output.
func TestOutputIsWrittenInBlocks(t *testing.T) {
	for _, args := range [][]string{
		{"explain", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot, "-o", "wide"},
		{"place", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot},
		{"snapshot", "--snapshot", exampleSnapshot, "--summary"},
		{"snapshot", "--snapshot", exampleSnapshot, "-o", `jsonpath={range .items[*]}{.kind} {.metadata.name}{"\n"}{end}`},
	} {
		var out writeCounter
		var errOut bytes.Buffer
		code := Main(args, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		_, want, _ := run(t, "", args...)
		if out.String() != want {
			t.Errorf("%s: exit %d, output differs when counted:\n%s\nwant\n%s", args[0], code, out.String(), want)
		}
		if blocks := out.Len()/(64<<10) + 1; out.writes > blocks || out.Len() == 0 {
			t.Errorf("%s: %d bytes in %d writes, want %d", args[0], out.Len(), out.writes, blocks)
		}
	}
}
