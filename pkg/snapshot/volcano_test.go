package snapshot

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// strictConf is a volcano-scheduler.conf that changes what Volcano's
// default configuration says: overcommit admits nothing beyond the cluster
// (overcommit-factor 1.0 instead of 1.2).
const strictConf = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: overcommit
    arguments:
      overcommit-factor: 1.0
  - name: predicates
  - name: proportion
`

func strictConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "volcano-system", Name: "volcano-scheduler-configmap", ResourceVersion: "7"},
		Data:       map[string]string{volcano.ConfigMapKey: strictConf},
	}
}

func overcommitFactor(t *testing.T, c *volcano.Config) float64 {
	t.Helper()
	if c == nil {
		t.Fatal("no Volcano configuration")
	}
	return c.PluginArguments("overcommit").Float64("overcommit-factor", -1)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// --volcano-config takes a volcano-scheduler.conf, or the ConfigMap that
// holds one as kubectl get -o yaml (or -o json) prints it; anything else is
// bad input, one line.
func TestReadVolcanoConfig(t *testing.T) {
	cmYAML := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: volcano-scheduler-configmap, namespace: volcano-system}\ndata:\n  volcano-scheduler.conf: |\n" +
		"    " + strings.ReplaceAll(strings.TrimSpace(strictConf), "\n", "\n    ") + "\n"
	cmJSON := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "vc", "namespace": "v"}, "data": {"volcano-scheduler.conf": "actions: enqueue\ntiers:\n- plugins:\n  - name: overcommit\n    arguments: {overcommit-factor: 1.0}\n"}}`
	tests := []struct {
		name, content string
		wantFactor    float64
		wantErr       string
	}{
		{name: "conf", content: strictConf, wantFactor: 1.0},
		{name: "ConfigMap as YAML", content: cmYAML, wantFactor: 1.0},
		{name: "ConfigMap as JSON", content: cmJSON, wantFactor: 1.0},
		{name: "ConfigMap without the key", content: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ns}\ndata: {other: a}\n",
			wantErr: "ConfigMap ns/x has no key volcano-scheduler.conf (it has other)"},
		{name: "another kind", content: "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n",
			wantErr: "a v1 Secret, not a volcano-scheduler.conf or a v1 ConfigMap holding one"},
		{name: "unknown action", content: "actions: \"enqueue, teleport\"\n",
			wantErr: `failed to find Action "teleport"`},
		{name: "not YAML", content: "tiers: [\n", wantErr: "not a volcano-scheduler.conf: yaml: line 1"},
		{name: "wrong types, several lines from yaml", content: "actions: enqueue\ntiers:\n- plugins: 3\n- plugins: 4\n",
			wantErr: "not a volcano-scheduler.conf: yaml: unmarshal errors: line 3: cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "conf.yaml", tt.content)
			c, err := ReadVolcanoConfig(path, nil)
			if tt.wantErr != "" {
				var input *InputError
				if !errors.As(err, &input) || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want one line, an InputError on %s with %q", err, path, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Source != "file "+path {
				t.Errorf("source %q, want %q", c.Source, "file "+path)
			}
			if got := overcommitFactor(t, c); got != tt.wantFactor {
				t.Errorf("overcommit-factor %v, want %v", got, tt.wantFactor)
			}
		})
	}
	c, err := ReadVolcanoConfig(Stdin, strings.NewReader(strictConf))
	if err != nil || c.Source != "stdin" || overcommitFactor(t, c) != 1.0 {
		t.Errorf("from stdin: %v, %v", c, err)
	}
	if _, err := ReadVolcanoConfig(filepath.Join(t.TempDir(), "none"), nil); err == nil || !strings.HasSuffix(err.Error(), ": no such file or directory") {
		t.Errorf("missing file: %v", err)
	}
}

func TestParseConfigMapName(t *testing.T) {
	if got, err := ParseConfigMapName("volcano/my-scheduler-configmap"); err != nil || got != (types.NamespacedName{Namespace: "volcano", Name: "my-scheduler-configmap"}) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "name", "/name", "ns/", "a/b/c", "Ns/x", "ns/X_y"} {
		if _, err := ParseConfigMapName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The live read GETs the scheduler's ConfigMap: found, its configuration
// (Source "ConfigMap NS/NAME"); missing, none (the default applies);
// refused, unknown, with why, and a stand-in the file keeps; found but not
// a configuration Volcano would load, unknown (loadSchedulerConf keeps the
// previous one).
func TestReadVolcanoConfigLive(t *testing.T) {
	name := DefaultVolcanoConfigMap
	invalid := strictConfigMap()
	invalid.Data[volcano.ConfigMapKey] = "actions: \"enqueue, teleport\"\n"
	noKey := strictConfigMap()
	noKey.Data = map[string]string{"other.conf": "x"}
	tests := []struct {
		name       string
		objects    []runtime.Object
		getErr     error
		wantSource string
		wantUnread string
		wantErr    string
		wantCM     bool
	}{
		{name: "found", objects: []runtime.Object{strictConfigMap()}, wantSource: "ConfigMap volcano-system/volcano-scheduler-configmap", wantCM: true},
		{name: "not found"},
		{name: "forbidden", getErr: apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, name.Name, errors.New("no")),
			wantUnread: "cannot get ConfigMap volcano-system/volcano-scheduler-configmap (Forbidden): the configuration Volcano's scheduler runs with is unknown; ask for get on configmaps in namespace volcano-system, or give it with --volcano-config",
			wantCM:     true},
		{name: "invalid", objects: []runtime.Object{invalid},
			wantUnread: `ConfigMap volcano-system/volcano-scheduler-configmap: failed to find Action "teleport" (Volcano knows enqueue, allocate, backfill, preempt, reclaim, shuffle, gangpreempt, gangreclaim): Volcano's scheduler keeps the configuration it ran with before (loadSchedulerConf), which the cluster does not show`,
			wantCM:     true},
		{name: "no key", objects: []runtime.Object{noKey},
			wantUnread: "ConfigMap volcano-system/volcano-scheduler-configmap has no key volcano-scheduler.conf (it has other.conf): Volcano's scheduler keeps the configuration it ran with before (loadSchedulerConf), which the cluster does not show",
			wantCM:     true},
		{name: "server error", getErr: apierrors.NewInternalError(errors.New("etcd")), wantErr: "getting ConfigMap volcano-system/volcano-scheduler-configmap: Internal error occurred: etcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(tt.objects...)
			if tt.getErr != nil {
				cs.PrependReactor("get", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tt.getErr })
			}
			r := &liveReader{ctx: context.Background(), b: newBuilder(), progress: &Progress{}}
			err := r.readVolcanoConfig(cs, name)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			snap := r.b.snapshot()
			source := ""
			if configSet(snap) != nil {
				source = configSet(snap).Source
				if f := overcommitFactor(t, configSet(snap)); f != 1.0 {
					t.Errorf("overcommit-factor %v, want 1.0", f)
				}
			}
			if source != tt.wantSource || configUnread(snap) != tt.wantUnread {
				t.Errorf("source %q, unread %q; want %q, %q", source, configUnread(snap), tt.wantSource, tt.wantUnread)
			}
			if (snap.VolcanoConfigMap != nil) != tt.wantCM {
				t.Errorf("ConfigMap kept: %v, want %v", snap.VolcanoConfigMap != nil, tt.wantCM)
			}
			if configSet(snap) == nil && tt.wantUnread == "" && configIn(snap) != volcano.Default() {
				t.Error("no ConfigMap, but Volcano() is not the default configuration")
			}
		})
	}
}

// Only a cluster that serves Volcano's kinds has its ConfigMap read.
func TestServesVolcano(t *testing.T) {
	cosched := served{custom: []schema.GroupVersionResource{{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}}}
	vc := served{custom: append(cosched.custom, schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "queues"})}
	if cosched.servesVolcano() || !vc.servesVolcano() {
		t.Errorf("servesVolcano: coscheduling only %v, with Volcano queues %v", cosched.servesVolcano(), vc.servesVolcano())
	}
}

// A snapshot file carries the scheduler's ConfigMap (only it): written,
// read back into VolcanoConfig (its Source says it came from the snapshot),
// and written again byte for byte. The stand-in of a refused read and an
// invalid ConfigMap read back as unknown, with the same why.
func TestVolcanoConfigRoundTrip(t *testing.T) {
	base, _, err := LoadFiles("../../examples/gpu-cluster.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	refused := refusedConfigMap(DefaultVolcanoConfigMap, "cannot get it (Forbidden)")
	invalid := strictConfigMap()
	invalid.Data[volcano.ConfigMapKey] = "tiers: [\n"
	for _, tt := range []struct {
		name       string
		cm         *corev1.ConfigMap
		wantFactor float64
		wantUnread string
	}{
		{name: "ConfigMap", cm: strictConfigMap(), wantFactor: 1.0},
		{name: "refused", cm: refused, wantUnread: "cannot get it (Forbidden)"},
		{name: "invalid", cm: invalid, wantUnread: "ConfigMap volcano-system/volcano-scheduler-configmap (from the snapshot PATH): not a volcano-scheduler.conf: yaml: line 1: did not find expected node content: Volcano's scheduler keeps"},
	} {
		for _, format := range []string{"yaml", "json"} {
			t.Run(tt.name+" "+format, func(t *testing.T) {
				snap := *base
				setVolcanoConfig(&snap, tt.cm, "ConfigMap volcano-system/volcano-scheduler-configmap")
				write := map[string]func(*bytes.Buffer, *schedule.Snapshot) error{
					"yaml": func(b *bytes.Buffer, s *schedule.Snapshot) error { return WriteYAML(b, s, false) },
					"json": func(b *bytes.Buffer, s *schedule.Snapshot) error { return WriteJSON(b, s, false) },
				}[format]
				var first bytes.Buffer
				if err := write(&first, &snap); err != nil {
					t.Fatal(err)
				}
				path := writeFile(t, "cluster."+format, first.String())
				back, warnings, err := LoadFiles(path, nil)
				if err != nil || len(warnings) > 0 {
					t.Fatalf("reading back: %v, warnings %v", err, warnings)
				}
				if diff := cmp.Diff(tt.cm, back.VolcanoConfigMap); diff != "" {
					t.Errorf("ConfigMap read back (-written +read):\n%s", diff)
				}
				if tt.wantUnread != "" {
					wantUnread := strings.Replace(tt.wantUnread, "PATH", path, 1)
					if configSet(back) != nil || !strings.HasPrefix(configUnread(back), wantUnread) {
						t.Errorf("read back: config %v, unread %q; want none, %q", configSet(back), configUnread(back), wantUnread)
					}
				} else {
					want := "ConfigMap volcano-system/volcano-scheduler-configmap (from the snapshot " + path + ")"
					if configSet(back) == nil || configSet(back).Source != want || configUnread(back) != "" {
						t.Fatalf("read back: config %+v, unread %q; want source %q", configSet(back), configUnread(back), want)
					}
					if f := overcommitFactor(t, configSet(back)); f != tt.wantFactor {
						t.Errorf("overcommit-factor %v, want %v", f, tt.wantFactor)
					}
				}
				var second bytes.Buffer
				if err := write(&second, back); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(first.String(), second.String()); diff != "" {
					t.Errorf("written again (-first +second):\n%s", diff)
				}
			})
		}
	}
}

// Of a file's ConfigMaps only the scheduler's is read (the one
// --volcano-config-map names); the others are ignored as before, and one
// that holds a volcano-scheduler.conf under another name is pointed out.
func TestVolcanoConfigMapInFile(t *testing.T) {
	node := "- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: '1'}}}\n"
	other := "- {apiVersion: v1, kind: ConfigMap, metadata: {name: kube-root-ca.crt, namespace: default}, data: {ca.crt: x}}\n"
	custom := "- {apiVersion: v1, kind: ConfigMap, metadata: {name: sched, namespace: volcano}, data: {volcano-scheduler.conf: 'actions: enqueue'}}\n"
	path := writeFile(t, "cluster.yaml", "apiVersion: v1\nkind: List\nitems:\n"+node+other+custom)

	snap, warnings, err := LoadFiles(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ignored 2 object(s) of kinds the scheduler does not read: 2 ConfigMap",
		"the snapshot holds ConfigMap(s) volcano/sched with a volcano-scheduler.conf, not volcano-system/volcano-scheduler-configmap where Volcano's configuration is read from: Volcano's default configuration is assumed (--volcano-config-map NAMESPACE/NAME reads another)"}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if configSet(snap) != nil || snap.VolcanoConfigMap != nil || configIn(snap) != volcano.Default() {
		t.Errorf("configuration %+v, want Volcano's default", configSet(snap))
	}

	snap, warnings, err = LoadFilesWith(path, nil, FileOptions{VolcanoConfigMap: types.NamespacedName{Namespace: "volcano", Name: "sched"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ignored 1 object(s) of kinds the scheduler does not read: 1 ConfigMap"}, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if configSet(snap) == nil || configSet(snap).Source != "ConfigMap volcano/sched (from the snapshot "+path+")" || !configSet(snap).HasAction("enqueue") {
		t.Errorf("configuration %+v, want volcano/sched's", configSet(snap))
	}
}

// configSet is the configuration set on snap, nil for none.
func configSet(snap *schedule.Snapshot) *volcano.Config {
	if sc, ok := snap.Systems[volcano.SystemsKey].(*volcano.SchedulerConfig); ok {
		return sc.Config
	}
	return nil
}

// configUnread is why the configuration could not be read.
func configUnread(snap *schedule.Snapshot) string {
	_, why := volcano.ConfigIn(snap.Systems)
	return why
}

// configIn is the configuration Volcano runs with on snap.
func configIn(snap *schedule.Snapshot) *volcano.Config {
	c, _ := volcano.ConfigIn(snap.Systems)
	return c
}
