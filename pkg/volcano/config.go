package volcano

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v2"
)

// ConfigMapKey is the key of the scheduler's ConfigMap that holds its
// configuration (the chart mounts it as /volcano.scheduler/volcano-scheduler.conf).
const ConfigMapKey = "volcano-scheduler.conf"

// The ConfigMap the Volcano chart installs the scheduler's configuration in
// ({{ .Release.Name }}-scheduler-configmap, release "volcano", namespace
// volcano-system).
const (
	DefaultConfigMapNamespace = "volcano-system"
	DefaultConfigMapName      = "volcano-scheduler-configmap"
)

// ChartDefaultSource names the configuration used when none is given.
const ChartDefaultSource = "Volcano's default configuration (the chart's volcano-scheduler.conf)"

// ChartDefault is the volcano-scheduler.conf the Volcano chart installs
// (installer/helm/chart/volcano/config/volcano-scheduler.conf): what a
// Volcano installation runs unless its operator changed it.
const ChartDefault = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
`

// knownActions are the actions Volcano's scheduler registers
// (pkg/scheduler/actions/factory.go); any other name fails its
// UnmarshalSchedulerConf.
var knownActions = []string{"enqueue", "allocate", "backfill", "preempt", "reclaim", "shuffle", "gangpreempt", "gangreclaim"}

// Config is a volcano-scheduler.conf as Volcano's scheduler reads it
// (conf.SchedulerConfiguration, UnmarshalSchedulerConf), with every plugin
// option defaulted (plugins.ApplyPluginConfDefaults).
type Config struct {
	// Source says where the configuration came from: a file, a ConfigMap,
	// or ChartDefaultSource.
	Source string `yaml:"-"`
	// Actions are the session's actions, in order.
	Actions []string `yaml:"-"`
	// ActionsLine is the actions field as written.
	ActionsLine    string          `yaml:"actions"`
	Tiers          []Tier          `yaml:"tiers"`
	Configurations []Configuration `yaml:"configurations"`
}

// Tier is one tier of plugins.
type Tier struct {
	Plugins []PluginOption `yaml:"plugins"`
}

// Configuration holds an action's arguments.
type Configuration struct {
	Name      string    `yaml:"name"`
	Arguments Arguments `yaml:"arguments"`
}

// PluginOption is one plugin of a tier and the extension points it is
// enabled for (Volcano's conf.PluginOption; an unset point is enabled).
type PluginOption struct {
	Name                string    `yaml:"name"`
	EnabledJobOrder     *bool     `yaml:"enableJobOrder"`
	EnabledHierarchy    *bool     `yaml:"enableHierarchy"`
	EnabledJobReady     *bool     `yaml:"enableJobReady"`
	EnabledJobPipelined *bool     `yaml:"enableJobPipelined"`
	EnabledTaskOrder    *bool     `yaml:"enableTaskOrder"`
	EnabledPreemptable  *bool     `yaml:"enablePreemptable"`
	EnabledReclaimable  *bool     `yaml:"enableReclaimable"`
	EnablePreemptive    *bool     `yaml:"enablePreemptive"`
	EnabledQueueOrder   *bool     `yaml:"enableQueueOrder"`
	EnabledPredicate    *bool     `yaml:"enablePredicate"`
	EnabledBestNode     *bool     `yaml:"enableBestNode"`
	EnabledNodeOrder    *bool     `yaml:"enableNodeOrder"`
	EnabledJobEnqueued  *bool     `yaml:"enableJobEnqueued"`
	EnabledJobStarving  *bool     `yaml:"enableJobStarving"`
	EnabledOverused     *bool     `yaml:"enabledOverused"`
	EnabledAllocatable  *bool     `yaml:"enabledAllocatable"`
	Arguments           Arguments `yaml:"arguments"`
}

// Point names an extension point of a plugin, for Config.Enabled.
type Point int

// The extension points this model asks about.
const (
	PointJobReady Point = iota
	PointJobEnqueued
	PointOverused
	PointAllocatable
	PointPredicate
	PointNodeOrder
	PointBestNode
	PointTaskOrder
	PointJobOrder
	PointQueueOrder
	PointHierarchy
)

func (p *PluginOption) point(pt Point) *bool {
	switch pt {
	case PointJobReady:
		return p.EnabledJobReady
	case PointJobEnqueued:
		return p.EnabledJobEnqueued
	case PointOverused:
		return p.EnabledOverused
	case PointAllocatable:
		return p.EnabledAllocatable
	case PointPredicate:
		return p.EnabledPredicate
	case PointNodeOrder:
		return p.EnabledNodeOrder
	case PointBestNode:
		return p.EnabledBestNode
	case PointTaskOrder:
		return p.EnabledTaskOrder
	case PointJobOrder:
		return p.EnabledJobOrder
	case PointQueueOrder:
		return p.EnabledQueueOrder
	case PointHierarchy:
		return p.EnabledHierarchy
	}
	return nil
}

// Arguments are a plugin's or an action's arguments, typed as Volcano's
// YAML decoder types them (an integer is an int, a decimal a float64).
type Arguments map[string]any

// Float64 is Volcano's Arguments.GetFloat64: the key's value when it is a
// float64 or an int, else def.
func (a Arguments) Float64(key string, def float64) float64 {
	switch v := a[key].(type) {
	case float64:
		return v
	case int:
		return float64(v)
	}
	return def
}

// Int is Volcano's Arguments.GetInt: the key's value when it is an int,
// else def (a decimal is not taken).
func (a Arguments) Int(key string, def int) int {
	if v, ok := a[key].(int); ok {
		return v
	}
	return def
}

// Bool is Volcano's Arguments.GetBool: a bool, or a string strconv.ParseBool takes.
func (a Arguments) Bool(key string, def bool) bool {
	switch v := a[key].(type) {
	case bool:
		return v
	case string:
		switch strings.ToLower(v) {
		case "1", "t", "true":
			return true
		case "0", "f", "false":
			return false
		}
	}
	return def
}

// String is Volcano's Arguments.GetString.
func (a Arguments) String(key, def string) string {
	if v, ok := a[key].(string); ok {
		return v
	}
	return def
}

// Default is ChartDefault, parsed; one value shared by every caller, not
// to be changed.
var Default = sync.OnceValue(func() *Config {
	c, err := Parse([]byte(ChartDefault), ChartDefaultSource)
	if err != nil {
		panic(err) // a constant
	}
	return c
})

// Parse reads a volcano-scheduler.conf as Volcano's UnmarshalSchedulerConf
// does: YAML, unknown fields ignored, every action a known one, proportion
// and a hierarchical drf not both in one tier, and every plugin option
// defaulted to enabled. source says where it came from, for the output.
func Parse(data []byte, source string) (*Config, error) {
	c := &Config{Source: source}
	if err := yaml.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("%s: not a volcano-scheduler.conf: %w", source, err)
	}
	for _, name := range strings.Split(c.ActionsLine, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(knownActions, name) {
			return nil, fmt.Errorf("%s: failed to find Action %q (Volcano knows %s)", source, name, strings.Join(knownActions, ", "))
		}
		c.Actions = append(c.Actions, name)
	}
	for i := range c.Tiers {
		hdrf, proportion := false, false
		for j := range c.Tiers[i].Plugins {
			p := &c.Tiers[i].Plugins[j]
			if p.Name == "drf" && p.EnabledHierarchy != nil && *p.EnabledHierarchy {
				hdrf = true
			}
			if p.Name == "proportion" {
				proportion = true
			}
			for _, f := range []**bool{&p.EnabledJobOrder, &p.EnabledJobReady, &p.EnabledJobPipelined, &p.EnabledTaskOrder,
				&p.EnabledPreemptable, &p.EnabledReclaimable, &p.EnablePreemptive, &p.EnabledQueueOrder, &p.EnabledPredicate,
				&p.EnabledBestNode, &p.EnabledNodeOrder, &p.EnabledJobEnqueued, &p.EnabledJobStarving, &p.EnabledOverused,
				&p.EnabledAllocatable} {
				if *f == nil {
					t := true
					*f = &t
				}
			}
		}
		if hdrf && proportion {
			return nil, fmt.Errorf("%s: proportion and drf with hierarchy enabled conflicts", source)
		}
	}
	return c, nil
}

// HasAction reports whether the session runs the action.
func (c *Config) HasAction(name string) bool { return slices.Contains(c.Actions, name) }

// Plugin returns the first option of the named plugin in the tiers, or nil.
func (c *Config) Plugin(name string) *PluginOption {
	for i := range c.Tiers {
		for j := range c.Tiers[i].Plugins {
			if c.Tiers[i].Plugins[j].Name == name {
				return &c.Tiers[i].Plugins[j]
			}
		}
	}
	return nil
}

// Enabled reports whether the named plugin is configured with the
// extension point enabled (Volcano's isEnabled on that field; the
// hierarchy point is off unless set).
func (c *Config) Enabled(name string, pt Point) bool {
	p := c.Plugin(name)
	if p == nil {
		return false
	}
	f := p.point(pt)
	return f != nil && *f
}

// PluginArguments are the named plugin's arguments (nil when it is not configured).
func (c *Config) PluginArguments(name string) Arguments {
	if p := c.Plugin(name); p != nil {
		return p.Arguments
	}
	return nil
}

// ActionArguments are an action's arguments from the configurations section
// (framework.GetArgOfActionFromConf).
func (c *Config) ActionArguments(name string) Arguments {
	for _, conf := range c.Configurations {
		if conf.Name == name {
			return conf.Arguments
		}
	}
	return nil
}
