// Package krew_test checks the release path end to end: hack/release.sh builds
// the archives, .krew.yaml is rendered from them exactly as krew-release-bot
// renders it, and krew's own validate-krew-manifest accepts the result and
// installs every platform from it, as the krew-index CI does.
package krew_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

const (
	tag        = "v0.1.0"
	owner      = "kubectl-gang"
	repo       = "kubectl-gang"
	pluginName = "gang"
	// releaseURL is where krew-release-bot downloads the assets of tag from.
	releaseHost = "https://github.com"
	releasePath = "/" + owner + "/" + repo + "/releases/download/" + tag + "/"
	releaseURL  = releaseHost + releasePath
)

func TestKrewManifest(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hack/release.sh needs bash and a POSIX shell")
	}
	root := repoRoot(t)
	validator, kubectlKrew := krewBinaries(t, root)

	dist := t.TempDir()
	runRelease(t, root, tag, dist)
	archives, err := filepath.Glob(filepath.Join(dist, "*.tar.gz"))
	if err != nil || len(archives) == 0 {
		t.Fatalf("hack/release.sh produced no archives in %s (err %v)", dist, err)
	}
	for i := range archives {
		archives[i] = filepath.Base(archives[i])
	}

	t.Run("archives", func(t *testing.T) {
		license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range archives {
			checkArchive(t, root, dist, name, license)
		}
	})

	t.Run("reproducible", func(t *testing.T) {
		if !haveGNUTar() {
			t.Skip("hack/release.sh makes reproducible archives only with GNU tar")
		}
		again := t.TempDir()
		runRelease(t, root, tag, again)
		for _, name := range archives {
			a, errA := os.ReadFile(filepath.Join(dist, name))
			b, errB := os.ReadFile(filepath.Join(again, name))
			if err := errors.Join(errA, errB); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%s differs between two runs of hack/release.sh", name)
			}
		}
	})

	rendered, fetched := renderTemplate(t, filepath.Join(root, ".krew.yaml"), dist)

	t.Run("matches release", func(t *testing.T) {
		checkAgainstRelease(t, rendered, dist, archives, fetched)
	})

	// The krew-index CI checks the pull request the bot opens with
	// validate-krew-manifest, which also runs "kubectl krew install" for every
	// platform. Installing downloads the archives, so that run gets a copy whose
	// URIs point at a local server holding the archives hack/release.sh just
	// built; the copy differs from the real manifest only in the URL host.
	srv := httptest.NewServer(http.StripPrefix(releasePath, http.FileServer(http.Dir(dist))))
	t.Cleanup(srv.Close)
	local := func(manifest string) string {
		return strings.ReplaceAll(manifest, releaseURL, srv.URL+releasePath)
	}
	shimDir := kubectlShim(t, kubectlKrew)

	t.Run("validates", func(t *testing.T) {
		if out, err := validate(t, validator, shimDir, rendered, true); err != nil {
			t.Fatalf("validate-krew-manifest rejected the rendered .krew.yaml: %v\n%s\nmanifest:\n%s", err, out, rendered)
		}
	})

	t.Run("installs every platform", func(t *testing.T) {
		out, err := validate(t, validator, shimDir, local(rendered), false)
		if err != nil {
			t.Fatalf("validate-krew-manifest could not install the rendered .krew.yaml: %v\n%s", err, out)
		}
		if want := fmt.Sprintf("all %d spec.platforms installed fine", len(archives)); !strings.Contains(out, want) {
			t.Fatalf("validate-krew-manifest output lacks %q:\n%s", want, out)
		}
	})

	// Each broken manifest must be refused, and for the reason named, so the
	// passing cases above mean something.
	var plugin krewPlugin
	if err := yaml.UnmarshalStrict([]byte(rendered), &plugin); err != nil || len(plugin.Spec.Platforms) < 2 {
		t.Fatalf("rendered .krew.yaml has fewer than two platforms or does not decode (%v):\n%s", err, rendered)
	}
	first, second := plugin.Spec.Platforms[0], plugin.Spec.Platforms[1]
	for _, tc := range []struct {
		name    string
		edit    func(string) string
		install bool
		want    string
	}{{
		name: "wrong plugin name",
		edit: func(m string) string {
			return strings.Replace(m, "name: "+pluginName+"\n", "name: "+pluginName+"s\n", 1)
		},
		want: fmt.Sprintf("plugin should be named %q", pluginName),
	}, {
		name: "malformed sha256",
		edit: func(m string) string {
			return strings.Replace(m, "sha256: "+first.Sha256, "sha256: "+first.Sha256[:63], 1)
		},
		want: "is not valid, must match pattern",
	}, {
		name: "sha256 of another archive",
		edit: func(m string) string {
			return strings.Replace(m, "sha256: "+first.Sha256, "sha256: "+second.Sha256, 1)
		},
		install: true,
		want:    "checksum does not match",
	}, {
		name: "version not semver",
		edit: func(m string) string {
			return strings.Replace(m, "version: "+tag, "version: "+strings.TrimPrefix(tag, "v"), 1)
		},
		want: "failed to parse plugin version",
	}, {
		name: "bin missing from archive",
		edit: func(m string) string {
			return strings.Replace(m, "bin: "+first.Bin, "bin: kubectl-gangs", 1)
		},
		install: true,
		want:    "kubectl-gangs: no such file or directory",
	}} {
		t.Run("rejects "+tc.name, func(t *testing.T) {
			broken := tc.edit(rendered)
			if broken == rendered {
				t.Fatal("the edit changed nothing; the rendered manifest no longer has the text it replaces")
			}
			if tc.install {
				broken = local(broken)
			}
			out, err := validate(t, validator, shimDir, broken, !tc.install)
			if err == nil {
				t.Fatalf("validate-krew-manifest accepted a manifest with a %s:\n%s", tc.name, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Fatalf("validate-krew-manifest refused a manifest with a %s, but not with %q:\n%s", tc.name, tc.want, out)
			}
		})
	}
}

// krewPlugin is the part of krew's index.Plugin this test reads; decoding is
// strict so a misspelt key in .krew.yaml fails here, where krew ignores it.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
			Bin string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

// releaseRequest has the fields of krew-release-bot's source.ReleaseRequest,
// the value it executes .krew.yaml with.
type releaseRequest struct {
	TagName            string
	PluginName         string
	PluginRepo         string
	PluginOwner        string
	PluginReleaseActor string
	TemplateFile       string
	ProcessedTemplate  []byte
}

// renderTemplate renders the template at file as krew-release-bot's
// RenderTemplate does: text/template named after the file's base name, with
// the bot's "indent" and "addURIAndSha" functions, executed with the release
// request (PluginName is still empty then; the bot fills it in from the
// result). addURIAndSha executes its URL argument as a template of its own
// with TagName and Version (the tag without its "v"), downloads it, and
// returns "uri: URL\n    sha256: HEX". Here the download is a read of the
// archive hack/release.sh left in dist, so a URI naming anything else fails.
// It returns the manifest and the archive names it resolved, in order.
func renderTemplate(t *testing.T, file, dist string) (string, []string) {
	t.Helper()
	var fetched []string
	addURIAndSha := func(url, tag string) (string, error) {
		var buf bytes.Buffer
		urlTemplate, err := template.New("url").Parse(url)
		if err != nil {
			return "", err
		}
		if err := urlTemplate.Execute(&buf, struct{ TagName, Version string }{tag, versionFromTag(tag)}); err != nil {
			return "", err
		}
		uri := buf.String()
		name, ok := strings.CutPrefix(uri, releaseURL)
		if !ok || name == "" || strings.Contains(name, "/") {
			return "", fmt.Errorf("uri %s is not an asset of release %s (%s)", uri, tag, releaseURL)
		}
		sum, err := sha256File(filepath.Join(dist, name))
		if err != nil {
			return "", fmt.Errorf("uri %s names no archive hack/release.sh built: %w", uri, err)
		}
		fetched = append(fetched, name)
		return fmt.Sprintf("uri: %s\n    sha256: %s", uri, sum), nil
	}
	tmpl, err := template.New(path.Base(file)).Funcs(template.FuncMap{
		"indent":       botIndent,
		"addURIAndSha": addURIAndSha,
	}).ParseFiles(file)
	if err != nil {
		t.Fatalf("parse %s as krew-release-bot does: %v", file, err)
	}
	var out bytes.Buffer
	err = tmpl.Execute(&out, releaseRequest{
		TagName:            tag,
		PluginRepo:         repo,
		PluginOwner:        owner,
		PluginReleaseActor: "release-test",
		TemplateFile:       file,
	})
	if err != nil {
		t.Fatalf("render %s as krew-release-bot does: %v", file, err)
	}
	return out.String(), fetched
}

// botIndent is krew-release-bot's "indent": it undoes addURIAndSha's built-in
// four-space indentation of the sha256 line, then indents every following
// line by spaces.
func botIndent(spaces int, v string) string {
	v = strings.ReplaceAll(v, "    sha256:", "sha256:")
	pad := strings.Repeat(" ", spaces)
	return strings.TrimSpace(pad + strings.ReplaceAll(v, "\n", "\n"+pad))
}

var versionPattern = regexp.MustCompile(`\d+(\.\d+)+`)

// versionFromTag is krew-release-bot's extractVersionFromTag.
func versionFromTag(tag string) string {
	if v := versionPattern.FindString(tag); v != "" {
		return v
	}
	return tag
}

// checkAgainstRelease checks that the manifest and hack/release.sh describe the
// same archives: one platform per archive, selectors matching the names, the
// sums the release wrote, and the binary each archive holds.
func checkAgainstRelease(t *testing.T, rendered, dist string, archives, fetched []string) {
	var plugin krewPlugin
	if err := yaml.UnmarshalStrict([]byte(rendered), &plugin); err != nil {
		t.Fatalf("rendered .krew.yaml does not decode as a krew plugin: %v\n%s", err, rendered)
	}
	if plugin.Metadata.Name != pluginName {
		t.Errorf("metadata.name = %q, want %q", plugin.Metadata.Name, pluginName)
	}
	if plugin.Spec.Version != tag {
		t.Errorf("spec.version = %q, want the tag %q", plugin.Spec.Version, tag)
	}
	// krew-release-bot only opens a pull request when the homepage proves the
	// repository that released owns the plugin.
	if prefix := "https://github.com/" + owner + "/"; !strings.HasPrefix(plugin.Spec.Homepage, prefix) {
		t.Errorf("spec.homepage = %q, krew-release-bot wants the prefix %q", plugin.Spec.Homepage, prefix)
	}

	sortedFetched := slices.Sorted(slices.Values(fetched))
	sortedArchives := slices.Sorted(slices.Values(archives))
	if !slices.Equal(sortedFetched, sortedArchives) {
		t.Errorf("addURIAndSha fetched %v, but hack/release.sh built %v", sortedFetched, sortedArchives)
	}
	if len(plugin.Spec.Platforms) != len(fetched) {
		t.Fatalf("%d platforms but %d addURIAndSha calls", len(plugin.Spec.Platforms), len(fetched))
	}
	for _, p := range plugin.Spec.Platforms {
		name := strings.TrimPrefix(p.URI, releaseURL)
		goos, goarch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		if want := fmt.Sprintf("%s_%s_%s_%s.tar.gz", repo, tag, goos, goarch); name != want {
			t.Errorf("platform os=%s arch=%s downloads %s, want %s", goos, goarch, name, want)
		}
		if len(p.Selector.MatchLabels) != 2 {
			t.Errorf("platform %s selects on %v, want exactly os and arch", name, p.Selector.MatchLabels)
		}
		sumFile, err := readFile(filepath.Join(dist, name+".sha256"))
		if err != nil {
			t.Errorf("hack/release.sh wrote no checksum for %s: %v", name, err)
		} else if want := p.Sha256 + "  " + name + "\n"; sumFile != want {
			t.Errorf("%s.sha256 = %q, want %q", name, sumFile, want)
		}
		bin := "kubectl-gang"
		if goos == "windows" {
			bin += ".exe"
		}
		if p.Bin != bin {
			t.Errorf("platform %s has bin %q, want %q", name, p.Bin, bin)
		}
		var from []string
		for _, f := range p.Files {
			from = append(from, f.From)
			if f.To != "." {
				t.Errorf("platform %s copies %s to %q, want the plugin root", name, f.From, f.To)
			}
		}
		want := []string{bin, "LICENSE"}
		if goos != "windows" {
			want = append(want, "kubectl_complete-gang")
		}
		if !slices.Equal(from, want) {
			t.Errorf("platform %s copies %v, want %v", name, from, want)
		}
	}
}

// checkArchive checks that an archive holds exactly the binary, LICENSE and
// (except on windows) the completion helper at its root, with fixed owners and
// modes, and that the binary was built for the platform its name says with the
// flags of a release build.
func checkArchive(t *testing.T, root, dist, name string, license []byte) {
	t.Helper()
	m := regexp.MustCompile(`^kubectl-gang_` + regexp.QuoteMeta(tag) + `_([a-z0-9]+)_([a-z0-9]+)\.tar\.gz$`).FindStringSubmatch(name)
	if m == nil {
		t.Errorf("archive %s is not named kubectl-gang_%s_OS_ARCH.tar.gz", name, tag)
		return
	}
	goos, goarch := m[1], m[2]
	bin := "kubectl-gang"
	if goos == "windows" {
		bin += ".exe"
	}
	entries, err := readTarGz(filepath.Join(dist, name))
	if err != nil {
		t.Errorf("read %s: %v", name, err)
		return
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.hdr.Name)
		if e.hdr.Uid != 0 || e.hdr.Gid != 0 {
			t.Errorf("%s: %s is owned by %d:%d, want 0:0", name, e.hdr.Name, e.hdr.Uid, e.hdr.Gid)
		}
	}
	want := []string{"LICENSE", bin}
	if goos != "windows" {
		want = append(want, "kubectl_complete-gang")
	}
	if !slices.Equal(names, want) {
		t.Errorf("%s holds %v, want %v", name, names, want)
		return
	}
	if lic := entries[0]; lic.hdr.Mode != 0o644 || !bytes.Equal(lic.data, license) {
		t.Errorf("%s: LICENSE has mode %o and %d bytes, want 644 and the repository's %d bytes", name, lic.hdr.Mode, len(lic.data), len(license))
	}
	exe := entries[1]
	if exe.hdr.Mode != 0o755 {
		t.Errorf("%s: %s has mode %o, want 755", name, bin, exe.hdr.Mode)
	}
	// The stand-in go command wrote its own invocation as the binary.
	dir, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(exe.data)), "\n")
	want = []string{
		"dir=" + dir,
		fmt.Sprintf("env=GOOS=%s GOARCH=%s CGO_ENABLED=0", goos, goarch),
		"build", "-trimpath",
		"-ldflags", "-s -w -X github.com/kubectl-gang/kubectl-gang/pkg/version.Version=" + tag,
		"-o", bin,
		"./cmd/kubectl-gang",
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: hack/release.sh ran go as\n  %q\nwant\n  %q", name, got, want)
	}
}

type tarEntry struct {
	hdr  *tar.Header
	data []byte
}

func readTarGz(file string) ([]tarEntry, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	var entries []tarEntry
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		entries = append(entries, tarEntry{hdr, data})
	}
}

// standInGo records how it was called, in place of the binary "go build -o"
// would write. Cross-compiling the real kubectl-gang for five platforms takes
// minutes on a cold build cache, so the test runs hack/release.sh with
// GO=<this script>: everything release.sh does is real except the compiler,
// and checkArchive asserts the exact go command it ran for each platform.
const standInGo = `#!/bin/sh
set -eu
out=
prev=
for arg in "$@"; do
  if [ "$prev" = -o ]; then out=$arg; fi
  prev=$arg
done
if [ "${1:-}" != build ] || [ -z "$out" ]; then
  echo "stand-in go: unexpected call: go $*" >&2
  exit 1
fi
{
  echo "dir=$(pwd -P)"
  echo "env=GOOS=$GOOS GOARCH=$GOARCH CGO_ENABLED=$CGO_ENABLED"
  prev=
  for arg in "$@"; do
    if [ "$prev" = -o ]; then basename "$arg"; else printf '%s\n' "$arg"; fi
    prev=$arg
  done
} >"$out"
`

// runRelease runs hack/release.sh for version into dist with the stand-in go.
func runRelease(t *testing.T, root, version, dist string) {
	t.Helper()
	goCmd := filepath.Join(t.TempDir(), "go")
	if err := os.WriteFile(goCmd, []byte(standInGo), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "hack", "release.sh"), version, dist)
	cmd.Dir = t.TempDir() // release.sh must not depend on the caller's directory
	cmd.Env = append(os.Environ(), "GO="+goCmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hack/release.sh %s %s: %v\n%s", version, dist, err, out)
	}
}

func haveGNUTar() bool {
	for _, name := range []string{"gtar", "tar"} {
		if out, err := exec.Command(name, "--version").Output(); err == nil {
			return bytes.Contains(out, []byte("GNU tar"))
		}
	}
	return false
}

// krewBinaries returns validate-krew-manifest, from $KREW_VALIDATOR or built by
// hack/build-krew-validator.sh, and the kubectl-krew next to it.
func krewBinaries(t *testing.T, root string) (validator, kubectlKrew string) {
	t.Helper()
	validator = os.Getenv("KREW_VALIDATOR")
	if validator == "" {
		cmd := exec.Command(filepath.Join(root, "hack", "build-krew-validator.sh"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hack/build-krew-validator.sh: %v\n%s", err, stderr.Bytes())
		}
		validator = strings.TrimSpace(string(out))
	}
	kubectlKrew = filepath.Join(filepath.Dir(validator), "kubectl-krew")
	for _, bin := range []string{validator, kubectlKrew} {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%v (hack/build-krew-validator.sh builds validate-krew-manifest and kubectl-krew side by side)", err)
		}
	}
	return validator, kubectlKrew
}

// kubectlShim returns a directory holding a "kubectl" that runs kubectl-krew
// for "kubectl krew ...", which is all kubectl does for a plugin and all
// validate-krew-manifest asks of it, so the test needs no kubectl installed.
func kubectlShim(t *testing.T, kubectlKrew string) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\n" +
		"if [ \"${1:-}\" != krew ]; then echo \"kubectl shim: only 'kubectl krew' is supported\" >&2; exit 1; fi\n" +
		"shift\n" +
		"exec " + shellQuote(kubectlKrew) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// validate writes manifest as gang.yaml, the file name krew-index gives it,
// and runs validate-krew-manifest on it. It returns the combined output.
func validate(t *testing.T, validator, shimDir, manifest string, skipInstall bool) (string, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), pluginName+".yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-manifest", file}
	if skipInstall {
		args = append(args, "-skip-install")
	}
	cmd := exec.Command(validator, args...)
	cmd.Env = append(os.Environ(),
		"PATH="+shimDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func sha256File(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func readFile(file string) (string, error) {
	b, err := os.ReadFile(file)
	return string(b), err
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
