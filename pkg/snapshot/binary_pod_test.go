package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// sharingPods are pods of one template (equal containers, labels,
// annotations and owner references), one of them with hostNetwork, and one
// of another template.
func sharingPods() []*corev1.Pod {
	pod := func(name string, hostNetwork bool, gpus string) *corev1.Pod {
		p := testutil.MakePod().Name(name).Namespace("ml").UID("uid-"+name).Node("n1").
			Label("app", "train").Annotation("team", "ml").Phase(corev1.PodRunning).Obj()
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "train", UID: "job-uid"}}
		p.Spec.HostNetwork = hostNetwork
		p.Spec.Containers = []corev1.Container{{
			Name:  "main",
			Image: "trainer",
			Ports: []corev1.ContainerPort{{ContainerPort: 9090}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				"nvidia.com/gpu": resource.MustParse(gpus),
				"cpu":            resource.MustParse("2"),
			}},
		}}
		return p
	}
	return []*corev1.Pod{pod("a", false, "4"), pod("b", false, "4"), pod("host", true, "4"), pod("other", false, "8")}
}

// writeBinaryFile writes snap as a binary snapshot file and returns its path.
func writeBinaryFile(t *testing.T, snap *schedule.Snapshot) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteBinary(&buf, snap); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cluster.pb")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBinaryPodsShareEqualValues checks that pods read from a binary
// snapshot share the containers, labels, annotations and owner references
// their records hold byte for byte (docs/design.md#the-snapshot-file),
// that each is defaulted as the API server defaults it (hostNetwork pods
// apart), and that the snapshot is the one the JSON form gives.
func TestBinaryPodsShareEqualValues(t *testing.T) {
	snap := &schedule.Snapshot{
		Nodes: []*corev1.Node{testutil.MakeNode().Name("n1").Obj()},
		Pods:  sharingPods(),
	}
	snap.Sort()
	var js bytes.Buffer
	if err := WriteJSON(&js, snap, false); err != nil {
		t.Fatal(err)
	}
	fromJSON, _, err := LoadFiles(Stdin, &js)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := LoadFiles(writeBinaryFile(t, snap), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := testutil.Diff(fromJSON, got); diff != "" {
		t.Fatalf("binary against JSON (-json +binary):\n%s", diff)
	}
	pods := map[string]*corev1.Pod{}
	for _, p := range got.Pods {
		pods[p.Name] = p
	}
	a, b, host, other := pods["a"], pods["b"], pods["host"], pods["other"]
	same := func(x, y any) bool { return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() }
	for _, c := range []struct {
		what string
		x, y any
		want bool
	}{
		{"containers of one template", a.Spec.Containers, b.Spec.Containers, true},
		{"labels", a.Labels, b.Labels, true},
		{"annotations", a.Annotations, other.Annotations, true},
		{"owner references", a.OwnerReferences, b.OwnerReferences, true},
		{"containers with and without hostNetwork", a.Spec.Containers, host.Spec.Containers, false},
		{"containers of other requests", a.Spec.Containers, other.Spec.Containers, false},
	} {
		if got := same(c.x, c.y); got != c.want {
			t.Errorf("%s shared: %v, want %v", c.what, got, c.want)
		}
	}
	if got := host.Spec.Containers[0].Ports[0].HostPort; got != 9090 {
		t.Errorf("hostNetwork pod's hostPort = %d, want the containerPort 9090", got)
	}
	if got := a.Spec.Containers[0].Ports[0].HostPort; got != 0 {
		t.Errorf("pod's hostPort = %d, want 0", got)
	}
	if q := a.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"]; q.String() != "4" {
		t.Errorf("requests default to limits: nvidia.com/gpu request = %s, want 4", q.String())
	}
	if len(a.OwnerReferences) != cap(a.OwnerReferences) || len(a.Spec.Containers) != cap(a.Spec.Containers) {
		t.Errorf("shared slices have room to append into")
	}
}

// TestDecodePodAsGenerated checks that decodePod gives the pod the
// generated Unmarshal gives (defaulted, as loading defaults every pod), and
// the same error, for the bytes the API server writes and for bytes of
// other shapes, which it leaves to the generated code.
func TestDecodePodAsGenerated(t *testing.T) {
	pod := sharingPods()[2]
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "side", Image: "side"})
	data, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	field := func(num int, value []byte) []byte {
		b := binary.AppendUvarint(nil, uint64(num)<<3|wireBytes)
		b = binary.AppendUvarint(b, uint64(len(value)))
		return append(b, value...)
	}
	moreMeta := field(podMetadataField, field(metaLabelsField, append(field(1, []byte("extra")), field(2, []byte("yes"))...)))
	moreSpec := field(podSpecField, field(specContainers, field(1, []byte("third"))))
	tests := map[string][]byte{
		"as written":             data,
		"metadata given twice":   append(bytes.Clone(data), moreMeta...),
		"spec given twice":       append(bytes.Clone(data), moreSpec...),
		"metadata first, twice":  append(bytes.Clone(moreMeta), data...),
		"containers as a number": append(bytes.Clone(data), field(podSpecField, []byte{specContainers << 3, 1})...),
		"hostNetwork as bytes":   append(bytes.Clone(data), field(podSpecField, field(specHostNetwork, []byte{1}))...),
		"cut short":              data[:len(data)-3],
		"a length past the end":  append(bytes.Clone(data), podMetadataField<<3|wireBytes, 0x7f),
		"a group":                append(bytes.Clone(data), 9<<3|3),
		"empty":                  nil,
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			want := &corev1.Pod{}
			wantErr := want.Unmarshal(data)
			d := newBinaryDecoder()
			for range 2 { // the second time from the decoder's tables
				got, err := d.decodePod(data)
				if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
					t.Fatalf("err = %v, want %v", err, wantErr)
				}
				if err != nil {
					return
				}
				schedule.DefaultPod(want)
				schedule.DefaultPod(got)
				if diff := testutil.Diff(want, got); diff != "" {
					t.Errorf("decodePod against Unmarshal (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestBinaryCorruptedPod checks that a pod record whose protobuf bytes are
// damaged is one line naming the record (exit 2), read from a file or from
// stdin.
func TestBinaryCorruptedPod(t *testing.T) {
	snap := &schedule.Snapshot{Pods: sharingPods()}
	path := writeBinaryFile(t, snap)
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A pod whose metadata's length runs past the end of its bytes.
	body := appendString(appendString(nil, "v1"), "Pod")
	body = append(body, encodingProtobuf, 2, podMetadataField<<3|wireBytes, 0x7f)
	damaged := append([]byte(BinaryMagic), binaryVersion)
	damaged = binary.AppendUvarint(damaged, uint64(len(body)))
	damaged = append(damaged, body...)
	damaged = append(damaged, 0, 1)
	damagedPath := filepath.Join(t.TempDir(), "damaged.pb")
	if err := os.WriteFile(damagedPath, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.pb")
	if err := os.WriteFile(cut, whole[:len(whole)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path, want string }{
		{"damaged file", damagedPath, damagedPath + ": item 1: Pod: "},
		{"damaged stdin", Stdin, "<stdin>: item 1: Pod: "},
		{"cut file", cut, cut + ": the snapshot looks cut short: its end record is incomplete"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := LoadFiles(c.path, bytes.NewReader(damaged))
			var inputErr *InputError
			if !errors.As(err, &inputErr) {
				t.Fatalf("err = %v (%T), want an *InputError", err, err)
			}
			if !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %q, want one line starting %q", err, c.want)
			}
		})
	}
}

// TestBinaryCountHint checks the count read from a file's end record, and
// that a file that does not end in one gives no hint.
func TestBinaryCountHint(t *testing.T) {
	snap := &schedule.Snapshot{Pods: sharingPods()}
	var buf bytes.Buffer
	if err := WriteBinary(&buf, snap); err != nil {
		t.Fatal(err)
	}
	whole := buf.Bytes()
	for _, c := range []struct {
		name string
		data []byte
		want int
	}{
		{"whole", whole, 4},
		{"cut inside the count", append(bytes.Clone(whole[:len(whole)-1]), 0x80), 0},
		{"cut before the end record", whole[:len(whole)-2], 0},
		{"too short", whole[:5], 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := binaryCountHint(bytes.NewReader(c.data), int64(len(c.data))); got != c.want {
				t.Errorf("hint = %d, want %d", got, c.want)
			}
		})
	}
}
