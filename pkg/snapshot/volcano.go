package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// Where Volcano's scheduler configuration comes from (docs/design.md#volcanos-configuration):
// a file the user gives (ReadVolcanoConfig), else the scheduler's
// ConfigMap, read by a live snapshot of a cluster that serves Volcano and
// carried by snapshot files, else Volcano's default configuration.

// DefaultVolcanoConfigMap is the ConfigMap the Volcano chart installs the
// scheduler's configuration in.
var DefaultVolcanoConfigMap = types.NamespacedName{Namespace: volcano.DefaultConfigMapNamespace, Name: volcano.DefaultConfigMapName}

// UnreadableAnnotation marks the stand-in for an object a live read was not
// allowed to read, which a snapshot file carries in its place: its value
// says why. Only the scheduler's ConfigMap has one.
const UnreadableAnnotation = "kubectl-gang.github.io/unreadable"

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// ParseConfigMapName reads NAMESPACE/NAME, as --volcano-config-map takes it.
func ParseConfigMapName(s string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("%q is not NAMESPACE/NAME", s)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return types.NamespacedName{}, fmt.Errorf("namespace %q: %s", ns, errs[0])
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return types.NamespacedName{}, fmt.Errorf("name %q: %s", name, errs[0])
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// ReadVolcanoConfig reads a volcano-scheduler.conf from path (Stdin: from
// stdin), or the ConfigMap that holds one under volcano.ConfigMapKey (what
// kubectl get configmap -o yaml prints). Its Source is "file PATH". What
// cannot be read or parsed is an *InputError.
func ReadVolcanoConfig(path string, stdin io.Reader) (*volcano.Config, error) {
	where, source := path, "file "+path
	var (
		data []byte
		err  error
	)
	if path == Stdin {
		where, source = "<stdin>", "stdin"
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &InputError{Source: where, Err: errors.New("no such file or directory")}
	}
	if err != nil {
		return nil, &InputError{Source: where, Err: err}
	}
	text := string(data)
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   metav1.ObjectMeta `json:"metadata"`
		Data       map[string]string `json:"data"`
	}
	// A volcano-scheduler.conf that does not read as this header (YAML
	// sigs.k8s.io cannot convert) gets volcano.Parse's own error below.
	if yaml.Unmarshal(data, &head) == nil && head.Kind != "" {
		if head.Kind != "ConfigMap" || head.APIVersion != "v1" {
			return nil, &InputError{Source: where, Err: fmt.Errorf("a %s, not a volcano-scheduler.conf or a v1 ConfigMap holding one", strings.TrimSpace(head.APIVersion+" "+head.Kind))}
		}
		conf, ok := head.Data[volcano.ConfigMapKey]
		if !ok {
			return nil, &InputError{Source: where, Err: fmt.Errorf("ConfigMap %s has no key %s%s", objectName(&head.Metadata), volcano.ConfigMapKey, keysOf(head.Data))}
		}
		text = conf
	}
	c, err := volcano.Parse([]byte(strings.TrimSpace(text)), source)
	if err != nil {
		return nil, &InputError{Source: where, Err: errors.New(strings.TrimPrefix(flatten(err.Error()), source+": "))}
	}
	return c, nil
}

// keysOf lists a ConfigMap's keys for a message.
func keysOf(data map[string]string) string {
	if len(data) == 0 {
		return " (it has no data)"
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return " (it has " + strings.Join(keys, ", ") + ")"
}

// flatten puts a multi-line message (yaml's "unmarshal errors:" list) on
// one line.
func flatten(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}

// setVolcanoConfig records the scheduler's ConfigMap in snap, as read
// (source says from where), and the configuration it holds, parsed, or,
// when it cannot be used, why (volcano.SetConfigIn, snap.Systems).
func setVolcanoConfig(snap *schedule.Snapshot, cm *corev1.ConfigMap, source string) {
	snap.VolcanoConfigMap = cm
	cfg, unread := volcanoConfigOf(cm, source)
	volcano.SetConfigIn(&snap.Systems, cfg, unread)
}

// volcanoConfigOf is the configuration cm holds, or why it cannot be known.
//
// A ConfigMap whose volcano-scheduler.conf is missing or does not parse is
// not the default configuration: Volcano's scheduler, reading the file it is
// mounted as (pkg/scheduler/scheduler.go, loadSchedulerConf, on start and on
// every change of the file), logs the error and keeps the configuration it
// had, the previous file's or, at start, its built-in DefaultSchedulerConf
// (which is not the chart's), and with --disable-default-scheduler-config it
// exits. Which of them runs the cluster does not show, so the configuration
// is unknown.
func volcanoConfigOf(cm *corev1.ConfigMap, source string) (*volcano.Config, string) {
	if why, ok := cm.Annotations[UnreadableAnnotation]; ok {
		return nil, why
	}
	keeps := "Volcano's scheduler keeps the configuration it ran with before (loadSchedulerConf), which the cluster does not show"
	data, ok := cm.Data[volcano.ConfigMapKey]
	if !ok {
		return nil, fmt.Sprintf("%s has no key %s%s: %s", source, volcano.ConfigMapKey, keysOf(cm.Data), keeps)
	}
	c, err := volcano.Parse([]byte(strings.TrimSpace(data)), source)
	if err != nil {
		return nil, fmt.Sprintf("%s: %s", flatten(err.Error()), keeps)
	}
	return c, ""
}

// refusedConfigMap is the stand-in a snapshot keeps for the scheduler's
// ConfigMap it was not allowed to read, so that a file says so too.
func refusedConfigMap(name types.NamespacedName, why string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name,
		Annotations: map[string]string{UnreadableAnnotation: why}}}
}

// servesVolcano reports whether discovery found Volcano's kinds.
func (s served) servesVolcano() bool {
	return slices.ContainsFunc(s.custom, func(gvr schema.GroupVersionResource) bool { return gvr.Group == volcano.Group })
}

// readVolcanoConfig GETs the scheduler's ConfigMap (one request) into the
// snapshot: found, its configuration; not found, none (Volcano's default
// applies); refused, the snapshot's configuration says so and it keeps a
// stand-in. Any other error is the read's.
func (r *liveReader) readVolcanoConfig(clientset kubernetes.Interface, name types.NamespacedName) error {
	cm, err := clientset.CoreV1().ConfigMaps(name.Namespace).Get(r.ctx, name.Name, metav1.GetOptions{})
	r.progress.ListsDone.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	source := "ConfigMap " + name.String()
	switch {
	case err == nil:
		normalize(&cm.ObjectMeta, &cm.TypeMeta)
		setVolcanoConfig(&r.b.snap, cm, source)
	case apierrors.IsNotFound(err):
	case isRefused(err):
		why := fmt.Sprintf("cannot get %s (%v): the configuration Volcano's scheduler runs with is unknown; "+
			"ask for get on configmaps in namespace %s, or give it with --volcano-config", source, apierrors.ReasonForError(err), name.Namespace)
		setVolcanoConfig(&r.b.snap, refusedConfigMap(name, why), source)
	default:
		return fmt.Errorf("getting %s: %w", source, err)
	}
	return nil
}

// addConfigMap keeps a ConfigMap of a snapshot file that may be Volcano's
// scheduler's (it has the key, or is a stand-in); LoadFilesWith picks it.
func (b *builder) addConfigMap(cm *corev1.ConfigMap) {
	_, conf := cm.Data[volcano.ConfigMapKey]
	_, stand := cm.Annotations[UnreadableAnnotation]
	if !conf && !stand {
		b.ignore(configMapGVK)
		return
	}
	normalize(&cm.ObjectMeta, &cm.TypeMeta)
	put(b, &b.configMaps, objectKey{kind: "ConfigMap", namespace: cm.Namespace, name: cm.Name}, cm)
}

// pickVolcanoConfig sets the snapshot's Volcano configuration from the
// file's ConfigMap named name; the others that hold a
// volcano-scheduler.conf are named in a warning.
func (b *builder) pickVolcanoConfig(snap *schedule.Snapshot, name types.NamespacedName, file string) []string {
	var others []string
	for _, cm := range b.configMaps {
		if cm.Namespace == name.Namespace && cm.Name == name.Name {
			setVolcanoConfig(snap, cm, fmt.Sprintf("ConfigMap %s (from the snapshot %s)", name, file))
			continue
		}
		others = append(others, cm.Namespace+"/"+cm.Name)
	}
	if len(others) == 0 {
		return nil
	}
	b.ignored[configMapGVK.Kind] += len(others)
	if snap.VolcanoConfigMap != nil {
		return nil
	}
	return []string{fmt.Sprintf("the snapshot holds ConfigMap(s) %s with a %s, not %s where Volcano's configuration is read from: "+
		"Volcano's default configuration is assumed (--volcano-config-map NAMESPACE/NAME reads another)",
		named(others[:min(len(others), maxNamed)], len(others)), volcano.ConfigMapKey, name)}
}
