package testbed

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BinDirEnv names the environment variable that, when set, points at a
// directory holding etcd, kube-apiserver and kube-scheduler; then nothing is
// built.
const BinDirEnv = "KUBECTL_GANG_K8S_BIN"

// ResolveBinDir returns the directory holding etcd, kube-apiserver and
// kube-scheduler: $KUBECTL_GANG_K8S_BIN if set, else the last line that
// hack/build-k8s.sh prints (it builds the binaries once into a cache
// directory; the repository root is found by walking up from the working
// directory to a go.mod next to hack/build-k8s.sh). Concurrent callers on one
// machine (parallel test packages) take turns through a lock file, so only one
// of them builds.
func ResolveBinDir(ctx context.Context) (string, error) {
	dir, err := fromEnvOrScript(ctx, BinDirEnv, "build-k8s.sh")
	if err != nil {
		return "", err
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-scheduler"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("testbed: binary directory %s: %w", dir, err)
		}
	}
	return dir, nil
}

// SchedulerPluginsEnv names the environment variable that, when set, is the
// path of scheduler-plugins' kube-scheduler binary; then nothing is built.
const SchedulerPluginsEnv = "KUBECTL_GANG_SCHEDPLUGINS_BIN"

// ResolveSchedulerPlugins returns the path of scheduler-plugins'
// kube-scheduler (the scheduler that runs Coscheduling):
// $KUBECTL_GANG_SCHEDPLUGINS_BIN if set, else what
// hack/build-schedplugins.sh prints (it builds the binary once into the
// cache), under the same build lock as ResolveBinDir.
func ResolveSchedulerPlugins(ctx context.Context) (string, error) {
	bin, err := fromEnvOrScript(ctx, SchedulerPluginsEnv, "build-schedplugins.sh")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("testbed: scheduler-plugins binary: %w", err)
	}
	return bin, nil
}

// fromEnvOrScript returns $env if set, else the last line hack/SCRIPT
// prints, run from the repository root under the build lock (concurrent
// test packages take turns, so only one of them builds).
func fromEnvOrScript(ctx context.Context, env, script string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	unlock, err := lockBuild()
	if err != nil {
		return "", err
	}
	defer unlock()
	return runScript(ctx, root, script)
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) && fileExists(filepath.Join(dir, "hack", "build-k8s.sh")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errNoBinDir
		}
		dir = parent
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// runScript runs hack/SCRIPT and returns the last line it prints: the
// directory or file it built (or found in the cache).
func runScript(ctx context.Context, root, script string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", script))
	cmd.Dir = root
	cmd.Stdout = &stdout
	// The script says one line on stderr when it really builds (minutes);
	// let that through so a slow first run is explained.
	cmd.Stderr = &teeWriter{buf: &stderr, line: "building "}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("testbed: hack/%s: %w\n%s", script, err, lastLines(stderr.String(), 40))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	if dir == "" {
		return "", fmt.Errorf("testbed: hack/%s printed nothing", script)
	}
	return dir, nil
}

// teeWriter keeps everything and forwards to os.Stderr only the lines that
// start with line.
type teeWriter struct {
	buf  *bytes.Buffer
	line string
	seen int
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	for {
		rest := w.buf.Bytes()[w.seen:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		if l := string(rest[:i+1]); strings.HasPrefix(l, w.line) {
			fmt.Fprint(os.Stderr, "testbed: ", l)
		}
		w.seen += i + 1
	}
	return len(p), nil
}

// cacheRoot mirrors hack/build-k8s.sh's choice of cache directory.
func cacheRoot() string {
	if d := os.Getenv("KUBECTL_GANG_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "kubectl-gang")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "kubectl-gang")
	}
	return filepath.Join(home, ".cache", "kubectl-gang")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
