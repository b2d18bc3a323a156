package snapshot

import (
	"encoding/binary"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Pods of a binary snapshot share what is equal between them
// (docs/design.md#the-snapshot-file): the pods of one template have the
// same containers, labels, annotations and owner references, byte for
// byte, and on a large cluster their maps were most of the memory a load
// takes, and so most of its time (a fresh page costs far more than
// decoding into it). A pod's containers, its labels, its annotations and
// its owner references are looked up by their protobuf bytes among the
// ones this worker decoded before; equal bytes decode to an equal value,
// so the pod is the one the generated Unmarshal gives, with its maps,
// slices and pointers shared. The snapshot's objects are read-only (a
// what-if copies a pod before it changes it), which is what makes that
// safe.

// maxShared bounds each table of shared values of a worker: a cluster
// whose pods are all different (labels naming the pod) fills it once and
// decodes the rest as they come.
const maxShared = 1 << 13

// The protobuf field numbers read here (k8s.io/api/core/v1 and
// k8s.io/apimachinery/pkg/apis/meta/v1 generated.proto).
const (
	podMetadataField   = 1
	podSpecField       = 2
	metaLabelsField    = 11
	metaAnnotField     = 12
	metaOwnerRefsField = 13
	specContainers     = 2
	specHostNetwork    = 11
)

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// sharedTables are the values a worker shares between pods, by their
// bytes (for containers, a byte for hostNetwork first).
type sharedTables struct {
	containers  map[string][]corev1.Container
	labels      map[string]map[string]string
	annotations map[string]map[string]string
	ownerRefs   map[string][]metav1.OwnerReference
}

func newSharedTables() sharedTables {
	return sharedTables{
		containers:  map[string][]corev1.Container{},
		labels:      map[string]map[string]string{},
		annotations: map[string]map[string]string{},
		ownerRefs:   map[string][]metav1.OwnerReference{},
	}
}

// binaryDecoder decodes the records of a binary snapshot on one worker.
type binaryDecoder struct {
	tables sharedTables
	// Scratch buffers: the fields decoded by the generated code, and the
	// bytes of the shared ones.
	rest, meta, spec, key              []byte
	labelBytes, annotBytes, ownerBytes []byte
}

func newBinaryDecoder() *binaryDecoder {
	return &binaryDecoder{tables: newSharedTables()}
}

// protoField reads the field at the start of b: its number, wire type, its
// value (the payload, for length-delimited fields), and the length of the
// whole field, tag included. ok is false for anything malformed and for
// groups, which the API types do not use.
func protoField(b []byte) (num uint64, wire int, value []byte, size int, ok bool) {
	tag, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, nil, 0, false
	}
	num, wire = tag>>3, int(tag&7)
	rest := b[n:]
	switch wire {
	case wireVarint:
		_, m := binary.Uvarint(rest)
		if m <= 0 {
			return 0, 0, nil, 0, false
		}
		return num, wire, rest[:m], n + m, true
	case wireFixed64, wireFixed32:
		m := 8
		if wire == wireFixed32 {
			m = 4
		}
		if len(rest) < m {
			return 0, 0, nil, 0, false
		}
		return num, wire, rest[:m], n + m, true
	case wireBytes:
		l, m := binary.Uvarint(rest)
		if m <= 0 || l > uint64(len(rest)-m) {
			return 0, 0, nil, 0, false
		}
		return num, wire, rest[m : m+int(l)], n + m + int(l), true
	}
	return 0, 0, nil, 0, false
}

// decodePod decodes a Pod's protobuf bytes as (*corev1.Pod).Unmarshal
// does, sharing values with the pods decoded before. Bytes of any other
// shape than the API server's (a field given twice, a wrong wire type,
// anything malformed) are left to the generated Unmarshal, which says
// what is wrong as it always has.
func (d *binaryDecoder) decodePod(data []byte) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	return pod, d.decodePodInto(pod, data)
}

// decodePodInto is decodePod into pod, which is zero (a live read decodes
// into its list's items).
func (d *binaryDecoder) decodePodInto(pod *corev1.Pod, data []byte) error {
	if d.sharedPod(pod, data) {
		return nil
	}
	*pod = corev1.Pod{}
	return pod.Unmarshal(data)
}

// sharedPod is decodePodInto's way for bytes of the usual shape; pod is
// left part written when it says no.
func (d *binaryDecoder) sharedPod(pod *corev1.Pod, data []byte) bool {
	var meta, spec []byte
	var sawMeta, sawSpec bool
	rest := d.rest[:0]
	for b := data; len(b) > 0; {
		num, wire, value, size, ok := protoField(b)
		if !ok {
			return false
		}
		switch num {
		case podMetadataField, podSpecField:
			seen := &sawMeta
			target := &meta
			if num == podSpecField {
				seen, target = &sawSpec, &spec
			}
			if wire != wireBytes || *seen {
				return false
			}
			*seen, *target = true, value
		default:
			rest = append(rest, b[:size]...)
		}
		b = b[size:]
	}
	d.rest = rest
	if sawMeta && !d.sharedMeta(&pod.ObjectMeta, meta) {
		return false
	}
	if sawSpec && !d.sharedSpec(&pod.Spec, spec) {
		return false
	}
	return pod.Unmarshal(d.rest) == nil
}

// sharedMeta decodes an ObjectMeta, its labels, annotations and owner
// references shared.
func (d *binaryDecoder) sharedMeta(meta *metav1.ObjectMeta, data []byte) bool {
	// Each of the three is the concatenation of its fields: a map's
	// entries and a list's items, in order, as the generated code reads
	// them one after the other.
	rest, labels, annotations, owners := d.meta[:0], d.labelBytes[:0], d.annotBytes[:0], d.ownerBytes[:0]
	for b := data; len(b) > 0; {
		num, _, _, size, ok := protoField(b)
		if !ok {
			return false
		}
		switch num {
		case metaLabelsField:
			labels = append(labels, b[:size]...)
		case metaAnnotField:
			annotations = append(annotations, b[:size]...)
		case metaOwnerRefsField:
			owners = append(owners, b[:size]...)
		default:
			rest = append(rest, b[:size]...)
		}
		b = b[size:]
	}
	d.meta, d.labelBytes, d.annotBytes, d.ownerBytes = rest, labels, annotations, owners
	if err := meta.Unmarshal(rest); err != nil {
		return false
	}
	if len(labels) > 0 {
		m, ok := sharedValue(d.tables.labels, labels, func(v *metav1.ObjectMeta) map[string]string { return v.Labels })
		if !ok {
			return false
		}
		meta.Labels = m
	}
	if len(annotations) > 0 {
		m, ok := sharedValue(d.tables.annotations, annotations, func(v *metav1.ObjectMeta) map[string]string { return v.Annotations })
		if !ok {
			return false
		}
		meta.Annotations = m
	}
	if len(owners) > 0 {
		refs, ok := sharedValue(d.tables.ownerRefs, owners, func(v *metav1.ObjectMeta) []metav1.OwnerReference {
			return slices.Clip(v.OwnerReferences)
		})
		if !ok {
			return false
		}
		meta.OwnerReferences = refs
	}
	return true
}

// sharedValue returns the part of an ObjectMeta that fields decode to,
// from table when the same bytes were decoded before.
func sharedValue[T any](table map[string]T, fields []byte, part func(*metav1.ObjectMeta) T) (T, bool) {
	if v, ok := table[string(fields)]; ok {
		return v, true
	}
	var m metav1.ObjectMeta
	if err := m.Unmarshal(fields); err != nil {
		var zero T
		return zero, false
	}
	v := part(&m)
	if len(table) < maxShared {
		table[string(fields)] = v
	}
	return v, true
}

// sharedSpec decodes a PodSpec, its list of containers shared: as
// schedule.DefaultContainer leaves each (with the pod's hostNetwork), so
// that defaulting the pod later writes nothing to what other pods hold.
func (d *binaryDecoder) sharedSpec(spec *corev1.PodSpec, data []byte) bool {
	// The key: hostNetwork, then the containers' fields, in order.
	key := append(d.key[:0], 0)
	rest := d.spec[:0]
	for b := data; len(b) > 0; {
		num, wire, value, size, ok := protoField(b)
		if !ok {
			return false
		}
		switch num {
		case specContainers:
			key = append(key, b[:size]...)
		case specHostNetwork:
			if wire != wireVarint {
				return false
			}
			v, _ := binary.Uvarint(value)
			key[0] = 0
			if v != 0 {
				key[0] = 1
			}
			rest = append(rest, b[:size]...)
		default:
			rest = append(rest, b[:size]...)
		}
		b = b[size:]
	}
	d.spec, d.key = rest, key
	if len(key) > 1 {
		containers, ok := d.tables.containers[string(key)]
		if !ok {
			var s corev1.PodSpec
			if s.Unmarshal(key[1:]) != nil {
				return false
			}
			containers = slices.Clip(s.Containers)
			for i := range containers {
				schedule.DefaultContainer(&containers[i], key[0] == 1)
			}
			if len(d.tables.containers) < maxShared {
				d.tables.containers[string(key)] = containers
			}
		}
		spec.Containers = containers
	}
	return spec.Unmarshal(rest) == nil
}
