package snapshot

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// podListResponse is a PodList as the API server answers it in protobuf:
// magic, then the runtime.Unknown envelope.
func podListResponse(t *testing.T, list *corev1.PodList, kind string) []byte {
	t.Helper()
	raw, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: kind}, Raw: raw, ContentType: "application/vnd.kubernetes.protobuf"}
	env, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]byte(nil), protobufMagic...), env...)
}

// TestDecodePodListSharesAsGenerated checks the live read's pod lists: a
// protobuf PodList decodes to the list the generated Unmarshal gives (its
// pods defaulted as a load defaults them, its continue token and remaining
// count kept), with the pods of one template sharing their values; a
// response of another kind or not in protobuf is left to the typed client
// (ok false), and a malformed one is an error.
func TestDecodePodListSharesAsGenerated(t *testing.T) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next-page", RemainingItemCount: new(int64(7))}}
	for _, p := range sharingPods() {
		list.Items = append(list.Items, *p)
	}
	body := podListResponse(t, list, "PodList")

	got, ok, err := newBinaryDecoder().decodePodList(body)
	if err != nil || !ok {
		t.Fatalf("decodePodList: ok %v, %v", ok, err)
	}
	raw, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.PodList{}
	if err := want.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	// Compared defaulted, as a load defaults every pod.
	for i := range want.Items {
		schedule.DefaultPod(&want.Items[i])
		schedule.DefaultPod(&got.Items[i])
	}
	if diff := testutil.Diff(want, got); diff != "" {
		t.Errorf("decodePodList (-generated +got):\n%s", diff)
	}
	if got.Continue != "next-page" || got.ResourceVersion != "42" || got.RemainingItemCount == nil || *got.RemainingItemCount != 7 {
		t.Errorf("list meta = %+v, want the continue token, version and count", got.ListMeta)
	}
	a, b := got.Items[0], got.Items[1]
	if reflect.ValueOf(a.Spec.Containers).UnsafePointer() != reflect.ValueOf(b.Spec.Containers).UnsafePointer() ||
		reflect.ValueOf(a.Labels).UnsafePointer() != reflect.ValueOf(b.Labels).UnsafePointer() {
		t.Errorf("pods of one template do not share their containers and labels")
	}

	if _, ok, err := newBinaryDecoder().decodePodList(podListResponse(t, list, "NodeList")); ok || err != nil {
		t.Errorf("another kind: ok %v, %v; want it left to the typed client", ok, err)
	}
	if _, ok, err := newBinaryDecoder().decodePodList([]byte(`{"kind":"PodList","apiVersion":"v1","items":[]}`)); ok || err != nil {
		t.Errorf("JSON: ok %v, %v; want it left to the typed client", ok, err)
	}
	cut := body[:len(body)-10]
	if _, _, err := newBinaryDecoder().decodePodList(cut); err == nil || !strings.Contains(err.Error(), "decoding the pod list") {
		t.Errorf("a response cut short: %v, want an error", err)
	}
}

// TestListPodsAnswersAsTheTypedClient checks listPods against an HTTP
// server that answers as API servers and proxies may: a JSON PodList is
// decoded from the one answer (no second request), and a failure is the
// server's Status, as the typed client returns it: an expired continue
// token is IsResourceExpired (kubelist.List then lists in full again), a
// refusal keeps RBAC's message.
func TestListPodsAnswersAsTheTypedClient(t *testing.T) {
	var requests atomic.Int32
	answer := func(w http.ResponseWriter, code int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/api/v1/pods" {
			answer(w, http.StatusNotFound, `{}`)
			return
		}
		switch r.URL.Query().Get("continue") {
		case "expired":
			answer(w, http.StatusGone, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"The provided continue parameter is too old","reason":"Expired","code":410}`)
		case "forbidden":
			answer(w, http.StatusForbidden, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods is forbidden: User \"u\" cannot list resource \"pods\"","reason":"Forbidden","details":{"kind":"pods"},"code":403}`)
		default:
			answer(w, http.StatusOK, `{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"next"},"items":[{"metadata":{"name":"a","namespace":"ml"}}]}`)
		}
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	list := listPods(cs)

	obj, err := list(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("a JSON answer: %v", err)
	}
	pods := obj.(*corev1.PodList)
	if len(pods.Items) != 1 || pods.Items[0].Name != "a" || pods.Continue != "next" || requests.Load() != 1 {
		t.Errorf("a JSON answer: %d pod(s), continue %q, %d request(s); want pod a, continue next, one request", len(pods.Items), pods.Continue, requests.Load())
	}
	if _, err := list(t.Context(), metav1.ListOptions{Continue: "expired"}); !apierrors.IsResourceExpired(err) {
		t.Errorf("an expired continue token: %v, want IsResourceExpired", err)
	}
	if _, err := list(t.Context(), metav1.ListOptions{Continue: "forbidden"}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot list resource "pods"`) {
		t.Errorf("a refusal: %v, want IsForbidden with RBAC's message", err)
	}
}
