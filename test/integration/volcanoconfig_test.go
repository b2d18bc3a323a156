package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	vcwing "github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
	"github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// strictVolcanoConf changes what Volcano's default configuration says:
// overcommit admits nothing beyond the cluster (1.0 instead of 1.2).
const strictVolcanoConf = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
    arguments:
      overcommit-factor: 1.0
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
`

// volcanoConfigMap creates the scheduler's ConfigMap namespace/name holding
// conf (and the namespace), deleted when the test ends: the other tests
// of the package read the same cluster.
func (f *gangFixture) volcanoConfigMap(namespace, name, conf string) {
	f.t.Helper()
	cs := env.Clientset()
	if _, err := cs.CoreV1().Namespaces().Create(f.ctx, testutil.MakeNamespace(namespace), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		f.t.Fatal(err)
	}
	_, err := cs.CoreV1().ConfigMaps(namespace).Create(f.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
		Data: map[string]string{volcano.ConfigMapKey: conf}}, metav1.CreateOptions{})
	f.must(err)
	f.t.Cleanup(func() {
		_ = cs.CoreV1().ConfigMaps(namespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// volcanoGang creates a Volcano PodGroup vc of two members that fit.
func (f *gangFixture) volcanoGang() {
	f.t.Helper()
	f.nodes(1)
	f.createObject(volcanoPodGroups, testutil.MakeVolcanoPodGroup(f.ns, "vc", 2).Obj())
	f.create(f.pod("vc-0", testutil.Res{"cpu": "1"}).VolcanoGroup("vc").Obj())
	f.create(f.pod("vc-1", testutil.Res{"cpu": "1"}).VolcanoGroup("vc").Obj())
}

// volcanoConfigurationJSON reads a verb's -o json volcanoConfiguration.
func volcanoConfigurationJSON(t *testing.T, code int, out, stderr string) (source, unread string) {
	t.Helper()
	if code == cmd.ExitError || code == cmd.ExitUsage {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var obj struct {
		VolcanoConfiguration struct{ Source, Unread string } `json:"volcanoConfiguration"`
	}
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("not JSON (%v): %s", err, out)
	}
	return obj.VolcanoConfiguration.Source, obj.VolcanoConfiguration.Unread
}

// The live read takes Volcano's configuration from the scheduler's
// ConfigMap in the cluster: its content arrives parsed (overcommit-factor
// 1.0, not the default's 1.2), every verb names it, a snapshot file
// carries it, --volcano-config-map points at another, and --volcano-config
// wins without a request for it.
func TestVolcanoConfigFromTheCluster(t *testing.T) {
	f := newGangFixture(t, "vconf")
	f.volcanoGang()
	f.volcanoConfigMap(volcano.DefaultConfigMapNamespace, volcano.DefaultConfigMapName, strictVolcanoConf)
	const fromCluster = "ConfigMap volcano-system/volcano-scheduler-configmap"

	snap, _, err := snapshot.Live(f.ctx, env.Config, snapshot.LiveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	factor := func(s *schedule.Snapshot) float64 {
		c, _ := vcwing.ConfigOf(s)
		return c.PluginArguments("overcommit").Float64("overcommit-factor", -1)
	}
	if got, unread := vcwing.ConfigOf(snap); got.Source != fromCluster || factor(snap) != 1.0 || unread != "" {
		t.Errorf("configuration from %q, overcommit-factor %v, unread %q; want %q, 1.0", got.Source, factor(snap), unread, fromCluster)
	}

	for _, verb := range []string{"place", "explain", "admit"} {
		code, out, stderr := f.run(verb, "podgroup/vc", "-o", "json")
		if source, unread := volcanoConfigurationJSON(t, code, out, stderr); source != fromCluster || unread != "" {
			t.Errorf("%s: volcanoConfiguration %q, %q; want %q", verb, source, unread, fromCluster)
		}
		_, out, _ = f.run(verb, "podgroup/vc")
		if !strings.Contains(strings.Join(strings.Fields(out), " "), "Volcano configuration: "+fromCluster) {
			t.Errorf("%s does not name the configuration:\n%s", verb, out)
		}
	}

	// A snapshot file carries it, and reads back the same configuration.
	code, saved, stderr := runCLI(t, "", "snapshot", "--kubeconfig", env.Kubeconfig)
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, stderr)
	}
	file := filepath.Join(t.TempDir(), "cluster.yaml")
	f.must(os.WriteFile(file, []byte(saved), 0o644))
	offline, _, err := snapshot.LoadFiles(file, nil)
	f.must(err)
	if diff := testutil.Diff(snap.VolcanoConfigMap, offline.VolcanoConfigMap); diff != "" {
		t.Errorf("the file's ConfigMap differs (-live +file):\n%s", diff)
	}
	if factor(offline) != 1.0 {
		t.Errorf("overcommit-factor from the file %v, want 1.0", factor(offline))
	}
	code, out, stderr := runCLI(t, "", "place", "podgroup/vc", "-n", f.ns, "--snapshot", file, "-o", "json")
	if source, _ := volcanoConfigurationJSON(t, code, out, stderr); source != fromCluster+" (from the snapshot "+file+")" {
		t.Errorf("offline: volcanoConfiguration %q, want the snapshot's", source)
	}

	// Another ConfigMap, as a chart installed under another release name has it.
	f.volcanoConfigMap(f.ns, "vc-scheduler-configmap", strings.Replace(strictVolcanoConf, "1.0", "1.5", 1))
	snap, _, err = snapshot.Live(f.ctx, env.Config, snapshot.LiveOptions{VolcanoConfigMap: types.NamespacedName{Namespace: f.ns, Name: "vc-scheduler-configmap"}})
	f.must(err)
	if factor(snap) != 1.5 {
		t.Errorf("overcommit-factor from %s/vc-scheduler-configmap %v, want 1.5", f.ns, factor(snap))
	}
	code, out, stderr = f.run("place", "podgroup/vc", "-o", "json", "--volcano-config-map", f.ns+"/vc-scheduler-configmap")
	if source, _ := volcanoConfigurationJSON(t, code, out, stderr); source != "ConfigMap "+f.ns+"/vc-scheduler-configmap" {
		t.Errorf("--volcano-config-map: volcanoConfiguration %q", source)
	}

	// --volcano-config wins, and the ConfigMap is not even asked for.
	conf := f.file("volcano-scheduler.conf", strictVolcanoConf)
	code, out, stderr = f.run("place", "podgroup/vc", "-o", "json", "--volcano-config", conf, "-v", "6")
	if source, _ := volcanoConfigurationJSON(t, code, out, stderr); source != "file "+conf {
		t.Errorf("--volcano-config: volcanoConfiguration %q", source)
	}
	if strings.Contains(stderr, "/configmaps/") {
		t.Errorf("with --volcano-config the ConfigMap was still read:\n%s", stderr)
	}
	_, _, stderr = f.run("place", "podgroup/vc", "-o", "json", "-v", "6")
	if strings.Count(stderr, "/api/v1/namespaces/volcano-system/configmaps/volcano-scheduler-configmap") != 1 {
		t.Errorf("the live read does not GET the ConfigMap once:\n%s", stderr)
	}
}

// A user who may not read the scheduler's ConfigMap gets a verdict, not an
// error: the configuration is unknown, said in a warning and in the JSON,
// and a snapshot file saved by that user says so too.
func TestVolcanoConfigForbidden(t *testing.T) {
	f := newGangFixture(t, "vconf-rbac")
	f.volcanoGang()
	f.volcanoConfigMap(volcano.DefaultConfigMapNamespace, volcano.DefaultConfigMapName, strictVolcanoConf)
	volcanoReader := append([]rbacv1.PolicyRule{
		{APIGroups: []string{"scheduling.volcano.sh"}, Resources: []string{"podgroups", "queues"}, Verbs: []string{"list"}},
	}, coreReader...)
	user := f.reader("no-configmaps", volcanoReader, nil)
	const why = "cannot get ConfigMap volcano-system/volcano-scheduler-configmap (Forbidden): the configuration Volcano's scheduler runs with is unknown"

	for _, verb := range []string{"place", "explain", "admit"} {
		code, out, stderr := f.runAs(user, verb, "podgroup/vc", "-o", "json")
		source, unread := volcanoConfigurationJSON(t, code, out, stderr)
		if source != "" || !strings.HasPrefix(unread, why) {
			t.Errorf("%s: volcanoConfiguration %q, %q; want unread %q", verb, source, unread, why)
		}
		if !strings.Contains(stderr, "Warning: "+why) {
			t.Errorf("%s: stderr %q lacks the warning", verb, stderr)
		}
	}

	code, saved, stderr := runCLI(t, "", "snapshot", "--kubeconfig", user)
	if code != 0 || !strings.Contains(stderr, "Warning: "+why) {
		t.Fatalf("snapshot: exit %d, stderr %q", code, stderr)
	}
	file := filepath.Join(t.TempDir(), "cluster.yaml")
	f.must(os.WriteFile(file, []byte(saved), 0o644))
	code, out, stderr := runCLI(t, "", "place", "podgroup/vc", "-n", f.ns, "--snapshot", file, "-o", "json")
	if _, unread := volcanoConfigurationJSON(t, code, out, stderr); !strings.HasPrefix(unread, why) {
		t.Errorf("offline from the user's file: unread %q, want %q", unread, why)
	}

	// Allowed to get it in volcano-system, the same user reads it.
	cs := env.Clientset()
	_, err := cs.RbacV1().Roles(volcano.DefaultConfigMapNamespace).Create(f.ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: f.ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"},
			ResourceNames: []string{volcano.DefaultConfigMapName}}}}, metav1.CreateOptions{})
	f.must(err)
	_, err = cs.RbacV1().RoleBindings(volcano.DefaultConfigMapNamespace).Create(f.ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: f.ns},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "no-configmaps", Namespace: f.ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: f.ns}}, metav1.CreateOptions{})
	f.must(err)
	t.Cleanup(func() {
		ctx := context.Background()
		_ = cs.RbacV1().RoleBindings(volcano.DefaultConfigMapNamespace).Delete(ctx, f.ns, metav1.DeleteOptions{})
		_ = cs.RbacV1().Roles(volcano.DefaultConfigMapNamespace).Delete(ctx, f.ns, metav1.DeleteOptions{})
	})
	var source string
	for range 100 { // RBAC's informers take a moment to see the binding
		code, out, stderr = f.runAs(user, "place", "podgroup/vc", "-o", "json")
		if source, _ = volcanoConfigurationJSON(t, code, out, stderr); source != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if source != "ConfigMap volcano-system/volcano-scheduler-configmap" {
		t.Errorf("with get on the ConfigMap: volcanoConfiguration %q", source)
	}
}
