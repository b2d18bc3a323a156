package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	sigsjson "sigs.k8s.io/json"

	"github.com/kubectl-gang/kubectl-gang/pkg/manifest"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Stdin is the --snapshot value that reads the snapshot from standard input.
const Stdin = "-"

// InputError reports input that cannot be read as a snapshot: a missing file, a
// malformed document, an object of the wrong shape. Commands map it to exit
// code 2. It is manifest.Error, which -f input reports too.
type InputError = manifest.Error

// LoadFiles reads a snapshot from path: one file, a directory (every .yaml, .yml
// and .json file below it, in lexical order), or Stdin, reading stdin. Each file
// may hold a v1 List (what `kubectl gang snapshot` and `kubectl get -o yaml`
// write), typed lists such as a PodList, single objects, or several YAML
// documents. Objects of kinds the pipeline does not read are counted in the
// returned warnings, not rejected.
func LoadFiles(path string, stdin io.Reader) (*schedule.Snapshot, []string, error) {
	return LoadFilesWith(path, stdin, FileOptions{})
}

// FileOptions tune how a snapshot file is read.
type FileOptions struct {
	// VolcanoConfigMap is the ConfigMap whose volcano-scheduler.conf is
	// Volcano's configuration; zero: DefaultVolcanoConfigMap.
	VolcanoConfigMap types.NamespacedName
}

// LoadFilesWith is LoadFiles with options.
func LoadFilesWith(path string, stdin io.Reader, opts FileOptions) (*schedule.Snapshot, []string, error) {
	if opts.VolcanoConfigMap == (types.NamespacedName{}) {
		opts.VolcanoConfigMap = DefaultVolcanoConfigMap
	}
	var data []byte // stdin's, read once
	if path == Stdin {
		var err error
		if data, err = io.ReadAll(stdin); err != nil {
			return nil, nil, fmt.Errorf("reading snapshot from stdin: %w", err)
		}
	}
	growHeap(heapPerFileByte * snapshotSize(path, data))
	b, err := loadFiles(path, data, true)
	if errors.Is(err, errSlowPath) {
		// The fast path declined (docs/design.md#the-snapshot-file): read
		// it all again, one document at a time.
		b, err = loadFiles(path, data, false)
	}
	if err != nil {
		return nil, nil, err
	}
	file := path
	if path == Stdin {
		file = "<stdin>"
	}
	snap := b.snapshot()
	volcanoWarnings := b.pickVolcanoConfig(snap, opts.VolcanoConfigMap, file)
	warnings := append(append(b.warnings(), volcanoWarnings...), b.partialWarnings(snap)...)
	return snap, append(warnings, resolvePriorities(snap)...), nil
}

// snapshotSize is the size in bytes of what path stands for: stdin's data,
// a file, or the snapshot files of a directory (0 when it cannot be read;
// loading says why).
func snapshotSize(path string, data []byte) int64 {
	if path == Stdin {
		return int64(len(data))
	}
	files, err := snapshotFiles(path)
	if err != nil {
		return 0
	}
	var n int64
	for _, f := range files {
		if info, err := os.Stat(f); err == nil {
			n += info.Size()
		}
	}
	return n
}

// loadFiles reads path (stdin's data when it is Stdin) into a new builder;
// with fast, JSON is read by loadJSON, which may return errSlowPath.
func loadFiles(path string, data []byte, fast bool) (*builder, error) {
	b := newBuilder()
	if path == Stdin {
		if isBinary(data) {
			return b, b.loadBinary("<stdin>", bytes.NewReader(data))
		}
		if fast && startsJSONObject(data) {
			return b, b.loadJSON(bytes.NewReader(data))
		}
		return b, b.addStream("<stdin>", data)
	}
	files, err := snapshotFiles(path)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := b.addFile(f, fast); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// addFile reads one file of a snapshot.
func (b *builder) addFile(name string, fast bool) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("reading snapshot: %w", err)
	}
	defer f.Close()
	// What the file starts with says whether it is JSON.
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("reading snapshot: %w", err)
	}
	head = head[:n]
	if isBinary(head) {
		if info, err := f.Stat(); err == nil {
			b.expect(binaryCountHint(f, info.Size()))
		}
		return b.loadBinary(name, io.MultiReader(bytes.NewReader(head), f))
	}
	if fast && startsJSONObject(head) {
		if err := b.loadJSON(io.MultiReader(bytes.NewReader(head), f)); err != nil && !errors.Is(err, errSlowPath) {
			return fmt.Errorf("reading snapshot: %w", err)
		} else if err != nil {
			return err
		}
		return nil
	}
	rest, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("reading snapshot: %w", err)
	}
	return b.addStream(name, append(head, rest...))
}

// startsJSONObject says whether data starts, after white space, with '{'.
func startsJSONObject(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// snapshotFiles lists the files a --snapshot path stands for.
func snapshotFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &InputError{Source: path, Err: errors.New("no such file or directory")}
		}
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading snapshot directory: %w", err)
	}
	if len(files) == 0 {
		return nil, &InputError{Source: path, Err: errors.New("directory holds no .yaml, .yml or .json files")}
	}
	slices.Sort(files)
	return files, nil
}

// addStream decodes every document of one file.
func (b *builder) addStream(source string, data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &InputError{Source: source, Err: errors.New("empty snapshot")}
	}
	docs, err := manifest.Documents(source, data)
	if err != nil {
		return err
	}
	before := b.objects
	for _, d := range docs {
		if err := b.addDocument(d.JSON); err != nil {
			if errors.Is(err.Err, errCutShort) && d.Line > 0 {
				// Where: the list starts at the document's line and the
				// file stops at its last one.
				err.Err = fmt.Errorf("%w; the file ends at line %d", err.Err, bytes.Count(bytes.TrimRight(data, "\n"), []byte("\n"))+1)
			}
			return d.Locate(source, err)
		}
	}
	if b.objects == before {
		// "---" alone, or "items: []": nothing to read, like an empty file.
		return &InputError{Source: source, Err: errors.New("empty snapshot")}
	}
	return nil
}

// jsonTypeName names a Go kind as the JSON type that decodes into it.
func jsonTypeName(kind string) string {
	switch {
	case kind == "bool":
		return "a boolean"
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"), strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "string":
		return "a string"
	case kind == "slice", kind == "array":
		return "a list"
	case kind == "map", kind == "struct", kind == "ptr":
		return "a mapping"
	}
	return kind
}

// notAnObject says what a document that is not a Kubernetes object is,
// without Go's type names.
func notAnObject(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field == "" {
		return fmt.Errorf("not a Kubernetes object: the document is a %s, not a mapping with apiVersion and kind", typeErr.Value)
	}
	return fmt.Errorf("not a Kubernetes object: %w", err)
}

// errCutShort marks a document that looks truncated: a list whose kind,
// which the usual writers put after the items, is missing.
var errCutShort = errors.New("the snapshot looks cut short")

// header is the part of an object or a list read before deciding how to decode it.
type header struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// addDocument adds one decoded document: a list (flattened) or a single object.
// It returns an InputError without Source and Doc, which the caller fills in.
func (b *builder) addDocument(raw []byte) *InputError {
	var h header
	if err := json.Unmarshal(raw, &h); err != nil {
		return &InputError{Err: notAnObject(err)}
	}
	if h.Kind == "" && h.APIVersion == "" && h.Items != nil && len(h.Items) == 0 {
		return nil // "items: []": an empty list
	}
	if h.Kind == "" && len(h.Items) > 0 {
		// kubectl get -o yaml and snapshot -o yaml write the keys in order,
		// kind after items: a save cut short loses it, and its items are
		// fine. Say so rather than that the whole list is not an object.
		return &InputError{Err: fmt.Errorf("%w: a list of %d item(s) with no kind after them (kubectl get -o yaml and kubectl gang snapshot write kind: List last)", errCutShort, len(h.Items))}
	}
	if h.Kind == "" || h.APIVersion == "" {
		return &InputError{Err: errors.New("not a Kubernetes object: apiVersion and kind are required")}
	}
	if !strings.HasSuffix(h.Kind, "List") {
		if err := b.addObject(schema.FromAPIVersionAndKind(h.APIVersion, h.Kind), raw); err != nil {
			return &InputError{Err: err}
		}
		return nil
	}
	// A typed list (PodList, NodeList) may leave its items without apiVersion
	// and kind; a generic List must not.
	var itemGVK schema.GroupVersionKind
	if h.Kind != "List" {
		itemGVK = schema.FromAPIVersionAndKind(h.APIVersion, strings.TrimSuffix(h.Kind, "List"))
	}
	for i, item := range h.Items {
		var ih header
		if err := json.Unmarshal(item, &ih); err != nil {
			return &InputError{Item: i + 1, Err: notAnObject(err)}
		}
		gvk := itemGVK
		if ih.APIVersion != "" && ih.Kind != "" {
			gvk = schema.FromAPIVersionAndKind(ih.APIVersion, ih.Kind)
		}
		if gvk.Kind == "" {
			return &InputError{Item: i + 1, Err: errors.New("not a Kubernetes object: apiVersion and kind are required")}
		}
		if err := b.addObject(gvk, item); err != nil {
			return &InputError{Item: i + 1, Err: err}
		}
	}
	return nil
}

// addObject decodes one object of a known kind into the snapshot.
func (b *builder) addObject(gvk schema.GroupVersionKind, raw []byte) error {
	b.objects++
	keep, err := decodeObject(gvk, raw)
	if err != nil {
		return err
	}
	keep(b)
	return nil
}

// decodeObject decodes one object of a known kind and returns what adds it
// to a builder. It touches no builder, so objects can be decoded on every
// core and added in the order they were read (decodeInParallel).
func decodeObject(gvk schema.GroupVersionKind, raw []byte) (func(*builder), error) {
	if obj := newTyped(gvk); obj != nil {
		if err := decodeInto(raw, gvk, obj); err != nil {
			return nil, err
		}
		return keepTyped(obj)
	}
	switch {
	case gvk.Group == resourcev1.GroupName && slices.Contains(draKinds, gvk.Kind):
		// Another version is never guessed: v1beta1 differs from v1, and
		// v1beta2 is not what the API server returns once v1 exists.
		return nil, unsupportedVersion(gvk, raw, resourcev1.SchemeGroupVersion)
	case schedule.IsPodGroup(gvk), schedule.IsSystemObject(gvk):
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
		}
		if u.GetName() == "" {
			return nil, fmt.Errorf("%s has no metadata.name", gvk.Kind)
		}
		return func(b *builder) { b.addUnstructured(u) }, nil
	}
	return func(b *builder) { b.ignore(gvk) }, nil
}

// newTyped returns a new object of one of the built-in kinds a snapshot
// holds, at the version it reads; nil for other kinds.
func newTyped(gvk schema.GroupVersionKind) namedObject {
	switch gvk {
	case nodeGVK:
		return &corev1.Node{}
	case podGVK:
		return &corev1.Pod{}
	case namespaceGVK:
		return &corev1.Namespace{}
	case resourceQuotaGVK:
		return &corev1.ResourceQuota{}
	case priorityClassGVK:
		return &schedulingv1.PriorityClass{}
	case pdbGVK:
		return &policyv1.PodDisruptionBudget{}
	case pvcGVK:
		return &corev1.PersistentVolumeClaim{}
	case pvGVK:
		return &corev1.PersistentVolume{}
	case storageClassGVK:
		return &storagev1.StorageClass{}
	case resourceSliceGVK:
		return &resourcev1.ResourceSlice{}
	case deviceClassGVK:
		return &resourcev1.DeviceClass{}
	case claimGVK:
		return &resourcev1.ResourceClaim{}
	case claimTemplateGVK:
		return &resourcev1.ResourceClaimTemplate{}
	case taintRuleGVK:
		return &resourcev1.DeviceTaintRule{}
	case serviceGVK:
		return &corev1.Service{}
	case rcGVK:
		return &corev1.ReplicationController{}
	case replicaSetGVK:
		return &appsv1.ReplicaSet{}
	case statefulSetGVK:
		return &appsv1.StatefulSet{}
	case configMapGVK:
		// Only the Volcano scheduler's ConfigMap is kept
		// (pickVolcanoConfig); the others are ignored, as before.
		return &corev1.ConfigMap{}
	}
	return nil
}

// keepTyped returns what adds a decoded built-in object to a builder.
func keepTyped(obj namedObject) (func(*builder), error) {
	switch o := obj.(type) {
	case *corev1.Node:
		return func(b *builder) { b.addNode(o) }, nil
	case *corev1.Pod:
		// A hand-made snapshot may hold what the API server would refuse. A pod
		// with a UID was stored by an API server, maybe an older one with
		// fewer rules: only what none ever accepted is refused there
		// (docs/design.md#snapshot).
		schedule.DefaultPod(o)
		validate := schedule.ValidateResources
		if o.UID != "" {
			validate = schedule.ValidateStoredResources
		}
		if errs := validate(o); len(errs) > 0 {
			return nil, fmt.Errorf("pod %s/%s: %w", o.Namespace, o.Name, errs.ToAggregate())
		}
		return func(b *builder) { b.addPod(o) }, nil
	case *corev1.Namespace:
		return func(b *builder) { b.addNamespace(o) }, nil
	case *corev1.ResourceQuota:
		return func(b *builder) { b.addResourceQuota(o) }, nil
	case *schedulingv1.PriorityClass:
		return func(b *builder) { b.addPriorityClass(o) }, nil
	case *policyv1.PodDisruptionBudget:
		return func(b *builder) { b.addPDB(o) }, nil
	case *corev1.PersistentVolumeClaim:
		return func(b *builder) { b.addPVC(o) }, nil
	case *corev1.PersistentVolume:
		return func(b *builder) { b.addPV(o) }, nil
	case *storagev1.StorageClass:
		return func(b *builder) { b.addStorageClass(o) }, nil
	case *resourcev1.ResourceSlice:
		return func(b *builder) { b.addResourceSlice(o) }, nil
	case *resourcev1.DeviceClass:
		return func(b *builder) { b.addDeviceClass(o) }, nil
	case *resourcev1.ResourceClaim:
		return func(b *builder) { b.addResourceClaim(o) }, nil
	case *resourcev1.ResourceClaimTemplate:
		return func(b *builder) { b.addResourceClaimTemplate(o) }, nil
	case *resourcev1.DeviceTaintRule:
		return func(b *builder) { b.addDeviceTaintRule(o) }, nil
	case *corev1.Service:
		return func(b *builder) { b.addService(o) }, nil
	case *corev1.ReplicationController:
		return func(b *builder) { b.addReplicationController(o) }, nil
	case *appsv1.ReplicaSet:
		return func(b *builder) { b.addReplicaSet(o) }, nil
	case *appsv1.StatefulSet:
		return func(b *builder) { b.addStatefulSet(o) }, nil
	case *corev1.ConfigMap:
		return func(b *builder) { b.addConfigMap(o) }, nil
	}
	return nil, fmt.Errorf("%T is not a kind a snapshot holds", obj)
}

// draKinds are the Dynamic Resource Allocation kinds a snapshot holds, at
// resource.k8s.io/v1.
var draKinds = []string{resourceSliceGVK.Kind, deviceClassGVK.Kind, claimGVK.Kind, claimTemplateGVK.Kind, taintRuleGVK.Kind}

// unsupportedVersion refuses an object of a kind this build reads at want
// only, naming the object when it has a name.
func unsupportedVersion(gvk schema.GroupVersionKind, raw []byte, want schema.GroupVersion) error {
	what := gvk.Kind
	var m metav1.PartialObjectMetadata
	if json.Unmarshal(raw, &m) == nil && m.Name != "" {
		what += " " + objectName(&m)
	}
	return fmt.Errorf("%s: %s is not supported; this build reads %s %s", what, gvk.GroupVersion(), gvk.Kind, want)
}

// namedObject is what decodeInto needs of a typed object to name it in errors.
type namedObject interface {
	GetName() string
	GetNamespace() string
}

// decodeInto unmarshals raw into obj case-sensitively, as the API server would.
func decodeInto(raw []byte, gvk schema.GroupVersionKind, obj namedObject) error {
	strictErrs, err := sigsjson.UnmarshalStrict(raw, obj, sigsjson.DisallowDuplicateFields)
	if err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			// The field's path and the JSON types, not Go's.
			return fmt.Errorf("%s: %s: want %s, got %s", gvk.Kind, typeErr.Field, jsonTypeName(typeErr.Type.Kind().String()), typeErr.Value)
		}
		return fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	// Unknown fields are tolerated (newer servers add them); duplicates are not.
	for _, e := range strictErrs {
		if !strings.Contains(e.Error(), "unknown field") {
			return fmt.Errorf("%s %s: %w", gvk.Kind, objectName(obj), e)
		}
	}
	if obj.GetName() == "" {
		return fmt.Errorf("%s has no metadata.name", gvk.Kind)
	}
	return nil
}

func objectName(obj namedObject) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}
