package schedule

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// DefaultSchedulerName is the profile kube-scheduler uses for pods that name no scheduler.
const DefaultSchedulerName = "default-scheduler"

// Profile is one scheduling profile: which plugins run where, with which
// score weights and arguments, after merging onto the default profile as
// kube-scheduler does.
type Profile struct {
	Name    string
	Plugins *configv1.Plugins
	// Args are the typed plugin arguments from pluginConfig, by plugin name.
	Args map[string]runtime.Object
	// OutOfTree are the plugins the profile enables that kube-scheduler
	// v1.37 does not have (scheduler-plugins', a build's own), taken out of
	// Plugins (outoftree.go).
	OutOfTree []OutOfTreePlugin
	// notEvaluated is what every cycle in this profile reports as not
	// evaluated: the out-of-tree plugins nothing models.
	notEvaluated string
	// order, when set, replaces kube-scheduler's scoring and choice of
	// node with another scheduler's (NodeOrder).
	order NodeOrder
}

// NotEvaluated words the plugins of the profile the pipeline does not run
// and nothing models; "" when there are none.
func (p *Profile) NotEvaluated() string { return p.notEvaluated }

// ConfigError is a scheduler configuration kubectl-gang cannot use; commands
// report it as bad input (exit code 2).
type ConfigError struct {
	Source string
	Err    error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%s: %v", e.Source, e.Err) }

func (e *ConfigError) Unwrap() error { return e.Err }

// defaultProfileYAML is plugins.yaml: kube-scheduler v1.37's default profile
// as a KubeSchedulerConfiguration, embedded in the binary.
//
//go:embed plugins.yaml
var defaultProfileYAML []byte

// DefaultProfile returns kube-scheduler v1.37's default profile, from the
// embedded plugins.yaml.
func DefaultProfile() (*Profile, error) {
	profiles, err := parseConfig("plugins.yaml", defaultProfileYAML, nil)
	if err != nil {
		return nil, err
	}
	return profiles[0], nil
}

// LoadProfile reads a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)
// and returns the profile called name, or the first profile when name is
// empty. Its plugins are merged onto the default profile.
func LoadProfile(path, name string) (*Profile, error) {
	profiles, err := LoadProfiles(path)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return profiles[0], nil
	}
	var names []string
	for _, p := range profiles {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return nil, &ConfigError{Source: path, Err: fmt.Errorf("no profile %q; the file has %s", name, strings.Join(names, ", "))}
}

// LoadProfiles reads every profile of a KubeSchedulerConfiguration file, in
// the file's order, each merged onto the defaults as LoadProfile merges it.
func LoadProfiles(path string) ([]*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{Source: path, Err: errors.Unwrap(err)}
	}
	def, err := DefaultProfile()
	if err != nil {
		return nil, err
	}
	return parseConfig(path, data, def.Plugins)
}

// parseConfig decodes a configuration strictly, so a misspelt field is an
// error naming it, and merges each profile's plugins onto defaults (nil for
// the default profile itself).
func parseConfig(source string, data []byte, defaults *configv1.Plugins) ([]*Profile, error) {
	var cfg configv1.KubeSchedulerConfiguration
	if err := decodeStrict(data, &cfg); err != nil {
		return nil, &ConfigError{Source: source, Err: err}
	}
	if cfg.APIVersion != configv1.SchemeGroupVersion.String() || cfg.Kind != "KubeSchedulerConfiguration" {
		return nil, &ConfigError{Source: source, Err: fmt.Errorf("want apiVersion %s and kind KubeSchedulerConfiguration, got %q and %q",
			configv1.SchemeGroupVersion, cfg.APIVersion, cfg.Kind)}
	}
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = []configv1.KubeSchedulerProfile{{}}
	}
	var out []*Profile
	seen := map[string]bool{}
	for i, p := range cfg.Profiles {
		field := fmt.Sprintf("profiles[%d]", i)
		name := DefaultSchedulerName
		if p.SchedulerName != nil && *p.SchedulerName != "" {
			name = *p.SchedulerName
		}
		if seen[name] {
			return nil, &ConfigError{Source: source, Err: fmt.Errorf("%s.schedulerName: duplicate profile %q", field, name)}
		}
		seen[name] = true
		plugins := p.Plugins
		if defaults != nil {
			plugins = mergePlugins(defaults, p.Plugins)
		}
		if plugins == nil {
			plugins = &configv1.Plugins{}
		}
		args := map[string]runtime.Object{}
		for j, pc := range p.PluginConfig {
			pcField := fmt.Sprintf("%s.pluginConfig[%d]", field, j)
			if _, dup := args[pc.Name]; dup {
				return nil, &ConfigError{Source: source, Err: fmt.Errorf("%s.name: %q is configured twice", pcField, pc.Name)}
			}
			obj, err := decodeArgs(pc.Name, pc.Args.Raw)
			if err != nil {
				return nil, &ConfigError{Source: source, Err: fmt.Errorf("%s.args: %w", pcField, err)}
			}
			args[pc.Name] = obj
		}
		outOfTree, err := separateOutOfTree(plugins, field)
		if err != nil {
			return nil, &ConfigError{Source: source, Err: err}
		}
		if err := checkPluginNames(plugins, field); err != nil {
			return nil, &ConfigError{Source: source, Err: err}
		}
		out = append(out, &Profile{Name: name, Plugins: plugins, Args: args, OutOfTree: outOfTree, notEvaluated: notEvaluatedOutOfTree(name, outOfTree)})
	}
	return out, nil
}

// cleanYAMLError drops converter prefixes so the message names the field.
func cleanYAMLError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "error unmarshaling JSON: while decoding JSON: ")
	return errors.New(msg)
}

// decodeArgs decodes a plugin's arguments into their typed struct. Plugins
// without arguments accept none.
func decodeArgs(plugin string, raw []byte) (runtime.Object, error) {
	var obj runtime.Object
	switch plugin {
	case "NodeResourcesFit":
		obj = &configv1.NodeResourcesFitArgs{}
	case "NodeResourcesBalancedAllocation":
		obj = &configv1.NodeResourcesBalancedAllocationArgs{}
	case "PodTopologySpread":
		obj = &configv1.PodTopologySpreadArgs{}
	case "InterPodAffinity":
		obj = &configv1.InterPodAffinityArgs{}
	case "NodeAffinity":
		obj = &configv1.NodeAffinityArgs{}
	case "DefaultPreemption":
		obj = &configv1.DefaultPreemptionArgs{}
	case "VolumeBinding":
		obj = &configv1.VolumeBindingArgs{}
	default:
		if _, ok := registry[plugin]; !ok {
			// Another build's plugin (outoftree.go).
			return nil, checkOutOfTreeArgs(plugin, raw)
		}
		return nil, nil
	}
	if len(raw) == 0 {
		return obj, nil
	}
	if err := decodeStrict(raw, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// decodeStrict decodes YAML or JSON into obj case-sensitively; an unknown or
// duplicate field is an error naming its path (profiles[0].plugins.scor).
func decodeStrict(data []byte, obj any) error {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return cleanYAMLError(err)
	}
	strict, err := sigsjson.UnmarshalStrict(j, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return strict[0]
	}
	return nil
}

// checkPluginNames rejects plugins this build does not have (none are left
// once separateOutOfTree has taken them out: a safety net).
func checkPluginNames(p *configv1.Plugins, field string) error {
	for point, set := range extensionPointSets(p) {
		for i, pl := range set.Enabled {
			if _, ok := registry[pl.Name]; !ok {
				return fmt.Errorf("%s.plugins.%s.enabled[%d]: unknown plugin %q", field, point, i, pl.Name)
			}
		}
	}
	return nil
}

// extensionPointSets returns the plugin sets by their YAML names.
func extensionPointSets(p *configv1.Plugins) map[string]*configv1.PluginSet {
	return map[string]*configv1.PluginSet{
		"multiPoint": &p.MultiPoint, "preEnqueue": &p.PreEnqueue, "queueSort": &p.QueueSort,
		"preFilter": &p.PreFilter, "filter": &p.Filter, "postFilter": &p.PostFilter,
		"preScore": &p.PreScore, "score": &p.Score, "reserve": &p.Reserve, "permit": &p.Permit,
		"preBind": &p.PreBind, "bind": &p.Bind, "postBind": &p.PostBind,
	}
}

// mergePlugins applies a profile's plugin sets onto the defaults, per
// extension point, as kube-scheduler does.
func mergePlugins(defaults, custom *configv1.Plugins) *configv1.Plugins {
	out := defaults.DeepCopy()
	if custom == nil {
		return out
	}
	dst, src := extensionPointSets(out), extensionPointSets(custom)
	for point, set := range dst {
		*set = mergePluginSet(*set, *src[point])
	}
	return out
}

// mergePluginSet: disabled plugins (or "*") leave the defaults; a default
// that the custom set enables again is replaced in place, keeping its order;
// other custom plugins are appended.
func mergePluginSet(def, custom configv1.PluginSet) configv1.PluginSet {
	disabled := map[string]bool{}
	var out configv1.PluginSet
	for _, d := range custom.Disabled {
		out.Disabled = append(out.Disabled, configv1.Plugin{Name: d.Name})
		disabled[d.Name] = true
	}
	for _, d := range def.Disabled {
		out.Disabled = append(out.Disabled, configv1.Plugin{Name: d.Name})
		disabled[d.Name] = true
	}
	replaced := map[int]bool{}
	if !disabled["*"] {
		for _, p := range def.Enabled {
			if disabled[p.Name] {
				continue
			}
			if i := slices.IndexFunc(custom.Enabled, func(c configv1.Plugin) bool { return c.Name == p.Name }); i >= 0 {
				p = custom.Enabled[i]
				replaced[i] = true
			}
			out.Enabled = append(out.Enabled, p)
		}
	}
	for i, p := range custom.Enabled {
		if !replaced[i] {
			out.Enabled = append(out.Enabled, p)
		}
	}
	return out
}
