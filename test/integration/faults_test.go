package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

// The read path under a misbehaving API server (issue #41): a fault-injecting
// loopback proxy in front of the test bed's kube-apiserver answers one
// request of a kind with a fault, at each step (the first page of a LIST,
// a later page), and every run either gives the answer a healthy server gives
// or one clear error line with its exit code, never another answer.

// readFault is one way a server misbehaves on one request.
type readFault struct {
	name string
	// answer answers the request instead of, or around, the server.
	answer func(t *testing.T, w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter))
	// recovers says a client must get past it (the server said when to
	// retry, or the list can be read again): the run must answer.
	recovers bool
	// needsToken: only a later page can carry it.
	needsToken bool
}

func statusBody(code int, reason, message string) string {
	return fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`, message, reason, code)
}

var readFaults = []readFault{
	{name: "410 Gone: the continue token expired", recovers: true, needsToken: true, answer: func(_ *testing.T, w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusGone)
		fmt.Fprint(w, statusBody(http.StatusGone, "Expired", "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."))
	}},
	{name: "429 with Retry-After", recovers: true, answer: func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ func(http.ResponseWriter)) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, statusBody(http.StatusTooManyRequests, "TooManyRequests", "too many requests, please try again later"))
	}},
	{name: "503 with Retry-After", recovers: true, answer: func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ func(http.ResponseWriter)) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, statusBody(http.StatusServiceUnavailable, "ServiceUnavailable", "the server is currently unable to handle the request"))
	}},
	{name: "500", answer: func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ func(http.ResponseWriter)) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, statusBody(http.StatusInternalServerError, "InternalError", "etcdserver: request timed out"))
	}},
	{name: "a truncated body", answer: func(_ *testing.T, w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
		rec := httptest.NewRecorder()
		forward(rec)
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		body := rec.Body.Bytes()
		_, _ = w.Write(body[:len(body)/2])
	}},
	{name: "a malformed body", answer: func(_ *testing.T, w http.ResponseWriter, r *http.Request, _ func(http.ResponseWriter)) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":`)
	}},
	{name: "a list of another kind", answer: func(_ *testing.T, w http.ResponseWriter, r *http.Request, _ func(http.ResponseWriter)) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`)
	}},
	{name: "a dropped connection", answer: func(t *testing.T, w http.ResponseWriter, _ *http.Request, _ func(http.ResponseWriter)) {
		dropConnection(t, w)
	}},
	{name: "no answer within the request timeout", answer: func(_ *testing.T, _ http.ResponseWriter, r *http.Request, _ func(http.ResponseWriter)) {
		// The runs give up after 3s (--request-timeout); the bound keeps a
		// connection the client left open from holding the proxy's Close.
		select {
		case <-r.Context().Done():
		case <-time.After(4 * time.Second):
		}
	}},
}

// faultStep is where a fault strikes: the first request of a LIST's first
// page, or of a later page (one that carries a continue token).
type faultStep struct {
	name  string
	path  string
	later bool
}

func (s faultStep) match(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == s.path && r.URL.Query().Get("watch") == "" &&
		(r.URL.Query().Get("continue") != "") == s.later
}

var readSteps = []faultStep{
	{"the first page of pods", "/api/v1/pods", false},
	{"a later page of pods", "/api/v1/pods", true},
	{"a later page of nodes", "/api/v1/nodes", true},
	{"the first page of native PodGroups", "/apis/scheduling.k8s.io/v1beta1/podgroups", false},
}

// faultyKubeconfig is a kubeconfig whose server answers the step's request
// with the fault, once, and forwards everything else.
func faultyKubeconfig(t *testing.T, ns string, fault readFault, step faultStep) (string, *atomic.Bool) {
	var struck atomic.Bool
	return faultKubeconfig(t, ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
		if step.match(r) && struck.CompareAndSwap(false, true) {
			fault.answer(t, w, r, forward)
			return
		}
		forward(w)
	}), &struck
}

// snapshotKeys is what a snapshot holds, as kind/namespace/name, sorted.
func snapshotKeys(t *testing.T, out string) []string {
	t.Helper()
	var list struct {
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("not a snapshot: %v\n%.300s", err, out)
	}
	var keys []string
	for _, it := range list.Items {
		keys = append(keys, it.Kind+"/"+it.Metadata.Namespace+"/"+it.Metadata.Name)
	}
	slices.Sort(keys)
	return keys
}

// wantAnswerOrOneLine checks a run under a fault: the healthy answer, or
// (when the fault is not one a client gets past) one error line and exit 1.
func wantAnswerOrOneLine(t *testing.T, fault readFault, code int, out, stderr string, same func() bool) {
	t.Helper()
	switch {
	case code == cmd.ExitError && !fault.recovers:
		wantErrorLine(t, cmd.ExitError, code, out, stderr)
	case code == cmd.ExitError:
		t.Errorf("exit 1 (%q); a client gets past %s: want the answer", stderr, fault.name)
	case !same():
		t.Errorf("exit %d and another answer than a healthy server's (stderr %q)", code, stderr)
	}
}

// eachReadFault runs the command run makes with a kubeconfig at every
// fault of readFaults, at every step of readSteps, and checks that it
// answers as a healthy server lets it (same) or fails in one line.
func eachReadFault(t *testing.T, ns string, run func(kubeconfig string) (int, string, string), same func(code int, out string) bool) {
	for _, step := range readSteps {
		for _, fault := range readFaults {
			if fault.needsToken && !step.later {
				continue
			}
			t.Run(step.name+"/"+fault.name, func(t *testing.T) {
				kubeconfig, struck := faultyKubeconfig(t, ns, fault, step)
				code, out, stderr := run(kubeconfig)
				if !struck.Load() {
					t.Fatalf("the fault never struck (exit %d)", code)
				}
				wantAnswerOrOneLine(t, fault, code, out, stderr, func() bool { return same(code, out) })
			})
		}
	}
}

func TestSnapshotUnderFaults(t *testing.T) {
	f := newGangFixture(t, "faults-snapshot")
	f.gang3()
	// snapshot reads every namespace: no -n.
	run := func(kubeconfig string) (int, string, string) {
		return runCLI(t, "", "snapshot", "-o", "json", "--page-size", "2", "--request-timeout", "3s", "--kubeconfig", kubeconfig)
	}
	code, clean, stderr := run(env.Kubeconfig)
	if code != cmd.ExitOK {
		t.Fatalf("healthy: exit %d: %s", code, stderr)
	}
	want := snapshotKeys(t, clean)
	eachReadFault(t, f.ns, run, func(_ int, out string) bool { return slices.Equal(snapshotKeys(t, out), want) })
}

// explain reads the same way: its verdict under a fault is the healthy
// server's, or one error line.
func TestExplainUnderFaults(t *testing.T) {
	f := newGangFixture(t, "faults-explain")
	f.gang3()
	run := func(kubeconfig string) (int, string, string) {
		return f.runAs(kubeconfig, "explain", "podgroup/trio", "--page-size", "2", "--request-timeout", "3s", "-o", "jsonpath={.verdict} {.message}")
	}
	code, clean, stderr := run(env.Kubeconfig)
	if code != cmd.ExitOK || !strings.HasPrefix(clean, "Schedulable ") {
		t.Fatalf("healthy: exit %d, %q: %s", code, clean, stderr)
	}
	eachReadFault(t, f.ns, run, func(code int, out string) bool { return code == cmd.ExitOK && out == clean })
}

// bindSteps are the reads of bind's protocol a fault may strike: the
// snapshot, the re-read (a GET per member for a small gang; the versions of
// every pod for a large one) and the read-back after the Bindings.
var bindSteps = []struct {
	faultStep
	// nth is which matching request the fault strikes (from 1).
	nth  int32
	args []string
}{
	{faultStep{name: "a later page of pods (the snapshot)", path: "/api/v1/pods", later: true}, 1, nil},
	{faultStep{name: "the re-read of a member"}, 1, nil},
	{faultStep{name: "the read-back of a member"}, 2, nil},
	{faultStep{name: "the re-read's pod versions", path: "/api/v1/pods"}, 1, []string{"--bulk-reads=-1"}},
}

// bind under a fault in its reads never reports a member bound that the
// server does not hold bound, nor unbound one it does, its exit code says
// what it did, and no Binding is sent twice.
func TestBindUnderFaults(t *testing.T) {
	for i, step := range bindSteps {
		for j, fault := range readFaults {
			if fault.needsToken && !step.later {
				continue
			}
			t.Run(step.name+"/"+fault.name, func(t *testing.T) {
				f := newGangFixture(t, fmt.Sprintf("faults-bind-%d-%d", i, j))
				f.gang3()
				var seen atomic.Int32
				var struck atomic.Bool
				var mu sync.Mutex
				bindings := map[string]int{}
				member := "/api/v1/namespaces/" + f.ns + "/pods/m-0"
				kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
					if isBinding(r) && r.URL.Query().Get("dryRun") == "" {
						mu.Lock()
						bindings[bindingPod(r)]++
						mu.Unlock()
					}
					var match bool
					switch step.name {
					case "the re-read of a member", "the read-back of a member":
						match = r.Method == http.MethodGet && r.URL.Path == member
					case "the re-read's pod versions":
						match = r.Method == http.MethodGet && r.URL.Path == step.path && strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadataList")
					default:
						match = step.match(r)
					}
					if match && seen.Add(1) == step.nth {
						struck.Store(true)
						fault.answer(t, w, r, forward)
						return
					}
					forward(w)
				})
				args := append([]string{"bind", "podgroup/trio", "-o", "json", "--request-timeout", "3s", "--page-size", "2",
					"--kubeconfig", kubeconfig, "-n", f.ns}, step.args...)
				code, out, stderr := runCLI(t, "", args...)
				if !struck.Load() {
					t.Fatalf("the fault never struck (exit %d, stderr %q)", code, stderr)
				}
				bound := f.boundCount("m", 3)
				for pod, n := range bindings {
					if n > 1 {
						t.Errorf("%d Bindings sent for %s", n, pod)
					}
				}
				if code == cmd.ExitError {
					wantErrorLine(t, cmd.ExitError, code, out, stderr)
					if bound != 0 {
						t.Errorf("exit 1, but %d members are bound", bound)
					}
					return
				}
				var r bindJSON
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatalf("exit %d; stdout is not a report: %v\n%s\nstderr: %s", code, err, out, stderr)
				}
				held := f.boundNodes("m-0", "m-1", "m-2")
				for _, m := range r.Members {
					on := held[strings.TrimPrefix(m.Pod, f.ns+"/")]
					switch {
					case m.Result == "Bound" && (on == "" || on == "<deleted>"):
						t.Errorf("%s reported Bound; the server holds it unbound", m.Pod)
					case m.Result == "NotBound" && on != "":
						t.Errorf("%s reported NotBound; the server holds it on %s", m.Pod, on)
					}
				}
				want := map[int]string{cmd.ExitOK: "Bound", cmd.ExitNo: "NotBound", cmd.ExitPartial: "PartiallyBound", cmd.ExitUnverified: "Unverified"}
				switch {
				case want[code] != r.Verdict && !(code == cmd.ExitUnverified && r.Verdict == "Overcommitted"):
					t.Errorf("exit %d with verdict %s", code, r.Verdict)
				case r.Verdict == "Bound" && bound != 3, r.Verdict == "NotBound" && bound != 0:
					t.Errorf("verdict %s, %d of 3 bound on the server", r.Verdict, bound)
				case fault.recovers && r.Verdict != "Bound":
					t.Errorf("a client gets past %s: verdict %s (%s), want Bound", fault.name, r.Verdict, r.Message)
				}
			})
		}
	}
}

// admit --ungate under a fault in the reads and the writes of its release:
// it never reports a member released that still carries the gate, nor says
// nothing of one it released; a run that fails says in its one line which
// members it released already.
func TestAdmitUngateUnderFaults(t *testing.T) {
	steps := []struct {
		name string
		// method and nth: the nth request of method on member m-1.
		method string
		nth    int32
	}{
		{"the re-read of a member", http.MethodGet, 1},
		{"the update of a member", http.MethodPut, 1},
	}
	for i, step := range steps {
		for j, fault := range readFaults {
			if fault.needsToken {
				continue
			}
			t.Run(step.name+"/"+fault.name, func(t *testing.T) {
				f := newGangFixture(t, fmt.Sprintf("faults-ungate-%d-%d", i, j))
				f.nodes(3)
				f.nativePodGroup("rel", 3)
				for k := range 3 {
					f.create(f.pod(fmt.Sprintf("m-%d", k), wholeNode).PodGroup("rel").SchedulingGate(gangGate).Obj())
				}
				var seen atomic.Int32
				var struck atomic.Bool
				member := "/api/v1/namespaces/" + f.ns + "/pods/m-1"
				kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
					if r.Method == step.method && r.URL.Path == member && seen.Add(1) == step.nth {
						struck.Store(true)
						fault.answer(t, w, r, forward)
						return
					}
					forward(w)
				})
				// No scheduler runs here: no wait for one to bind (--wait-bound=0).
				code, out, stderr := runCLI(t, "", "admit", "podgroup/rel", "--ungate", gangGate, "--wait-bound=0", "-o", "json", "--request-timeout", "3s",
					"--kubeconfig", kubeconfig, "-n", f.ns)
				if !struck.Load() {
					t.Fatalf("the fault never struck (exit %d, stderr %q)", code, stderr)
				}
				released := map[string]bool{}
				for _, pod := range []string{"m-0", "m-1", "m-2"} {
					released[f.key(pod)] = len(f.podGates(pod)) == 0
				}
				if code == cmd.ExitError {
					wantErrorLine(t, cmd.ExitError, code, out, stderr)
					// The line names every member released already.
					for key, off := range released {
						if off && !strings.Contains(stderr, key) {
							t.Errorf("exit 1 with %q, which does not say %s was released", stderr, key)
						}
					}
					return
				}
				var a admissionJSON
				if err := json.Unmarshal([]byte(out), &a); err != nil || a.Ungate == nil {
					t.Fatalf("exit %d; stdout is no admission with an ungate report (%v)\n%s\nstderr: %s", code, err, out, stderr)
				}
				for key, off := range released {
					if said := slices.Contains(a.Ungate.Ungated, key); off != said {
						t.Errorf("%s: released on the server %v, reported ungated %v (report %+v)", key, off, said, *a.Ungate)
					}
				}
				if fault.recovers && (code != cmd.ExitOK || len(a.Ungate.Ungated) != 3) {
					t.Errorf("a client gets past %s: exit %d, report %+v", fault.name, code, *a.Ungate)
				}
			})
		}
	}
}
