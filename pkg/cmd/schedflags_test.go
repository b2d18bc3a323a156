package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang/bind"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

func TestSchedulerConfigErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	typo := write("typo.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    scor: {}\n")
	good := write("good.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: gpu\n  plugins:\n    score:\n      disabled:\n      - name: ImageLocality\n")
	badArgs := write("args.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: Cheapest\n")

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"misspelt field", []string{"--scheduler-config", typo}, ExitUsage, `error: scheduler config ` + typo + `: unknown field "profiles[0].plugins.scor"`},
		{"unknown profile", []string{"--scheduler-config", good, "--profile", "cpu"}, ExitUsage, `error: scheduler config ` + good + `: no profile "cpu"; the file has gpu`},
		{"profile without a file", []string{"--profile", "gpu"}, ExitUsage, `error: --profile "gpu" needs --scheduler-config`},
		{"invalid plugin args", []string{"--scheduler-config", badArgs}, ExitUsage, `error: scheduler config profile default-scheduler: plugin NodeResourcesFit: scoringStrategy.type: Unsupported value: "Cheapest"`},
		{"missing file", []string{"--scheduler-config", filepath.Join(dir, "none.yaml")}, ExitUsage, "error: scheduler config " + filepath.Join(dir, "none.yaml") + ": no such file or directory"},
		{"bad topology key", []string{"--topology-key", "not a key"}, ExitUsage, `error: invalid --topology-key "not a key"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"place", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot}, tt.args...)
			code, _, stderr := run(t, "", args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (%q)", code, tt.wantCode, stderr)
			}
			if !strings.HasPrefix(stderr, tt.wantErr) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line starting with %q", stderr, tt.wantErr)
			}
		})
	}

	// A good profile runs (the example gang does not fit: exit 3).
	code, out, stderr := run(t, "", "place", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot, "--scheduler-config", good, "-o", "json")
	if code != ExitNo || !strings.Contains(out, `"verdict": "Unschedulable"`) {
		t.Errorf("good config: exit %d, stderr %q, out %.200s", code, stderr, out)
	}
}

// TestProfileFollowsSchedulerName: with several profiles and no --profile,
// a pod runs in the profile named after its spec.schedulerName, as
// kube-scheduler runs it; with none of that name, the first profile, and
// a warning.
func TestProfileFollowsSchedulerName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	config := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packing
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
`
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &SchedulerFlags{ConfigFile: path}
	if err := f.Complete(); err != nil {
		t.Fatal(err)
	}
	pod := func(scheduler, node string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{SchedulerName: scheduler, NodeName: node}}
	}
	for _, tt := range []struct {
		name        string
		pods        []*corev1.Pod
		wantProfile string
		wantWarning bool
	}{
		{"no schedulerName is the default scheduler", []*corev1.Pod{pod("", "")}, "default-scheduler", false},
		{"named profile", []*corev1.Pod{pod("bin-packing", "")}, "bin-packing", false},
		{"the first pending pod decides", []*corev1.Pod{pod("", "node-1"), pod("bin-packing", "")}, "bin-packing", false},
		{"no such profile", []*corev1.Pod{pod("volcano", "")}, "default-scheduler", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts, warnings := f.placeOptions(nil, tt.pods)
			if opts.Profile.Name != tt.wantProfile || (len(warnings) > 0) != tt.wantWarning {
				t.Errorf("profile %q, warnings %q; want %q, warning %v", opts.Profile.Name, warnings, tt.wantProfile, tt.wantWarning)
			}
		})
	}

	// --profile wins over the pods' schedulerName.
	f = &SchedulerFlags{ConfigFile: path, Profile: "bin-packing"}
	if err := f.Complete(); err != nil {
		t.Fatal(err)
	}
	if opts, warnings := f.placeOptions(nil, []*corev1.Pod{pod("", "")}); opts.Profile.Name != "bin-packing" || len(warnings) > 0 {
		t.Errorf("--profile bin-packing: profile %q, warnings %q", opts.Profile.Name, warnings)
	}
}

// TestOtherSchedulersConfigurations runs place with scheduler-plugins'
// configurations (testdata/schedulerconfig: its documented Coscheduling
// profile, Coscheduling point by point as a second scheduler, and its Helm
// chart's second scheduler with plugins this build does not run). The real
// scheduler-plugins kube-scheduler v0.33.5 accepts all three (test/coscheduling
// runs the first). Coscheduling is the coscheduling source's rules; other
// plugins make the verdict not evaluated; a pod whose schedulerName no
// profile names is placed with a stand-in, and a warning says so; when no
// pod on a node of the snapshot names that scheduler either, nothing shows
// that one runs, and the yes is not a plain one (issue #27: the pods would
// stay Pending).
func TestOtherSchedulersConfigurations(t *testing.T) {
	snap := "apiVersion: v1\nkind: List\nitems:\n" +
		"- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: \"8\", memory: 32Gi, pods: \"20\"}}}\n" +
		"- {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: pg, namespace: ml}, spec: {minMember: 2}}\n" +
		"- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: pg}}, spec: {schedulerName: scheduler-plugins-scheduler, containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]}}\n" +
		"- {apiVersion: v1, kind: Pod, metadata: {name: b, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: pg}}, spec: {schedulerName: scheduler-plugins-scheduler, containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]}}\n" +
		"- {apiVersion: v1, kind: Pod, metadata: {name: v, namespace: ml, labels: {app: v}}, spec: {schedulerName: volcano, containers: [{name: c, image: x}]}}\n"
	config := func(name string) string { return filepath.Join("testdata", "schedulerconfig", name+".yaml") }
	standIn := func(name, file, has, used string) string {
		return fmt.Sprintf("Warning: the pods' schedulerName is %q, which no profile of %s names (it has %s): kube-scheduler run with it leaves them to another scheduler, and they stay Pending if none serves that name; placed with profile %q as a stand-in for that scheduler (--profile chooses another)\n",
			name, file, has, used)
	}
	// A pod the scheduler-plugins scheduler and one Volcano bound: both
	// schedulers run.
	served := snap + "- {apiVersion: v1, kind: Pod, metadata: {name: old, namespace: ml}, spec: {nodeName: node-1, schedulerName: scheduler-plugins-scheduler, containers: [{name: c, image: x}]}}\n" +
		"- {apiVersion: v1, kind: Pod, metadata: {name: old-v, namespace: ml}, spec: {nodeName: node-1, schedulerName: volcano, containers: [{name: c, image: x}]}}\n"
	unserved := func(name string) string {
		return fmt.Sprintf("no scheduler is known to serve schedulerName %q", name)
	}
	const plugins = `  - profile "scheduler-plugins-scheduler" enables plugin(s) this build does not run, so what they decide is not evaluated: CapacityScheduling (multiPoint; scheduler-plugins'); NodeResourceTopologyMatch (multiPoint; scheduler-plugins'); NodeResourcesAllocatable (multiPoint; scheduler-plugins')`
	tests := []struct {
		name       string
		snapshot   string
		args       []string
		wantCode   int
		wantOut    string
		wantStderr string
		// wantNotEvaluated is what the plan must list as not evaluated.
		wantNotEvaluated string
	}{
		{"documented Coscheduling profile", served, []string{"podgroup/pg", "--scheduler-config", config("coscheduling")}, ExitOK,
			"Placed: gang ml/pg placed: 0 running and 2 to place, minimum 2\n",
			standIn("scheduler-plugins-scheduler", config("coscheduling"), `"default-scheduler"`, "default-scheduler"), ""},
		{"documented Coscheduling profile, no pod of that scheduler anywhere", snap, []string{"podgroup/pg", "--scheduler-config", config("coscheduling")}, ExitNo,
			"Placed (not verified): gang ml/pg placed: 0 running and 2 to place, minimum 2\n",
			standIn("scheduler-plugins-scheduler", config("coscheduling"), `"default-scheduler"`, "default-scheduler"), unserved("scheduler-plugins-scheduler")},
		{"Coscheduling point by point, the pods' profile", snap, []string{"podgroup/pg", "--scheduler-config", config("coscheduling-points")}, ExitOK,
			"Placed: gang ml/pg placed: 0 running and 2 to place, minimum 2\n", "", ""},
		{"plugins this build does not run", snap, []string{"podgroup/pg", "--scheduler-config", config("second-scheduler")}, ExitNo,
			"Placed (not verified): gang ml/pg placed: 0 running and 2 to place, minimum 2\n", "", plugins},
		{"--profile chooses, silently", snap, []string{"-l", "app=v", "--scheduler-config", config("second-scheduler"), "--profile", "scheduler-plugins-scheduler"}, ExitNo,
			"Placed (not verified): gang ml/app=v placed: 0 running and 1 to place, minimum 1\n", "", plugins},
		{"another scheduler's pods, built-in configuration", served, []string{"-l", "app=v"}, ExitOK,
			"Placed: gang ml/app=v placed: 0 running and 1 to place, minimum 1\n",
			standIn("volcano", "the built-in configuration (kube-scheduler's default profile)", `"default-scheduler"`, "default-scheduler"), ""},
		{"a misspelt scheduler", snap, []string{"-l", "app=v"}, ExitNo,
			"Placed (not verified): gang ml/app=v placed: 0 running and 1 to place, minimum 1\n",
			standIn("volcano", "the built-in configuration (kube-scheduler's default profile)", `"default-scheduler"`, "default-scheduler"), unserved("volcano")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, tt.snapshot, append([]string{"place", "-n", "ml", "--snapshot", "-"}, tt.args...)...)
			first, _, _ := strings.Cut(out, "\n")
			if code != tt.wantCode || first+"\n" != tt.wantOut || stderr != tt.wantStderr {
				t.Errorf("exit %d, first line %q, stderr %q\nwant %d, %q, stderr %q", code, first, stderr, tt.wantCode, tt.wantOut, tt.wantStderr)
			}
			if tt.wantNotEvaluated != "" && !strings.Contains(out, tt.wantNotEvaluated) {
				t.Errorf("the plan does not say what was not evaluated:\n%s", out)
			}
		})
	}
}

// TestBindIsTheSchedulerOfItsPods: bind places pods whose schedulerName no
// profile names with the profile place would stand in (so the plans are the
// same), says so in a note, and never marks the plan unevaluated for it (issue
// #41: an unwatched name is how a gang is handed to an external binder); it
// warns only when a pod on a node that bind did not bind names the
// scheduler, or the name is Volcano's on a cluster that serves Volcano.
func TestBindIsTheSchedulerOfItsPods(t *testing.T) {
	f := &SchedulerFlags{}
	if err := f.Complete(); err != nil {
		t.Fatal(err)
	}
	pending := func(scheduler string) []*corev1.Pod {
		return []*corev1.Pod{{Spec: corev1.PodSpec{SchedulerName: scheduler}}}
	}
	onNode := func(name, scheduler string, ours bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name}, Spec: corev1.PodSpec{NodeName: "node-1", SchedulerName: scheduler}}
		if ours {
			p.Annotations = map[string]string{bind.BoundByAnnotation: bind.BoundByValue}
		}
		return p
	}
	volcanoQueue := &unstructured.Unstructured{}
	volcanoQueue.SetAPIVersion("scheduling.volcano.sh" + "/v1beta1")
	volcanoQueue.SetKind("Queue")
	const note = `no profile of the built-in configuration (kube-scheduler's default profile) is named after the pods' schedulerName %q: bind is their scheduler and places them with profile "default-scheduler" (--profile chooses another)`
	for _, tt := range []struct {
		name        string
		snap        *schedule.Snapshot
		pods        []*corev1.Pod
		wantNote    string
		wantWarning string
	}{
		{"kube-scheduler's own name: nothing to say", &schedule.Snapshot{}, pending(""), "", ""},
		{"a name nothing serves", &schedule.Snapshot{}, pending("gang-test"), fmt.Sprintf(note, "gang-test"), ""},
		{"pods bind bound before", &schedule.Snapshot{Pods: []*corev1.Pod{onNode("earlier", "gang-test", true)}}, pending("gang-test"), fmt.Sprintf(note, "gang-test"), ""},
		{"a pod another scheduler bound", &schedule.Snapshot{Pods: []*corev1.Pod{onNode("earlier", "gang-test", true), onNode("theirs", "gang-test", false)}}, pending("gang-test"),
			fmt.Sprintf(note, "gang-test"), `another scheduler may serve schedulerName "gang-test" (pod ml/theirs on node node-1 names it and was not bound by kubectl-gang)`},
		{"another name's pods do not count", &schedule.Snapshot{Pods: []*corev1.Pod{onNode("theirs", "other", false)}}, pending("gang-test"), fmt.Sprintf(note, "gang-test"), ""},
		{"Volcano's name where Volcano runs", &schedule.Snapshot{Objects: []*unstructured.Unstructured{volcanoQueue}}, pending("volcano"),
			fmt.Sprintf(note, "volcano"), `another scheduler may serve schedulerName "volcano" (the cluster serves Volcano`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts, gotNote, warnings := f.bindPlaceOptions(tt.snap, tt.pods)
			if opts.Profile.Name != "default-scheduler" {
				t.Errorf("profile %q, want default-scheduler", opts.Profile.Name)
			}
			if why := opts.Profile.NotEvaluated(); why != "" {
				t.Errorf("the plan is not evaluated: %s", why)
			}
			if gotNote != tt.wantNote {
				t.Errorf("note %q\nwant %q", gotNote, tt.wantNote)
			}
			switch {
			case tt.wantWarning == "" && len(warnings) > 0:
				t.Errorf("warnings %q, want none", warnings)
			case tt.wantWarning != "" && (len(warnings) != 1 || !strings.HasPrefix(warnings[0], tt.wantWarning)):
				t.Errorf("warnings %q, want one starting %q", warnings, tt.wantWarning)
			}
			// place of the same pods: the same profile, and the
			// unserved name is not evaluated there.
			placeOpts, _ := f.placeOptions(tt.snap, tt.pods)
			if placeOpts.Profile.Name != opts.Profile.Name {
				t.Errorf("place uses profile %q, bind %q", placeOpts.Profile.Name, opts.Profile.Name)
			}
			if unserved := tt.wantNote != "" && !servedName(tt.snap, tt.pods[0].Spec.SchedulerName); unserved != (placeOpts.Profile.NotEvaluated() != "") {
				t.Errorf("place: unserved %v, not evaluated %q", unserved, placeOpts.Profile.NotEvaluated())
			}
		})
	}
}
