package schedule

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

func names(set configv1.PluginSet) []string {
	var out []string
	for _, p := range set.Enabled {
		out = append(out, p.Name)
	}
	return out
}

func TestDefaultProfileIsKubeSchedulers(t *testing.T) {
	p, err := DefaultProfile()
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "default-scheduler" {
		t.Errorf("name %q", p.Name)
	}
	want := map[string]int32{"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
		"InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "DynamicResources": 2}
	got := map[string]int32{}
	for _, e := range p.Plugins.MultiPoint.Enabled {
		if e.Weight != nil {
			got[e.Name] = *e.Weight
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
}

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadProfileMergesOntoDefaults(t *testing.T) {
	path := writeConfig(t, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packing
  plugins:
    multiPoint:
      enabled:
      - name: NodeResourcesFit
        weight: 5
    score:
      disabled:
      - name: ImageLocality
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: nvidia.com/gpu
          weight: 1
`)
	p, err := LoadProfile(path, "bin-packing")
	if err != nil {
		t.Fatal(err)
	}
	var fitWeight int32
	for _, e := range p.Plugins.MultiPoint.Enabled {
		if e.Name == "NodeResourcesFit" && e.Weight != nil {
			fitWeight = *e.Weight
		}
	}
	if fitWeight != 5 {
		t.Errorf("NodeResourcesFit weight %d, want 5 (replaced in place)", fitWeight)
	}
	if got := names(p.Plugins.MultiPoint); got[7] != "NodeResourcesFit" {
		t.Errorf("multiPoint order changed: %v", got)
	}
	args, ok := p.Args["NodeResourcesFit"].(*configv1.NodeResourcesFitArgs)
	if !ok || args.ScoringStrategy == nil || args.ScoringStrategy.Type != configv1.MostAllocated {
		t.Errorf("NodeResourcesFit args not decoded: %#v", p.Args["NodeResourcesFit"])
	}
	if diff := cmp.Diff([]configv1.Plugin{{Name: "ImageLocality"}, {Name: "NodeResourcesBalancedAllocation"}}, p.Plugins.Score.Disabled); diff != "" {
		t.Errorf("score disabled (-want +got):\n%s", diff)
	}

	first, err := LoadProfile(path, "")
	if err != nil || first.Name != "default-scheduler" {
		t.Errorf("first profile: %v, %v", first, err)
	}
}

func TestLoadProfileErrorsNameTheField(t *testing.T) {
	tests := []struct {
		name, config, profile, wantErr string
	}{
		{"misspelt field", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    scor: {}\n", "",
			`unknown field "profiles[0].plugins.scor"`},
		{"misspelt plugin", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    filter:\n      enabled:\n      - name: NodeResourceFit\n", "",
			`profiles[0].plugins.filter.enabled[0]: unknown plugin "NodeResourceFit" (did you mean "NodeResourcesFit"?)`},
		{"misspelt plugin's args", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: nodeaffinity\n    args: {}\n", "",
			`profiles[0].pluginConfig[0].args: unknown plugin "nodeaffinity" (did you mean "NodeAffinity"?)`},
		{"bad Coscheduling args", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: Coscheduling\n    args:\n      permitWaitingTimeSeconds: -1\n", "",
			`profiles[0].pluginConfig[0].args: permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0`},
		{"misspelt Coscheduling args", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: Coscheduling\n    args:\n      permitWaitingTime: 10\n", "",
			`profiles[0].pluginConfig[0].args: unknown field "permitWaitingTime"`},
		{"bad args field", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        typ: MostAllocated\n", "",
			`profiles[0].pluginConfig[0].args: unknown field "scoringStrategy.typ"`},
		{"wrong kind", "apiVersion: v1\nkind: ConfigMap\n", "", "want apiVersion kubescheduler.config.k8s.io/v1 and kind KubeSchedulerConfiguration"},
		{"missing profile", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n", "gpu", `no profile "gpu"; the file has default-scheduler`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadProfile(writeConfig(t, tt.config), tt.profile)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// namedPlugin is a plugin with nothing but a name, for layout tests.
type namedPlugin string

func (p namedPlugin) Name() string { return string(p) }

// TestExpandOrder checks kube-scheduler's multiPoint expansion: plugins an
// extension point enables that also come through multiPoint first, then the
// other multiPoint plugins (unless disabled there, or "*"), then the point's own.
func TestExpandOrder(t *testing.T) {
	instances := map[string]framework.Plugin{"A": namedPlugin("A"), "B": namedPlugin("B"), "C": namedPlugin("C"), "D": namedPlugin("D")}
	multi := configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "A"}, {Name: "B"}, {Name: "C"}}}
	tests := []struct {
		name string
		set  configv1.PluginSet
		want []string
	}{
		{"multiPoint only", configv1.PluginSet{}, []string{"A", "B", "C"}},
		{"one disabled", configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "B"}}}, []string{"A", "C"}},
		{"all disabled, one enabled", configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "*"}}, Enabled: []configv1.Plugin{{Name: "C"}}}, []string{"C"}},
		{"explicit override first, extra last", configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "D"}, {Name: "C"}}}, []string{"C", "A", "B", "D"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := expand[framework.Plugin](tt.set, multi, instances)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name())
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A plugin listed twice at one extension point would run and score twice;
// kube-scheduler refuses the configuration, and so does NewScheduler.
func TestPluginListedTwiceIsRefused(t *testing.T) {
	p, err := LoadProfile(writeConfig(t, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled:
      - name: ImageLocality
        weight: 5
      - name: ImageLocality
        weight: 5
`), "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewScheduler(&Snapshot{}, Options{Profile: p})
	if err == nil || !strings.Contains(err.Error(), `plugin "ImageLocality" already registered as "ScorePlugin"`) {
		t.Errorf("err = %v, want the plugin named as registered twice", err)
	}
}

// TestOutOfTreePlugins: a configuration written for scheduler-plugins'
// kube-scheduler loads. Coscheduling is taken out of the profile (the
// coscheduling gang source applies its rules) and PrioritySort sorts the
// queue in its place; plugins nothing models are reported by every cycle as
// not evaluated; postBind-only plugins decide nothing.
func TestOutOfTreePlugins(t *testing.T) {
	tests := []struct {
		name, config     string
		wantOutOfTree    []OutOfTreePlugin
		wantNotEvaluated string
	}{
		{"scheduler-plugins' documented Coscheduling profile", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 10
`, []OutOfTreePlugin{{Name: "Coscheduling", Points: []string{"multiPoint", "queueSort"}, Modelled: "the coscheduling gang source's rules"}}, ""},
		{"a plugin of scheduler-plugins and one of a build's own", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: second
  plugins:
    multiPoint:
      enabled:
      - name: CapacityScheduling
    filter:
      enabled:
      - name: ExampleCorpGPUHealth
    postBind:
      enabled:
      - name: ExampleCorpAudit
`, []OutOfTreePlugin{
			{Name: "CapacityScheduling", Points: []string{"multiPoint"}},
			{Name: "ExampleCorpAudit", Points: []string{"postBind"}},
			{Name: "ExampleCorpGPUHealth", Points: []string{"filter"}},
		}, `profile "second" enables plugin(s) this build does not run, so what they decide is not evaluated: CapacityScheduling (multiPoint; scheduler-plugins'); ExampleCorpGPUHealth (filter; not a plugin of kube-scheduler v1.37 or scheduler-plugins v0.33.5)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := LoadProfile(writeConfig(t, tt.config), "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantOutOfTree, p.OutOfTree); diff != "" {
				t.Errorf("out-of-tree plugins (-want +got):\n%s", diff)
			}
			if got := p.NotEvaluated(); got != tt.wantNotEvaluated {
				t.Errorf("not evaluated:\n got %q\nwant %q", got, tt.wantNotEvaluated)
			}
			s, err := NewScheduler(&Snapshot{Nodes: []*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}}}}}, Options{Profile: p})
			if err != nil {
				t.Fatalf("the profile does not run: %v", err)
			}
			res, err := s.Schedule(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			if tt.wantNotEvaluated != "" {
				want = []string{tt.wantNotEvaluated}
			}
			if res.Verdict != VerdictScheduled || !slices.Equal(res.NotEvaluated, want) {
				t.Errorf("cycle: %s, not evaluated %q; want scheduled, %q", res.Verdict, res.NotEvaluated, want)
			}
		})
	}
}
