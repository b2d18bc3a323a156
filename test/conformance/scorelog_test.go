package conformance

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// The kube-scheduler log lines (schedule_one.go, --vmodule=schedule_one=10)
// the suite reads. Their keys: pod, plugin, node, score; pod, node, score;
// pod, node, evaluatedNodes, feasibleNodes.
const (
	msgPluginScore = "Plugin scored node for pod"
	msgFinalScore  = "Calculated node's final score for pod"
	msgBound       = "Successfully bound pod to node"
)

// schedulerScores is what kube-scheduler logged about one pod's successful
// scheduling cycle.
type schedulerScores struct {
	// Final is each scored node's final score; empty when only one node was
	// feasible (kube-scheduler then skips scoring).
	Final map[string]int64
	// Plugins is each scored node's weighted score per plugin.
	Plugins map[string]map[string]int64
	// Node, EvaluatedNodes and FeasibleNodes come from the bind line.
	Node                          string
	EvaluatedNodes, FeasibleNodes int
}

// schedulerLog follows kube-scheduler's log file and collects the score
// lines of each pod. Lines of a cycle are logged before its bind line, so a
// pod's scores are complete once its bind line has been read.
type schedulerLog struct {
	path    string
	offset  int64
	partial []byte
	pods    map[string]*schedulerScores // "ns/name"
}

func newSchedulerLog(path string) *schedulerLog {
	return &schedulerLog{path: path, pods: map[string]*schedulerScores{}}
}

// skipToEnd forgets everything logged so far.
func (l *schedulerLog) skipToEnd() error {
	if err := l.read(); err != nil {
		return err
	}
	clear(l.pods)
	return nil
}

// read parses what was appended to the log since the last read.
func (l *schedulerLog) read() error {
	f, err := os.Open(l.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(l.offset, io.SeekStart); err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	l.offset += int64(len(data))
	data = append(l.partial, data...)
	last := bytes.LastIndexByte(data, '\n')
	if last < 0 {
		l.partial = data
		return nil
	}
	l.partial = append([]byte(nil), data[last+1:]...)
	for _, line := range strings.Split(string(data[:last]), "\n") {
		l.parseLine(line)
	}
	return nil
}

func (l *schedulerLog) parseLine(line string) {
	msg, kv, ok := parseKlogLine(line)
	if !ok {
		return
	}
	switch msg {
	case msgPluginScore, msgFinalScore, msgBound:
	default:
		return
	}
	pod := kv["pod"]
	s := l.pods[pod]
	if s == nil || (s.Node != "" && msg != msgBound) {
		// A new cycle for this pod (the previous one ended with a bind line,
		// which only happens when a pod is recreated under the same name).
		s = &schedulerScores{Final: map[string]int64{}, Plugins: map[string]map[string]int64{}}
		l.pods[pod] = s
	}
	node := kv["node"]
	switch msg {
	case msgPluginScore:
		score, err := strconv.ParseInt(kv["score"], 10, 64)
		if err != nil {
			return
		}
		if s.Plugins[node] == nil {
			s.Plugins[node] = map[string]int64{}
		}
		s.Plugins[node][kv["plugin"]] = score
	case msgFinalScore:
		score, err := strconv.ParseInt(kv["score"], 10, 64)
		if err != nil {
			return
		}
		s.Final[node] = score
	case msgBound:
		s.Node = node
		s.EvaluatedNodes, _ = strconv.Atoi(kv["evaluatedNodes"])
		s.FeasibleNodes, _ = strconv.Atoi(kv["feasibleNodes"])
	}
}

// waitBound returns the scores of pod ("ns/name") once its bind line is in the
// log, or false after timeout.
func (l *schedulerLog) waitBound(pod string, timeout time.Duration) (*schedulerScores, bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		if err := l.read(); err != nil {
			return nil, false, err
		}
		if s := l.pods[pod]; s != nil && s.Node != "" {
			delete(l.pods, pod)
			return s, true, nil
		}
		if time.Now().After(deadline) {
			return nil, false, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// parseKlogLine splits a klog text line,
//
//	I1109 14:38:16.123456   12345 schedule_one.go:1052] "Calculated node's final score for pod" pod="ns/p" node="n1" score=300
//
// into its message and key/value pairs (quoted values unquoted). Lines of
// another shape give ok false.
func parseKlogLine(line string) (msg string, kv map[string]string, ok bool) {
	i := strings.Index(line, "] \"")
	if i < 0 {
		return "", nil, false
	}
	rest := line[i+2:]
	msg, rest, ok = cutQuoted(rest)
	if !ok {
		return "", nil, false
	}
	kv = map[string]string{}
	for {
		rest = strings.TrimLeft(rest, " ")
		if rest == "" {
			return msg, kv, true
		}
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 || strings.ContainsAny(rest[:eq], " \"") {
			return msg, kv, true // not a key/value pair: stop, keep what we have
		}
		key := rest[:eq]
		rest = rest[eq+1:]
		var value string
		if strings.HasPrefix(rest, "\"") {
			if value, rest, ok = cutQuoted(rest); !ok {
				return msg, kv, true
			}
		} else if sp := strings.IndexByte(rest, ' '); sp >= 0 {
			value, rest = rest[:sp], rest[sp:]
		} else {
			value, rest = rest, ""
		}
		kv[key] = value
	}
}

// cutQuoted unquotes the Go-quoted string s starts with and returns the rest.
func cutQuoted(s string) (string, string, bool) {
	if !strings.HasPrefix(s, "\"") {
		return "", s, false
	}
	for j := 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			v, err := strconv.Unquote(s[:j+1])
			if err != nil {
				return "", s, false
			}
			return v, s[j+1:], true
		}
	}
	return "", s, false
}

func (s *schedulerScores) String() string {
	return fmt.Sprintf("bound to %s, %d evaluated, %d feasible, %d scored", s.Node, s.EvaluatedNodes, s.FeasibleNodes, len(s.Final))
}
