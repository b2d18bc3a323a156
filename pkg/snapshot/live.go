package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// DefaultPageSize is how many objects one LIST page asks for, kube-apiserver's
// own default limit for paginated clients.
const DefaultPageSize = 500

// LiveOptions tune how a live snapshot is read.
type LiveOptions struct {
	// PageSize is the LIST limit per request; 0 means DefaultPageSize.
	PageSize int64
	// Progress, when set, is updated as the read goes, for a progress line.
	Progress *Progress
}

// Progress counts what a live read has done so far. Another goroutine may
// read it while Live runs.
type Progress struct {
	Lists, ListsDone, Objects atomic.Int64
}

// ServerUnreachableError says the API server could not be reached at all, as
// opposed to answering with an error.
type ServerUnreachableError struct {
	Host string
	Err  error
}

func (e *ServerUnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the API server at %s: %v", e.Host, e.Err)
}

func (e *ServerUnreachableError) Unwrap() error { return e.Err }

// nonTerminalPods filters Succeeded and Failed pods on the server: they hold no
// node resources, and on a busy cluster they are most of the pods.
var nonTerminalPods = fields.AndSelectors(
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
).String()

// succeededPods picks the finished pods that still count for a gang.
var succeededPods = fields.OneTermEqualSelector("status.phase", string(corev1.PodSucceeded)).String()

// Live reads a snapshot from the cluster cfg points at. Lists run in parallel,
// paginated, as consistent reads (no resourceVersion, so never a stale cache),
// built-in kinds in protobuf. PodGroup kinds whose CRDs are not installed are
// simply absent. Kinds the pipeline can do without (PodGroups, Queues, quotas,
// budgets, volumes, device claims) that the user may not list give a warning,
// not an error. The Dynamic Resource Allocation kinds are read at
// resource.k8s.io/v1, or at v1beta2 on a server that serves no v1.
func Live(ctx context.Context, cfg *rest.Config, opts LiveOptions) (*schedule.Snapshot, []string, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	protoCfg := rest.CopyConfig(cfg)
	protoCfg.ContentType = runtime.ContentTypeProtobuf
	protoCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	clientset, err := kubernetes.NewForConfig(protoCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("creating a client: %w", err)
	}
	// The snapshot reads PodGroups at the version the server prefers; its
	// deprecation warnings are about our read, not about anything the user
	// did, and would break the one-line error promise, so the dynamic
	// client drops them.
	dynCfg := rest.CopyConfig(cfg)
	dynCfg.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(dynCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("creating a client: %w", err)
	}

	mc, err := metadata.NewForConfig(dynCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("creating a client: %w", err)
	}

	kinds, warnings, err := discoverKinds(clientset.Discovery(), cfg.Host)
	if err != nil {
		return nil, nil, err
	}

	progress := opts.Progress
	if progress == nil {
		progress = &Progress{}
	}
	r := &liveReader{ctx: ctx, pageSize: opts.PageSize, b: newBuilder(), progress: progress}
	tasks := []listTask{
		{resource: "nodes", required: true, run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.CoreV1().Nodes().List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addNode(obj.(*corev1.Node)) }},
		{resource: "pods", required: true, fieldSelector: nonTerminalPods, run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addPod(obj.(*corev1.Pod)) }},
		// Succeeded pods count toward a Volcano gang's minimum; their
		// metadata is all that is needed, and all that is read.
		{resource: "pods", fieldSelector: succeededPods, run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return mc.Resource(corev1.SchemeGroupVersion.WithResource("pods")).Namespace(metav1.NamespaceAll).List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addSucceededPod(obj.(*metav1.PartialObjectMetadata).ObjectMeta) }},
		{resource: "namespaces", required: true, run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.CoreV1().Namespaces().List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addNamespace(obj.(*corev1.Namespace)) }},
		{resource: "priorityclasses.scheduling.k8s.io", required: true, run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.SchedulingV1().PriorityClasses().List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addPriorityClass(obj.(*schedulingv1.PriorityClass)) }},
		{resource: "resourcequotas", run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.CoreV1().ResourceQuotas(metav1.NamespaceAll).List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addResourceQuota(obj.(*corev1.ResourceQuota)) }},
		{resource: "poddisruptionbudgets.policy", run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addPDB(obj.(*policyv1.PodDisruptionBudget)) }},
		{resource: "persistentvolumeclaims", run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addPVC(obj.(*corev1.PersistentVolumeClaim)) }},
		{resource: "persistentvolumes", run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.CoreV1().PersistentVolumes().List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addPV(obj.(*corev1.PersistentVolume)) }},
		{resource: "storageclasses.storage.k8s.io", run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.StorageV1().StorageClasses().List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addStorageClass(obj.(*storagev1.StorageClass)) }},
		{resource: "services", run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.CoreV1().Services(metav1.NamespaceAll).List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addService(obj.(*corev1.Service)) }},
		{resource: "replicationcontrollers", run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.CoreV1().ReplicationControllers(metav1.NamespaceAll).List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addReplicationController(obj.(*corev1.ReplicationController)) }},
		{resource: "replicasets.apps", run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.AppsV1().ReplicaSets(metav1.NamespaceAll).List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addReplicaSet(obj.(*appsv1.ReplicaSet)) }},
		{resource: "statefulsets.apps", run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.AppsV1().StatefulSets(metav1.NamespaceAll).List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addStatefulSet(obj.(*appsv1.StatefulSet)) }},
	}
	dra, warning := r.draTasks(clientset, kinds)
	tasks = append(tasks, dra...)
	if warning != "" {
		warnings = append(warnings, warning)
	}
	for _, gvr := range kinds.custom {
		tasks = append(tasks, listTask{
			resource: gvr.Resource + "." + gvr.Group,
			run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return dyn.Resource(gvr).Namespace(metav1.NamespaceAll).List(ctx, o)
			},
			each: func(obj runtime.Object) { r.b.addUnstructured(obj.(*unstructured.Unstructured)) },
		})
	}
	progress.Lists.Store(int64(len(tasks)))
	warnings = append(warnings, r.run(tasks)...)
	if err := errors.Join(r.errs...); err != nil {
		return nil, nil, err
	}
	snap := r.b.snapshot()
	return snap, append(warnings, r.b.warnings()...), nil
}

// draTasks lists the Dynamic Resource Allocation kinds at the version
// kinds.draVersion gives, v1 or v1beta2; both are kept as v1. A server that
// serves resource.k8s.io at other versions only gets no tasks: the four
// resources are recorded as unreadable, with a warning.
func (r *liveReader) draTasks(clientset kubernetes.Interface, kinds served) ([]listTask, string) {
	version := kinds.draVersion()
	v1, v1beta2 := clientset.ResourceV1(), clientset.ResourceV1beta2()
	all := metav1.NamespaceAll
	tasks := []listTask{
		{resource: "deviceclasses.resource.k8s.io", run: listAt(version, v1.DeviceClasses().List, v1beta2.DeviceClasses().List),
			each: func(obj runtime.Object) { r.b.addDeviceClass(obj.(*resourcev1.DeviceClass)) }},
		{resource: "resourceslices.resource.k8s.io", run: listAt(version, v1.ResourceSlices().List, v1beta2.ResourceSlices().List),
			each: func(obj runtime.Object) { r.b.addResourceSlice(obj.(*resourcev1.ResourceSlice)) }},
		{resource: "resourceclaims.resource.k8s.io", run: listAt(version, v1.ResourceClaims(all).List, v1beta2.ResourceClaims(all).List),
			each: func(obj runtime.Object) { r.b.addResourceClaim(obj.(*resourcev1.ResourceClaim)) }},
		{resource: "resourceclaimtemplates.resource.k8s.io", run: listAt(version, v1.ResourceClaimTemplates(all).List, v1beta2.ResourceClaimTemplates(all).List),
			each: func(obj runtime.Object) { r.b.addResourceClaimTemplate(obj.(*resourcev1.ResourceClaimTemplate)) }},
	}
	if kinds.taintRules != "" && version != "" {
		tasks = append(tasks, listTask{resource: "devicetaintrules.resource.k8s.io",
			run:  listAt(kinds.taintRules, v1.DeviceTaintRules().List, v1beta2.DeviceTaintRules().List),
			each: func(obj runtime.Object) { r.b.addDeviceTaintRule(obj.(*resourcev1.DeviceTaintRule)) }})
	}
	switch {
	case version != "":
		return tasks, ""
	case len(kinds.resourceVersions) == 0:
		return nil, "" // no Dynamic Resource Allocation on this server, so no objects
	}
	// A server before Kubernetes 1.34 that serves v1beta1 (or v1alpha3)
	// only: claims may exist, and this build cannot read them.
	for _, t := range tasks {
		r.b.snap.Unreadable = append(r.b.snap.Unreadable, t.resource)
	}
	return nil, fmt.Sprintf("the server serves resource.k8s.io only at %s, which this build does not read; device claims are not evaluated",
		strings.Join(kinds.resourceVersions, ", "))
}

// listAt lists with v1, or, when version is v1beta2, with v1beta2 and
// converts each page to its v1 list type, V1, by a JSON round trip: the two
// versions have the same schema.
func listAt[V1 any, PV1 interface {
	*V1
	runtime.Object
}, Beta runtime.Object](
	version string,
	v1 func(context.Context, metav1.ListOptions) (PV1, error),
	v1beta2 func(context.Context, metav1.ListOptions) (Beta, error),
) func(context.Context, metav1.ListOptions) (runtime.Object, error) {
	if version == "v1" {
		return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return v1(ctx, o) }
	}
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		page, err := v1beta2(ctx, o)
		if err != nil {
			return nil, err
		}
		data, err := json.Marshal(page)
		if err != nil {
			return nil, err
		}
		out := PV1(new(V1))
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("converting resource.k8s.io/v1beta2 to v1: %w", err)
		}
		return out, nil
	}
}

// listTask is one paginated LIST.
type listTask struct {
	resource      string // as a user would name it to kubectl, for messages
	required      bool   // the pipeline cannot run without it
	fieldSelector string
	run           func(context.Context, metav1.ListOptions) (runtime.Object, error)
	each          func(runtime.Object)
}

// liveReader runs list tasks in parallel into one builder.
type liveReader struct {
	ctx      context.Context
	pageSize int64
	progress *Progress

	mu   sync.Mutex // guards b, errs
	b    *builder
	errs []error
}

// run lists every task in parallel and returns warnings for optional kinds that
// could not be read; errors for required kinds are collected in r.errs.
func (r *liveReader) run(tasks []listTask) []string {
	warnings := make([]string, len(tasks))
	var wg sync.WaitGroup
	for i, task := range tasks {
		wg.Go(func() {
			var items []runtime.Object
			p := pager.New(pager.SimplePageFunc(func(o metav1.ListOptions) (runtime.Object, error) { return task.run(r.ctx, o) }))
			p.PageSize = r.pageSize
			err := p.EachListItem(r.ctx, metav1.ListOptions{FieldSelector: task.fieldSelector}, func(obj runtime.Object) error {
				items = append(items, obj)
				r.progress.Objects.Add(1)
				return nil
			})
			r.progress.ListsDone.Add(1)
			r.mu.Lock()
			defer r.mu.Unlock()
			switch {
			case err == nil:
				for _, obj := range items {
					task.each(obj)
				}
			case apierrors.IsNotFound(err) && !task.required:
				// A CRD deleted between discovery and the list: absent.
			case !task.required && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)):
				warnings[i] = fmt.Sprintf("cannot list %s (%v); the snapshot has none", task.resource, apierrors.ReasonForError(err))
				r.b.snap.Unreadable = append(r.b.snap.Unreadable, task.resource)
			default:
				r.errs = append(r.errs, fmt.Errorf("listing %s: %w", task.resource, err))
			}
		})
	}
	wg.Wait()
	return slices.DeleteFunc(warnings, func(w string) bool { return w == "" })
}

// customKinds are the PodGroup and Queue resources a snapshot reads, by group,
// with the versions they are preferred at when a server offers several.
var customKinds = []struct {
	group, resource string
}{
	{schedule.NativeGroup, "podgroups"},
	{schedule.VolcanoGroup, "podgroups"},
	{schedule.VolcanoGroup, "queues"},
	{schedule.CoschedulingGroup, "podgroups"},
}

// served is what discovery tells a snapshot about the kinds it may read.
type served struct {
	// custom are the PodGroup and Queue resources, each at the version the
	// server prefers among those that serve it.
	custom []schema.GroupVersionResource
	// resourceVersions are the versions resource.k8s.io is served at, in the
	// server's order of preference; empty when it is not served.
	resourceVersions []string
	// taintRules is the version DeviceTaintRules are listed at (v1, or
	// v1beta2 before Kubernetes 1.37), empty when the server serves them at
	// neither: DRADeviceTaintRules is off there, so no rule taints anything.
	taintRules string
}

// draVersion is the version of resource.k8s.io the Dynamic Resource
// Allocation kinds are read at: v1, or v1beta2 on a server before
// Kubernetes 1.34 (the same schema, converted to v1). Empty when the server
// serves neither.
func (s served) draVersion() string {
	for _, v := range []string{"v1", "v1beta2"} {
		if slices.Contains(s.resourceVersions, v) {
			return v
		}
	}
	return ""
}

// discoverKinds finds which PodGroup and Queue resources the server serves,
// and at which versions it serves resource.k8s.io. It is also the first
// request, so an unreachable server is reported here.
func discoverKinds(dc discovery.DiscoveryInterface, host string) (served, []string, error) {
	groups, resourceLists, err := dc.ServerGroupsAndResources()
	var warnings []string
	if err != nil {
		var failed *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &failed) {
			var urlErr *url.Error
			if errors.As(err, &urlErr) {
				return served{}, nil, &ServerUnreachableError{Host: host, Err: urlErr.Err}
			}
			return served{}, nil, fmt.Errorf("discovering the API: %w", err)
		}
		for gv := range failed.Groups {
			for _, k := range customKinds {
				if gv.Group == k.group {
					warnings = append(warnings, fmt.Sprintf("discovery of %s failed; its %s are not in the snapshot", gv, k.resource))
					break
				}
			}
		}
	}
	listable := map[schema.GroupVersion]map[string]bool{}
	for _, rl := range resourceLists {
		gv, err := schema.ParseGroupVersion(rl.GroupVersion)
		if err != nil {
			continue
		}
		names := map[string]bool{}
		for _, r := range rl.APIResources {
			if slices.Contains(r.Verbs, "list") {
				names[r.Name] = true
			}
		}
		listable[gv] = names
	}
	var out served
	for _, g := range groups {
		if g.Name != resourcev1.GroupName {
			continue
		}
		// The group list, not the resource lists: a group version whose
		// resources could not be discovered is still served.
		for _, v := range g.Versions {
			out.resourceVersions = append(out.resourceVersions, v.Version)
		}
		for _, v := range []string{"v1", "v1beta2"} {
			if listable[schema.GroupVersion{Group: g.Name, Version: v}]["devicetaintrules"] {
				out.taintRules = v
				break
			}
		}
	}
	for _, k := range customKinds {
		for _, g := range groups {
			if g.Name != k.group {
				continue
			}
			// Versions come in the server's order of preference.
			for _, v := range g.Versions {
				gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
				if listable[gv][k.resource] {
					out.custom = append(out.custom, gv.WithResource(k.resource))
					break
				}
			}
		}
	}
	return out, warnings, nil
}
