package conformance

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseKlogLine(t *testing.T) {
	tests := []struct {
		line   string
		msg    string
		kv     map[string]string
		wantOK bool
	}{
		{
			line:   `I1121 14:38:16.123456   12345 schedule_one.go:1052] "Calculated node's final score for pod" pod="s1/s1-pending" node="s1-n03" score=300`,
			msg:    msgFinalScore,
			kv:     map[string]string{"pod": "s1/s1-pending", "node": "s1-n03", "score": "300"},
			wantOK: true,
		},
		{
			line:   `I1121 14:38:16.123456   12345 schedule_one.go:984] "Plugin scored node for pod" pod="s1/p" plugin="TaintToleration" node="n" score=0`,
			msg:    msgPluginScore,
			kv:     map[string]string{"pod": "s1/p", "plugin": "TaintToleration", "node": "n", "score": "0"},
			wantOK: true,
		},
		{
			line:   `I1121 14:38:16.2 1 schedule_one.go:483] "Successfully bound pod to node" pod="a/b" node="n1" evaluatedNodes=36 feasibleNodes=34`,
			msg:    msgBound,
			kv:     map[string]string{"pod": "a/b", "node": "n1", "evaluatedNodes": "36", "feasibleNodes": "34"},
			wantOK: true,
		},
		{
			line:   `I1121 14:38:16.2 1 x.go:1] "quoted \"value\" inside" err="a \"b\" c" n=1 trailing words`,
			msg:    `quoted "value" inside`,
			kv:     map[string]string{"err": `a "b" c`, "n": "1"},
			wantOK: true,
		},
		{line: `W1121 plain text without a structured message`},
		{line: `I1121 14:38:16.2 1 x.go:1] "unterminated`},
	}
	for _, tc := range tests {
		msg, kv, ok := parseKlogLine(tc.line)
		if ok != tc.wantOK || msg != tc.msg {
			t.Errorf("parseKlogLine(%q) = %q, %v; want %q, %v", tc.line, msg, ok, tc.msg, tc.wantOK)
			continue
		}
		if diff := cmp.Diff(tc.kv, kv); ok && diff != "" {
			t.Errorf("parseKlogLine(%q) pairs (-want +got):\n%s", tc.line, diff)
		}
	}
}

// TestSchedulerLogFollowsAppends feeds a log in pieces, a line split across
// two writes included, as kube-scheduler's writes may land.
func TestSchedulerLogFollowsAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kube-scheduler.log")
	write := func(s string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	write(`I1 1 schedule_one.go:1052] "Calculated node's final score for pod" pod="old/p" node="n0" score=1` + "\n")
	l := newSchedulerLog(path)
	if err := l.skipToEnd(); err != nil {
		t.Fatal(err)
	}
	write(`I1 1 schedule_one.go:984] "Plugin scored node for pod" pod="ns/p" plugin="ImageLocality" node="n1" score=7` + "\n" +
		`I1 1 schedule_one.go:1052] "Calculated node's final score for pod" pod="ns/p" node="n1" sco`)
	if _, ok, _ := l.waitBound("ns/p", 0); ok {
		t.Fatal("bound before the bind line")
	}
	write(`re=407` + "\n" + `I1 1 schedule_one.go:1052] "Calculated node's final score for pod" pod="ns/p" node="n2" score=12` + "\n" +
		`I1 1 schedule_one.go:483] "Successfully bound pod to node" pod="ns/p" node="n1" evaluatedNodes=3 feasibleNodes=2` + "\n")
	got, ok, err := l.waitBound("ns/p", time.Second)
	if err != nil || !ok {
		t.Fatalf("waitBound = %v, %v", ok, err)
	}
	want := &schedulerScores{
		Final:   map[string]int64{"n1": 407, "n2": 12},
		Plugins: map[string]map[string]int64{"n1": {"ImageLocality": 7}},
		Node:    "n1", EvaluatedNodes: 3, FeasibleNodes: 2,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
	if _, ok, _ := l.waitBound("old/p", 0); ok {
		t.Error("skipToEnd kept an old pod")
	}
}
