package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"

	"github.com/kubectl-gang/kubectl-gang/pkg/kubelist"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// DefaultPageSize is how many objects one LIST page asks for, kube-apiserver's
// own default limit for paginated clients.
const DefaultPageSize = kubelist.DefaultPageSize

// LiveOptions tune how a live snapshot is read.
type LiveOptions struct {
	// PageSize is the LIST limit per request; 0 means DefaultPageSize.
	PageSize int64
	// Progress, when set, is updated as the read goes, for a progress line.
	Progress *Progress
	// Namespaces are the namespaces the command is about (the gang's); nil
	// means every namespace. Only the fallback reads them: a namespaced
	// kind the user may not list cluster-wide is listed in each of these
	// (docs/design.md#snapshot).
	Namespaces []string
	// VolcanoConfigMap is the ConfigMap Volcano's scheduler reads its
	// configuration from, read when the cluster serves Volcano; zero:
	// DefaultVolcanoConfigMap.
	VolcanoConfigMap types.NamespacedName
	// SkipVolcanoConfig leaves that ConfigMap unread: the command was given
	// the configuration (--volcano-config).
	SkipVolcanoConfig bool
}

// fallbackParallelism bounds the per-namespace lists in flight.
const fallbackParallelism = 16

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
// resource.k8s.io/v1, or at v1beta2 on a server that serves no v1. A
// cluster that serves Volcano has its scheduler's ConfigMap read too
// (readVolcanoConfig).
func Live(ctx context.Context, cfg *rest.Config, opts LiveOptions) (*schedule.Snapshot, []string, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	clientset, dyn, mc, err := liveClients(cfg)
	if err != nil {
		return nil, nil, err
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
		// Pods share their templates' values, as a file's do (listPods).
		{resource: "pods", required: true, fieldSelector: nonTerminalPods, run: listPods(clientset),
			each: func(obj runtime.Object) { r.b.addPod(obj.(*corev1.Pod)) }},
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
		namespaced(schedule.KindResourceQuotas, func(ns string) lister { return listOf(clientset.CoreV1().ResourceQuotas(ns).List) },
			func(obj runtime.Object) { r.b.addResourceQuota(obj.(*corev1.ResourceQuota)) }),
		// Budgets matter where preemption's victims are: the fallback
		// reads the namespaces of bound pods too.
		withVictims(namespaced(schedule.KindPodDisruptionBudgets, func(ns string) lister { return listOf(clientset.PolicyV1().PodDisruptionBudgets(ns).List) },
			func(obj runtime.Object) { r.b.addPDB(obj.(*policyv1.PodDisruptionBudget)) })),
		namespaced(schedule.KindPersistentVolumeClaims, func(ns string) lister { return listOf(clientset.CoreV1().PersistentVolumeClaims(ns).List) },
			func(obj runtime.Object) { r.b.addPVC(obj.(*corev1.PersistentVolumeClaim)) }),
		{resource: "persistentvolumes", run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.CoreV1().PersistentVolumes().List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addPV(obj.(*corev1.PersistentVolume)) }},
		{resource: "storageclasses.storage.k8s.io", run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return clientset.StorageV1().StorageClasses().List(ctx, o)
		}, each: func(obj runtime.Object) { r.b.addStorageClass(obj.(*storagev1.StorageClass)) }},
		namespaced(schedule.KindServices, func(ns string) lister { return listOf(clientset.CoreV1().Services(ns).List) },
			func(obj runtime.Object) { r.b.addService(obj.(*corev1.Service)) }),
		namespaced(schedule.KindReplicationControllers, func(ns string) lister { return listOf(clientset.CoreV1().ReplicationControllers(ns).List) },
			func(obj runtime.Object) { r.b.addReplicationController(obj.(*corev1.ReplicationController)) }),
		namespaced(schedule.KindReplicaSets, func(ns string) lister { return listOf(clientset.AppsV1().ReplicaSets(ns).List) },
			func(obj runtime.Object) { r.b.addReplicaSet(obj.(*appsv1.ReplicaSet)) }),
		namespaced(schedule.KindStatefulSets, func(ns string) lister { return listOf(clientset.AppsV1().StatefulSets(ns).List) },
			func(obj runtime.Object) { r.b.addStatefulSet(obj.(*appsv1.StatefulSet)) }),
	}
	dra, warning := r.draTasks(clientset, kinds)
	tasks = append(tasks, dra...)
	if warning != "" {
		warnings = append(warnings, warning)
	}
	tasks = append(tasks, r.customTasks(dyn, kinds)...)
	progress.Lists.Store(int64(len(tasks)))
	// Volcano's configuration, only where Volcano is served: one GET,
	// beside the lists.
	var volcanoErr error
	var volcanoDone sync.WaitGroup
	if kinds.servesVolcano() && !opts.SkipVolcanoConfig {
		name := opts.VolcanoConfigMap
		if name == (types.NamespacedName{}) {
			name = DefaultVolcanoConfigMap
		}
		progress.Lists.Add(1)
		volcanoDone.Go(func() { volcanoErr = r.readVolcanoConfig(clientset, name) })
	}
	warnings = append(warnings, r.run(tasks, len(tasks))...)
	volcanoDone.Wait()
	if err := r.requiredError(); err != nil {
		return nil, nil, err
	}
	if err := errors.Join(append(r.errs, volcanoErr)...); err != nil {
		return nil, nil, err
	}
	if len(r.refused) > 0 {
		warnings = append(warnings, r.fallback(opts.Namespaces)...)
		if err := errors.Join(r.errs...); err != nil {
			return nil, nil, err
		}
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

// listOfKind checks that a dynamic client's list is of gvr's kind (its
// kind is the resource's, singular, and List): a dynamic client takes any
// kind it is answered, and another kind's items would be read as PodGroups
// or Queues.
func listOfKind(gvr schema.GroupVersionResource) func(*unstructured.UnstructuredList, error) (runtime.Object, error) {
	return func(list *unstructured.UnstructuredList, err error) (runtime.Object, error) {
		if err != nil {
			return nil, err
		}
		kind, ok := strings.CutSuffix(list.GetKind(), "List")
		if !ok || !listsKind(gvr, kind) || list.GroupVersionKind().Group != gvr.Group {
			return nil, fmt.Errorf("the server answered the LIST of %s.%s with a %s of %s", gvr.Resource, gvr.Group, list.GetKind(), list.GetAPIVersion())
		}
		return list, nil
	}
}

// listsKind reports whether a LIST of gvr holds objects of kind: the
// registered kind's (workloadpriorityclasses hold WorkloadPriorityClasses),
// else the resource's name in the singular.
func listsKind(gvr schema.GroupVersionResource, kind string) bool {
	for _, k := range schedule.ObjectKinds() {
		if k.Group == gvr.Group && k.Resource == gvr.Resource {
			return k.Kind == kind
		}
	}
	return strings.EqualFold(kind+"s", gvr.Resource)
}

// lister is one LIST call of a typed or dynamic client.
type lister func(context.Context, metav1.ListOptions) (runtime.Object, error)

// listTask is one paginated LIST.
type listTask struct {
	resource      string // as a user would name it to kubectl, for messages
	required      bool   // the pipeline cannot run without it
	fieldSelector string
	run           func(context.Context, metav1.ListOptions) (runtime.Object, error)
	each          func(runtime.Object)
	// inNamespace, for an optional namespaced kind, lists it in one
	// namespace: the fallback when the cluster-wide list is refused.
	inNamespace func(namespace string) lister
	// victims makes the fallback read the namespaces of bound pods too
	// (preemption's possible victims), not only LiveOptions.Namespaces.
	victims bool
}

// namespaced is the task of an optional namespaced kind: a cluster-wide
// list, with in for the per-namespace fallback.
func namespaced(resource string, in func(namespace string) lister, each func(runtime.Object)) listTask {
	return listTask{resource: resource, run: in(metav1.NamespaceAll), each: each, inNamespace: in}
}

// listOf makes a typed client's List a lister.
func listOf[T runtime.Object](list func(context.Context, metav1.ListOptions) (T, error)) lister {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return list(ctx, o) }
}

func withVictims(t listTask) listTask {
	t.victims = true
	return t
}

// liveReader runs list tasks in parallel into one builder.
type liveReader struct {
	ctx      context.Context
	pageSize int64
	progress *Progress

	mu   sync.Mutex // guards b, errs, refused
	b    *builder
	errs []error
	// refused are the tasks whose cluster-wide list was refused and that
	// may be listed per namespace instead, with the reason of the refusal.
	refused []refusal
	// required are the refused lists of required kinds.
	required []refusedList
}

type refusedList struct {
	resource string
	err      error
}

// RequiredKindsError says the user may not list kinds every verb needs
// (nodes, pods, namespaces, priority classes) in every namespace: there is
// no answer without them, and no fallback (docs/design.md#snapshot).
type RequiredKindsError struct {
	// Resources are the kinds refused, sorted.
	Resources []string
	// Err is the server's answer for the first of them.
	Err error
}

func (e *RequiredKindsError) Error() string {
	return fmt.Sprintf("cannot list %s (%s): every verb needs the cluster's nodes, pods, namespaces and priority classes, "+
		"in every namespace; ask for a ClusterRole that may list them", strings.Join(e.Resources, ", "), e.Err.Error())
}

func (e *RequiredKindsError) Unwrap() error { return e.Err }

// requiredError is the one error of the refused required lists, nil when none.
func (r *liveReader) requiredError() error {
	if len(r.required) == 0 {
		return nil
	}
	slices.SortFunc(r.required, func(a, b refusedList) int { return strings.Compare(a.resource, b.resource) })
	e := &RequiredKindsError{Err: r.required[0].err}
	for _, l := range r.required {
		e.Resources = append(e.Resources, l.resource)
	}
	return e
}

// refusal is a cluster-wide list refused, for the fallback.
type refusal struct {
	task   listTask
	reason metav1.StatusReason
}

// list reads every page of one task.
func (r *liveReader) list(task listTask) ([]runtime.Object, error) {
	// An expired continue token lists again in one request (kubelist.List).
	items, err := kubelist.List(r.ctx, pager.SimplePageFunc(func(o metav1.ListOptions) (runtime.Object, error) { return task.run(r.ctx, o) }),
		r.pageSize, metav1.ListOptions{FieldSelector: task.fieldSelector}, func(n int64) { r.progress.Objects.Add(n) })
	r.progress.ListsDone.Add(1)
	return items, err
}

func isRefused(err error) bool { return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) }

// run lists every task in parallel, at most limit at a time, and returns
// warnings for optional kinds that could not be read; errors for required
// kinds are collected in r.errs, refusals a fallback may answer in
// r.refused.
func (r *liveReader) run(tasks []listTask, limit int) []string {
	warnings := make([]string, len(tasks))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(limit, 1))
	for i, task := range tasks {
		wg.Go(func() {
			sem <- struct{}{}
			items, err := r.list(task)
			<-sem
			r.mu.Lock()
			defer r.mu.Unlock()
			switch {
			case err == nil:
				for _, obj := range items {
					task.each(obj)
				}
			case apierrors.IsNotFound(err) && !task.required:
				// A CRD deleted between discovery and the list: absent.
			case !task.required && isRefused(err) && task.inNamespace != nil:
				r.refused = append(r.refused, refusal{task: task, reason: apierrors.ReasonForError(err)})
			case !task.required && isRefused(err):
				warnings[i] = fmt.Sprintf("cannot list %s (%v); the snapshot has none", task.resource, apierrors.ReasonForError(err))
				r.b.snap.Unreadable = append(r.b.snap.Unreadable, task.resource)
			case isRefused(err):
				r.required = append(r.required, refusedList{resource: task.resource, err: err})
			default:
				r.errs = append(r.errs, fmt.Errorf("listing %s: %w", task.resource, err))
			}
		})
	}
	wg.Wait()
	return slices.DeleteFunc(warnings, func(w string) bool { return w == "" })
}

// fallback lists each refused kind namespace by namespace: in focus (every
// namespace when nil), and for budgets also where pods are bound. The kind
// stays Unreadable; the namespaces read are its ReadIn, where rules read it
// as complete. It returns one warning per kind that names what could not be
// read (docs/design.md#snapshot).
func (r *liveReader) fallback(focus []string) []string {
	exists := map[string]bool{}
	for _, ns := range r.b.snap.Namespaces {
		exists[ns.Name] = true
	}
	if focus == nil {
		focus = slices.Collect(maps.Keys(exists))
	}
	var bound []string
	for _, p := range r.b.snap.Pods {
		if p.Spec.NodeName != "" {
			bound = append(bound, p.Namespace)
		}
	}
	type outcome struct{ read, refused []string }
	outcomes := make([]outcome, len(r.refused))
	var wg sync.WaitGroup
	sem := make(chan struct{}, fallbackParallelism)
	for i, rf := range r.refused {
		r.b.snap.Unreadable = append(r.b.snap.Unreadable, rf.task.resource)
		namespaces := slices.Clone(focus)
		if rf.task.victims {
			namespaces = append(namespaces, bound...)
		}
		namespaces = slices.DeleteFunc(namespaces, func(ns string) bool { return !exists[ns] })
		slices.Sort(namespaces)
		namespaces = slices.Compact(namespaces)
		r.progress.Lists.Add(int64(len(namespaces)))
		for _, ns := range namespaces {
			task := rf.task
			task.run = task.inNamespace(ns)
			wg.Go(func() {
				sem <- struct{}{}
				items, err := r.list(task)
				<-sem
				r.mu.Lock()
				defer r.mu.Unlock()
				o := &outcomes[i]
				switch {
				case err == nil:
					for _, obj := range items {
						task.each(obj)
					}
					o.read = append(o.read, ns)
				case apierrors.IsNotFound(err):
					o.read = append(o.read, ns) // a CRD deleted meanwhile: none
				case isRefused(err):
					o.refused = append(o.refused, ns)
				default:
					r.errs = append(r.errs, fmt.Errorf("listing %s in namespace %s: %w", task.resource, ns, err))
				}
			})
		}
	}
	wg.Wait()
	if r.b.snap.ReadIn == nil {
		r.b.snap.ReadIn = map[string][]string{}
	}
	warnings := make([]string, len(r.refused))
	for i, rf := range r.refused {
		o := outcomes[i]
		slices.Sort(o.read)
		slices.Sort(o.refused)
		if len(o.read) > 0 {
			r.b.snap.ReadIn[rf.task.resource] = o.read
		}
		warnings[i] = fallbackWarning(rf, o.read, o.refused)
	}
	slices.Sort(warnings)
	return warnings
}

// maxNamespacesNamed bounds the namespaces a warning lists.
const maxNamespacesNamed = 8

// fallbackWarning says which namespaces a refused kind was read in and which
// it could not be, and what that means for the rules that need it.
func fallbackWarning(rf refusal, read, refused []string) string {
	head := fmt.Sprintf("cannot list %s in every namespace (%v)", rf.task.resource, rf.reason)
	switch {
	case len(read) == 0 && len(refused) == 0:
		return head + "; the snapshot has none"
	case len(read) == 0:
		return fmt.Sprintf("%s, nor in namespace(s) %s; the snapshot has none, and what needs them is not evaluated", head, nameSome(refused))
	case len(refused) == 0:
		return fmt.Sprintf("%s; read them in namespace(s) %s instead", head, nameSome(read))
	}
	return fmt.Sprintf("%s; read them in namespace(s) %s, but not in %s (%v), where what needs them is not evaluated",
		head, nameSome(read), nameSome(refused), rf.reason)
}

// nameSome joins names, the first maxNamespacesNamed of them.
func nameSome(names []string) string {
	if len(names) <= maxNamespacesNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamespacesNamed], ", "), len(names)-maxNamespacesNamed)
}

// liveClients are the clients a live read uses: protobuf for the built-in
// kinds, the dynamic client for the gang systems' kinds and the metadata
// client for finished pods.
func liveClients(cfg *rest.Config) (kubernetes.Interface, dynamic.Interface, metadata.Interface, error) {
	protoCfg := rest.CopyConfig(cfg)
	protoCfg.ContentType = runtime.ContentTypeProtobuf
	protoCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	clientset, err := kubernetes.NewForConfig(protoCfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating a client: %w", err)
	}
	// The snapshot reads PodGroups at the version the server prefers; its
	// deprecation warnings are about our read, not about anything the user
	// did, and would break the one-line error promise, so the dynamic
	// client drops them.
	dynCfg := rest.CopyConfig(cfg)
	dynCfg.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(dynCfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating a client: %w", err)
	}
	mc, err := metadata.NewForConfig(dynCfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating a client: %w", err)
	}
	return clientset, dyn, mc, nil
}

// customTasks list the gang systems' resources the server serves
// (schedule.ObjectKinds), kept as read.
func (r *liveReader) customTasks(dyn dynamic.Interface, kinds served) []listTask {
	var tasks []listTask
	for _, gvr := range kinds.custom {
		each := func(obj runtime.Object) { r.b.addUnstructured(obj.(*unstructured.Unstructured)) }
		if !namespacedKind(gvr) {
			tasks = append(tasks, listTask{resource: gvr.Resource + "." + gvr.Group, each: each,
				run: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return listOfKind(gvr)(dyn.Resource(gvr).List(ctx, o))
				}})
			continue
		}
		// PodGroups and the other namespaced kinds: a user with a Role in
		// the gang's namespace reads them there.
		tasks = append(tasks, namespaced(gvr.Resource+"."+gvr.Group, func(ns string) lister {
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return listOfKind(gvr)(dyn.Resource(gvr).Namespace(ns).List(ctx, o))
			}
		}, each))
	}
	return tasks
}

// namespacedKind reports whether a custom resource lives in namespaces.
func namespacedKind(gvr schema.GroupVersionResource) bool {
	for _, k := range schedule.ObjectKinds() {
		if k.Group == gvr.Group && k.Resource == gvr.Resource {
			return k.Namespaced
		}
	}
	return true
}

// served is what discovery tells a snapshot about the kinds it may read.
type served struct {
	// custom are the gang systems' resources, each at the version the
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

// discoverKinds finds which gang systems' resources the server serves,
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
			for _, k := range schedule.ObjectKinds() {
				if gv.Group == k.Group {
					warnings = append(warnings, fmt.Sprintf("discovery of %s failed; its %s are not in the snapshot", gv, k.Resource))
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
	for _, k := range schedule.ObjectKinds() {
		for _, g := range groups {
			if g.Name != k.Group {
				continue
			}
			// Versions come in the server's order of preference.
			for _, v := range g.Versions {
				gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
				if listable[gv][k.Resource] {
					out.custom = append(out.custom, gv.WithResource(k.Resource))
					break
				}
			}
		}
	}
	return out, warnings, nil
}
