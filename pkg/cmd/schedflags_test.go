package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
			opts, warnings := f.placeOptions(tt.pods)
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
	if opts, warnings := f.placeOptions([]*corev1.Pod{pod("", "")}); opts.Profile.Name != "bin-packing" || len(warnings) > 0 {
		t.Errorf("--profile bin-packing: profile %q, warnings %q", opts.Profile.Name, warnings)
	}
}
