package testutil

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is the repository's one golden-file flag. Every test binary that
// imports this package has it, so no test package may define a flag of the
// same name (the flag package panics on a second definition).
var update = flag.Bool("update", false, "rewrite golden files under testdata/ instead of comparing with them")

// Golden compares got with the golden file at path (relative to the test's
// package directory, by convention under testdata/). With -update it writes
// got to path instead, creating the directory, so that regenerating is
// `go test ./pkg/x -run TestY -update` and a review of the git diff.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden file %s: %v", path, err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden file %s: %v", path, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("golden file %s does not exist; %s creates it", path, regenerate(t))
	}
	if err != nil {
		t.Fatalf("golden file %s: %v", path, err)
	}
	// Lines, not one string: cmp.Diff quotes a short string whole, while a
	// slice of lines shows which lines changed, however short the file.
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")); diff != "" {
		t.Errorf("output differs from golden file %s (-want +got):\n%s\nif the change is intended, %s rewrites it; review the git diff", path, diff, regenerate(t))
	}
}

// regenerate is the command that rewrites the golden files of t's test
// alone: a -run pattern anchoring each level of t's name, and the package
// as a path from the module root, where go commands are usually typed.
func regenerate(t testing.TB) string {
	var run []string
	for _, part := range strings.Split(t.Name(), "/") {
		run = append(run, "^"+regexp.QuoteMeta(part)+"$")
	}
	return fmt.Sprintf("go test %s -run '%s' -update", packageDir(), strings.Join(run, "/"))
}

// packageDir is the test's package directory relative to the module root
// (go test runs a test binary in its package's directory), or "." when the
// module root cannot be found.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for root := wd; ; {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			rel, err := filepath.Rel(root, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "."
		}
		root = parent
	}
}
