package volcano

import (
	"strings"
	"testing"
)

// The configuration as Volcano's UnmarshalSchedulerConf (pkg/scheduler/util.go)
// reads it: plugin options default to enabled (ApplyPluginConfDefaults), an
// explicit false stays, arguments keep the YAML decoder's types
// (framework.Arguments.GetFloat64 takes an int, GetInt no decimal).
func TestParse(t *testing.T) {
	c, err := Parse([]byte(`actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: gang
    enableJobReady: false
- plugins:
  - name: overcommit
    arguments:
      overcommit-factor: 2
  - name: capacity
    enableHierarchy: true
  - name: binpack
    arguments:
      binpack.weight: 10.5
      binpack.cpu: 3
unknownField: ignored
`), "file x")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Actions, ","); got != "enqueue,allocate,backfill" {
		t.Errorf("actions %q", got)
	}
	if !c.HasAction("enqueue") || c.HasAction("preempt") {
		t.Errorf("HasAction wrong")
	}
	if c.Enabled("gang", PointJobReady) || !c.Enabled("gang", PointJobEnqueued) {
		t.Errorf("gang's points: JobReady must be off, JobEnqueued on")
	}
	if !c.Enabled("capacity", PointHierarchy) || c.Enabled("overcommit", PointHierarchy) {
		t.Errorf("hierarchy is off unless set")
	}
	if c.Enabled("proportion", PointAllocatable) {
		t.Errorf("a plugin not configured is not enabled")
	}
	if f := c.PluginArguments("overcommit").Float64("overcommit-factor", 1.2); f != 2 {
		t.Errorf("overcommit-factor %v, want 2 (an int is taken as a float)", f)
	}
	if w := c.PluginArguments("binpack").Int("binpack.weight", 1); w != 1 {
		t.Errorf("binpack.weight %v, want the default 1: GetInt takes no decimal", w)
	}
	if w := c.PluginArguments("binpack").Int("binpack.cpu", 1); w != 3 {
		t.Errorf("binpack.cpu %v, want 3", w)
	}
}

func TestParseRefuses(t *testing.T) {
	for conf, want := range map[string]string{
		`actions: "enqueue, alocate"`: `failed to find Action "alocate"`,
		"actions: \"allocate\"\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n  - name: proportion\n": "proportion and drf with hierarchy enabled conflicts",
		"actions: [allocate]": "not a volcano-scheduler.conf",
	} {
		_, err := Parse([]byte(conf), "f")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", conf, err, want)
		}
	}
}

func TestDefault(t *testing.T) {
	c := Default()
	for _, p := range []string{"priority", "gang", "conformance", "overcommit", "drf", "predicates", "proportion", "nodeorder", "binpack"} {
		if c.Plugin(p) == nil {
			t.Errorf("the chart's configuration has %s", p)
		}
	}
	if !c.HasAction("enqueue") || c.Source != ChartDefaultSource {
		t.Errorf("default: actions %v, source %q", c.Actions, c.Source)
	}
}
