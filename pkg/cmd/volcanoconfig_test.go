package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// volcanoSnapshot holds a Volcano gang (ml/vc, in the default queue) and a
// native one (ml/nat) that both fit; extra items are appended to it.
const volcanoSnapshot = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: "8", memory: 32Gi, pods: "20"}}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: default}, spec: {weight: 1}, status: {state: Open}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: vc, namespace: ml}, spec: {minMember: 2}}
- {apiVersion: v1, kind: Pod, metadata: {name: vc-0, namespace: ml, annotations: {scheduling.k8s.io/group-name: vc}}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: vc-1, namespace: ml, annotations: {scheduling.k8s.io/group-name: vc}}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: nat, namespace: ml}, spec: {schedulingPolicy: {gang: {minCount: 1}}}}
- {apiVersion: v1, kind: Pod, metadata: {name: nat-0, namespace: ml}, spec: {schedulingGroup: {podGroupName: nat}, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
`

// The scheduler's ConfigMap as a snapshot file carries it, and the stand-in
// for one the live read was refused.
const (
	volcanoConfigMapItem = `- {apiVersion: v1, kind: ConfigMap, metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}, data: {volcano-scheduler.conf: "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n"}}
`
	refusedConfigMapItem = `- {apiVersion: v1, kind: ConfigMap, metadata: {name: volcano-scheduler-configmap, namespace: volcano-system, annotations: {kubectl-gang.github.io/unreadable: "cannot get ConfigMap volcano-system/volcano-scheduler-configmap (Forbidden)"}}}
`
)

const strictVolcanoConf = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: gang
- plugins:
  - name: overcommit
    arguments:
      overcommit-factor: 1.0
  - name: proportion
`

const volcanoConfigMapManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: volcano-scheduler-configmap
  namespace: volcano-system
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate"
    tiers:
    - plugins:
      - name: gang
`

func writeTestFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// saysOnce reports whether out has the line want once, whatever explain's
// wrapping at 120 columns did to it.
func saysOnce(out, want string) bool {
	lines := strings.Split(out, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Count(strings.Join(lines, " ")+" ", want+" ") == 1 && strings.Count(out, "Volcano configuration:") == 1
}

// volcanoConfigurationOf reads volcanoConfiguration from a verb's -o json,
// nil when absent.
func volcanoConfigurationOf(t *testing.T, out string) map[string]string {
	t.Helper()
	var obj struct {
		VolcanoConfiguration map[string]string `json:"volcanoConfiguration"`
		Placement            map[string]any    `json:"placement"`
	}
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if _, nested := obj.Placement["volcanoConfiguration"]; nested {
		t.Errorf("an Admission names the configuration twice (again in its placement):\n%s", out)
	}
	return obj.VolcanoConfiguration
}

// --volcano-config names the configuration a Volcano gang is judged with,
// once, in every verb's text and JSON: a volcano-scheduler.conf, its
// ConfigMap as kubectl prints it, or stdin; without it Volcano's default
// configuration is named. Other gangs print nothing of it.
func TestVolcanoConfigFlag(t *testing.T) {
	dir := t.TempDir()
	snap := writeTestFile(t, dir, "cluster.yaml", volcanoSnapshot)
	conf := writeTestFile(t, dir, "volcano-scheduler.conf", strictVolcanoConf)
	manifest := writeTestFile(t, dir, "cm.yaml", volcanoConfigMapManifest)
	tests := []struct {
		name   string
		flags  []string
		stdin  string
		source string
	}{
		{name: "default", source: volcano.ChartDefaultSource},
		{name: "conf file", flags: []string{"--volcano-config", conf}, source: "file " + conf},
		{name: "ConfigMap manifest", flags: []string{"--volcano-config", manifest}, source: "file " + manifest},
		{name: "stdin", flags: []string{"--volcano-config", "-"}, stdin: strictVolcanoConf, source: "stdin"},
	}
	for _, tt := range tests {
		for _, verb := range []string{"place", "explain", "admit"} {
			t.Run(tt.name+" "+verb, func(t *testing.T) {
				args := append([]string{verb, "podgroup/vc", "-n", "ml", "--snapshot", snap}, tt.flags...)
				code, out, stderr := run(t, tt.stdin, args...)
				if code != 0 || stderr != "" {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				if want := "Volcano configuration: " + tt.source; !saysOnce(out, want) {
					t.Errorf("the text does not say %q once:\n%s", want, out)
				}
				code, out, stderr = run(t, tt.stdin, append(args, "-o", "json")...)
				if code != 0 || stderr != "" {
					t.Fatalf("-o json: exit %d, stderr %q", code, stderr)
				}
				if got := volcanoConfigurationOf(t, out); got["source"] != tt.source || got["unread"] != "" {
					t.Errorf("volcanoConfiguration %v, want source %q", got, tt.source)
				}
			})
		}
	}
	for _, verb := range []string{"place", "explain", "admit"} {
		t.Run("native gang "+verb, func(t *testing.T) {
			args := []string{verb, "podgroup/nat", "-n", "ml", "--snapshot", snap, "--volcano-config", conf}
			code, out, stderr := run(t, "", args...)
			if code != 0 || stderr != "" || strings.Contains(out, "Volcano") {
				t.Errorf("exit %d, stderr %q, output names Volcano:\n%s", code, stderr, out)
			}
			_, out, _ = run(t, "", append(args, "-o", "json")...)
			if got := volcanoConfigurationOf(t, out); got != nil {
				t.Errorf("volcanoConfiguration %v for a native gang", got)
			}
		})
	}
}

// A --volcano-config that cannot be read or is not a configuration
// Volcano loads is bad input: one line, exit 2, before the cluster is read.
func TestVolcanoConfigBadInput(t *testing.T) {
	dir := t.TempDir()
	snap := writeTestFile(t, dir, "cluster.yaml", volcanoSnapshot)
	unknownAction := writeTestFile(t, dir, "bad.conf", "actions: \"enqueue, teleport\"\n")
	notYAML := writeTestFile(t, dir, "broken.conf", "tiers: [\n")
	wrongTypes := writeTestFile(t, dir, "types.conf", "actions: enqueue\ntiers:\n- plugins: 3\n- plugins: 4\n")
	noKey := writeTestFile(t, dir, "cm.yaml", strings.Replace(volcanoConfigMapManifest, "volcano-scheduler.conf: |", "other.conf: |", 1))
	tests := []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{name: "missing file", args: []string{"--volcano-config", filepath.Join(dir, "none")},
			want: "error: --volcano-config: " + filepath.Join(dir, "none") + ": no such file or directory"},
		{name: "unknown action", args: []string{"--volcano-config", unknownAction},
			want: "error: --volcano-config: " + unknownAction + `: failed to find Action "teleport"`},
		{name: "not YAML", args: []string{"--volcano-config", notYAML},
			want: "error: --volcano-config: " + notYAML + ": not a volcano-scheduler.conf: yaml: line 1"},
		{name: "yaml's errors on several lines", args: []string{"--volcano-config", wrongTypes},
			want: "error: --volcano-config: " + wrongTypes + ": not a volcano-scheduler.conf: yaml: unmarshal errors: line 3: cannot unmarshal"},
		{name: "ConfigMap without the key", args: []string{"--volcano-config", noKey},
			want: "error: --volcano-config: " + noKey + ": ConfigMap volcano-system/volcano-scheduler-configmap has no key volcano-scheduler.conf (it has other.conf)"},
		{name: "the snapshot as the configuration", args: []string{"--volcano-config", snap},
			want: "error: --volcano-config: " + snap + ": a v1 List, not a volcano-scheduler.conf or a v1 ConfigMap holding one"},
		{name: "stdin twice", args: []string{"--volcano-config", "-", "--snapshot", "-"},
			want: "error: --volcano-config - and --snapshot - cannot both read standard input"},
		{name: "bad ConfigMap name", args: []string{"--volcano-config-map", "volcano-scheduler-configmap"},
			want: `error: invalid --volcano-config-map: "volcano-scheduler-configmap" is not NAMESPACE/NAME`},
	}
	for _, tt := range tests {
		for _, verb := range []string{"place", "explain", "admit"} {
			t.Run(tt.name+" "+verb, func(t *testing.T) {
				args := append([]string{verb, "podgroup/vc", "-n", "ml"}, tt.args...)
				if !strings.Contains(strings.Join(tt.args, " "), "--snapshot") {
					args = append(args, "--snapshot", snap)
				}
				code, out, stderr := run(t, tt.stdin, args...)
				if code != ExitUsage || out != "" {
					t.Errorf("exit %d, stdout %q; want %d and nothing", code, out, ExitUsage)
				}
				if !strings.HasPrefix(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
					t.Errorf("stderr %q, want one line starting %q", stderr, tt.want)
				}
			})
		}
	}
	code, _, stderr := run(t, "", "explain", "-A", "--snapshot", snap, "--volcano-config", unknownAction)
	if code != ExitUsage || !strings.HasPrefix(stderr, "error: --volcano-config: ") {
		t.Errorf("explain -A: exit %d, stderr %q", code, stderr)
	}
}

// A snapshot file's ConfigMap is the configuration, named as from the
// snapshot; a stand-in for a refused read makes it unknown, with a warning;
// --volcano-config wins over both.
func TestVolcanoConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	withCM := writeTestFile(t, dir, "with-cm.yaml", volcanoSnapshot+volcanoConfigMapItem)
	refused := writeTestFile(t, dir, "refused.yaml", volcanoSnapshot+refusedConfigMapItem)
	conf := writeTestFile(t, dir, "volcano-scheduler.conf", strictVolcanoConf)
	const why = "cannot get ConfigMap volcano-system/volcano-scheduler-configmap (Forbidden)"
	tests := []struct {
		name         string
		args         []string
		source       string
		unread       string
		wantWarnings string
	}{
		{name: "the snapshot's ConfigMap", args: []string{"--snapshot", withCM},
			source: "ConfigMap volcano-system/volcano-scheduler-configmap (from the snapshot " + withCM + ")"},
		{name: "the flag over the snapshot's ConfigMap", args: []string{"--snapshot", withCM, "--volcano-config", conf}, source: "file " + conf},
		{name: "refused when the snapshot was taken", args: []string{"--snapshot", refused}, unread: why, wantWarnings: "Warning: " + why + "\n"},
		{name: "the flag over a refused read", args: []string{"--snapshot", refused, "--volcano-config", conf}, source: "file " + conf},
	}
	for _, tt := range tests {
		for _, verb := range []string{"place", "explain", "admit"} {
			t.Run(tt.name+" "+verb, func(t *testing.T) {
				args := append([]string{verb, "podgroup/vc", "-n", "ml"}, tt.args...)
				code, out, stderr := run(t, "", append(args, "-o", "json")...)
				if code == ExitError || code == ExitUsage {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if stderr != tt.wantWarnings {
					t.Errorf("stderr %q, want %q", stderr, tt.wantWarnings)
				}
				if got := volcanoConfigurationOf(t, out); got["source"] != tt.source || got["unread"] != tt.unread {
					t.Errorf("volcanoConfiguration %v, want source %q, unread %q", got, tt.source, tt.unread)
				}
				_, out, _ = run(t, "", args...)
				want := "Volcano configuration: " + tt.source
				if tt.unread != "" {
					want = "Volcano configuration: unknown (not evaluated): " + tt.unread
				}
				if !saysOnce(out, want) {
					t.Errorf("the text does not say %q once:\n%s", want, out)
				}
			})
		}
	}
}

// snapshot --summary says whether the file holds Volcano's configuration,
// and a file saved by a user refused it warns as the live read did.
func TestVolcanoConfigSnapshotSummary(t *testing.T) {
	dir := t.TempDir()
	withCM := writeTestFile(t, dir, "with-cm.yaml", volcanoSnapshot+volcanoConfigMapItem)
	refused := writeTestFile(t, dir, "refused.yaml", volcanoSnapshot+refusedConfigMapItem)
	for _, tt := range []struct{ file, row, stderr string }{
		{withCM, "configmaps   1   volcano-system/volcano-scheduler-configmap: Volcano's scheduler configuration\n", ""},
		{refused, "configmaps   0   volcano-system/volcano-scheduler-configmap: Volcano's scheduler configuration, not readable\n",
			"Warning: cannot get ConfigMap volcano-system/volcano-scheduler-configmap (Forbidden)\n"},
	} {
		code, out, stderr := run(t, "", "snapshot", "--snapshot", tt.file, "--summary")
		if code != 0 || stderr != tt.stderr || !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(tt.row), " ")) {
			t.Errorf("%s: exit %d, stderr %q, want %q; summary lacks %q:\n%s", filepath.Base(tt.file), code, stderr, tt.stderr, tt.row, out)
		}
	}
	_, out, _ := run(t, "", "snapshot", "--snapshot", withCM, "-o", "yaml")
	if !strings.Contains(out, "kind: ConfigMap") || !strings.Contains(out, "volcano-scheduler.conf") {
		t.Errorf("the snapshot written from the file lacks the ConfigMap:\n%s", out)
	}
}
