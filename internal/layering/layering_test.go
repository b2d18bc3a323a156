// Package layering holds the test that keeps the import graph the shape
// docs/design.md#layout draws: verbs on top, then output and rendering,
// then the gang verbs, then the gang core, then the scheduling pipeline,
// with the API client at the edge. No package imports one of a layer above
// its own, and only the packages that talk to a server import client-go.
package layering

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/kubectl-gang/kubectl-gang/"

// rule says which of the module's packages a package may import (by path
// prefix, after the module path) and whether it may depend on client-go.
type rule struct {
	pkg      string
	may      []string
	clientGo bool
}

// rules go from the most specific package path to the least; the first
// whose pkg prefixes a package applies.
var rules = []rule{
	{pkg: "cmd/", may: []string{"pkg/cmd"}},
	{pkg: "pkg/cmd", may: []string{"pkg/"}, clientGo: true},
	{pkg: "pkg/api/", may: []string{"pkg/gang", "pkg/schedule"}},
	// pkg/gang/explain and pkg/workload still name gang systems (issue
	// #40's next steps move those words into the wings' hooks); they may
	// import the wings until then, nothing else below the verbs may.
	{pkg: "pkg/describe", may: []string{"pkg/gang"}},
	{pkg: "pkg/gang/kube", may: []string{"pkg/gang", "pkg/kubelist"}, clientGo: true},
	{pkg: "pkg/gang/explain", may: []string{"pkg/gang", "pkg/schedule", "pkg/systems/"}},
	{pkg: "pkg/gang/admit", may: []string{"pkg/gang", "pkg/schedule"}},
	{pkg: "pkg/gang/bind", may: []string{"pkg/gang", "pkg/schedule"}},
	{pkg: "pkg/gang/capacity", may: []string{"pkg/gang", "pkg/schedule"}},
	{pkg: "pkg/gang", may: []string{"pkg/schedule", "pkg/manifest", "pkg/fields"}},
	// The gang systems' wings: each imports the gang core, never another
	// wing (forbidden below), never a verb; pkg/systems registers them all.
	// Volcano's binpack node order function, below the wing.
	{pkg: "pkg/systems/volcano/binpack", may: []string{"pkg/schedule/framework", "pkg/volcano"}},
	// Kueue's admission model: objects in, decisions out; it reads
	// unstructured fields as every reader here does.
	{pkg: "pkg/systems/kueue/quota", may: []string{"pkg/fields"}},
	{pkg: "pkg/systems/kueue", may: []string{"pkg/gang", "pkg/schedule", "pkg/fields", "pkg/systems/kueue/"}},
	{pkg: "pkg/systems/volcano", may: []string{"pkg/gang", "pkg/schedule", "pkg/fields", "pkg/volcano", "pkg/systems/volcano/"}},
	{pkg: "pkg/systems/", may: []string{"pkg/gang", "pkg/schedule", "pkg/fields"}},
	{pkg: "pkg/systems", may: []string{"pkg/systems/"}},
	{pkg: "pkg/workload", may: []string{"pkg/gang", "pkg/schedule", "pkg/manifest", "pkg/fields", "pkg/systems/"}},
	{pkg: "pkg/fields"},
	{pkg: "pkg/snapshot", may: []string{"pkg/schedule", "pkg/manifest", "pkg/volcano", "pkg/kubelist"}, clientGo: true},
	// Reading a whole LIST through an expired continue token: the client
	// side of both readers, nothing of ours below it.
	{pkg: "pkg/kubelist", clientGo: true},
	// The scheduling pipeline imports nothing of any gang system's: a
	// system's node order plugs in through schedule.NodeOrder.
	{pkg: "pkg/schedule", may: []string{"pkg/schedule"}},
	// Volcano's session model and configuration: read by the snapshot,
	// used by the Volcano wing; below it only the resource model of
	// pkg/schedule/framework (which imports nothing of ours).
	{pkg: "pkg/volcano", may: []string{"pkg/schedule/framework"}},
	{pkg: "pkg/manifest"},
	{pkg: "pkg/version"},
}

// forbidden narrows rules: pairs of (importer prefix, imported prefix)
// that the prefixes above would allow but the layering does not.
var forbidden = [][2]string{
	// Printers and the output contract word nothing themselves that needs
	// a plugin: the core gives reasons in words.
	{"pkg/describe", "pkg/schedule/plugins/"},
	{"pkg/api/", "pkg/schedule/plugins/"},
	{"pkg/describe", "pkg/gang/kube"},
	{"pkg/api/", "pkg/gang/kube"},
	// The verbs of pkg/gang are siblings: none calls another.
	{"pkg/gang/explain", "pkg/gang/admit"}, {"pkg/gang/explain", "pkg/gang/bind"}, {"pkg/gang/explain", "pkg/gang/kube"},
	{"pkg/gang/admit", "pkg/gang/explain"}, {"pkg/gang/admit", "pkg/gang/bind"}, {"pkg/gang/admit", "pkg/gang/kube"},
	{"pkg/gang/bind", "pkg/gang/explain"}, {"pkg/gang/bind", "pkg/gang/admit"}, {"pkg/gang/bind", "pkg/gang/kube"},
	{"pkg/gang/capacity", "pkg/gang/explain"}, {"pkg/gang/capacity", "pkg/gang/admit"}, {"pkg/gang/capacity", "pkg/gang/bind"}, {"pkg/gang/capacity", "pkg/gang/kube"},
	{"pkg/gang/explain", "pkg/gang/capacity"}, {"pkg/gang/admit", "pkg/gang/capacity"}, {"pkg/gang/bind", "pkg/gang/capacity"},
	// The gang core knows none of its verbs.
	{"pkg/gang", "pkg/gang/"},
	// A wing knows no verb of the gang core's (nor another wing: the
	// rules above do not list one).
	{"pkg/systems/", "pkg/gang/"},
}

func TestImportLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok || strings.HasPrefix(pkg, "test/") || strings.HasPrefix(pkg, "hack/") || strings.HasPrefix(pkg, "internal/") {
			continue
		}
		r := ruleFor(pkg)
		if r == nil {
			t.Errorf("%s: no layering rule; add one to internal/layering", pkg)
			continue
		}
		checked++
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, "k8s.io/client-go/") && !r.clientGo {
				t.Errorf("%s imports %s: only the packages that talk to a server may import client-go", pkg, imp)
			}
			ours, ok := strings.CutPrefix(imp+"/", module)
			if !ok {
				continue
			}
			ours = strings.TrimSuffix(ours, "/") // "" is the module root
			if !allowed(r, pkg, ours) {
				t.Errorf("%s imports %s, which its layer may not", pkg, ours)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d packages checked: go list gave\n%s", checked, out)
	}
}

func ruleFor(pkg string) *rule {
	for i := range rules {
		if strings.HasPrefix(pkg, rules[i].pkg) {
			return &rules[i]
		}
	}
	return nil
}

// allowed says whether pkg, under rule r, may import imp (a path after the
// module's; "" is the module root, which no package imports: a file it
// embeds belongs in the package that reads it).
func allowed(r *rule, pkg, imp string) bool {
	if imp == "" {
		return false
	}
	for _, f := range forbidden {
		if strings.HasPrefix(pkg, f[0]) && strings.HasPrefix(imp, f[1]) && !strings.HasPrefix(pkg, f[1]) {
			return false
		}
	}
	for _, may := range r.may {
		if strings.HasPrefix(imp, may) {
			return true
		}
	}
	return false
}

// TestLayeringCatchesAnUpwardImport keeps the rules from passing
// everything: an import from the core to a verb and from a printer to a
// plugin must be refused.
func TestLayeringCatchesAnUpwardImport(t *testing.T) {
	for _, tc := range []struct{ pkg, imp string }{
		{"pkg/gang", "pkg/gang/explain"},
		{"pkg/schedule", "pkg/gang"},
		{"pkg/describe", "pkg/schedule/plugins/tainttoleration"},
		{"pkg/gang/explain", "pkg/cmd"},
		{"pkg/gang/admit", "pkg/gang/kube"},
		{"pkg/api/v1alpha1", "pkg/describe"},
		{"pkg/schedule", ""},
		{"pkg/schedule", "pkg/volcano"},
		{"pkg/gang", "pkg/systems/volcano"},
		{"pkg/systems/kueue", "pkg/systems/volcano"},
		{"pkg/systems/volcano", "pkg/gang/explain"},
	} {
		if allowed(ruleFor(tc.pkg), tc.pkg, tc.imp) {
			t.Errorf("%s may import %s, but that runs against the layering", tc.pkg, tc.imp)
		}
	}
}

// systemNames are the gang systems' names as code and comments spell them.
var systemNames = map[string]*regexp.Regexp{
	"Volcano":      regexp.MustCompile(`(?i)volcano`),
	"Coscheduling": regexp.MustCompile(`(?i)coscheduling`),
	"Kueue":        regexp.MustCompile(`(?i)kueue`),
}

// namesNoSystem are the packages that name no gang system: the gang core
// asks the registry (docs/design.md#gang-systems), and each wing names its
// own system only. The value is the system a package may name.
var namesNoSystem = map[string]string{
	"pkg/gang":                 "",
	"pkg/gang/bind":            "",
	"pkg/gang/kube":            "",
	"pkg/gang/admit":           "",
	"pkg/gang/capacity":        "",
	"pkg/describe":             "",
	"pkg/systems/volcano":      "Volcano",
	"pkg/systems/coscheduling": "Coscheduling",
	"pkg/systems/kueue":        "Kueue",
	"pkg/systems/kueue/quota":  "Kueue",
}

// namingDebt are the files of those packages that still name a system,
// and why: each is a step of issue #40 not taken yet.
var namingDebt = map[string]string{
	// The core's validity (task statuses, minTaskMember) is Volcano's
	// gang plugin's, cited, for every system until each wing says its own.
	"pkg/gang/validity.go": "Volcano",
}

// TestGangCoreNamesNoSystem: only a system's own wing names it, so a new
// system is a package and a registration line, and nothing in the core
// special-cases one.
func TestGangCoreNamesNoSystem(t *testing.T) {
	checked := 0
	for dir, own := range namesNoSystem {
		entries, err := os.ReadDir(filepath.Join("..", "..", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(filepath.Join("..", "..", dir, name))
			if err != nil {
				t.Fatal(err)
			}
			checked++
			file := dir + "/" + name
			for system, re := range systemNames {
				if system == own || namingDebt[file] == system {
					continue
				}
				if loc := re.FindIndex(src); loc != nil {
					line := 1 + strings.Count(string(src[:loc[0]]), "\n")
					t.Errorf("%s:%d names %s: only its wing (pkg/systems/...) may; ask the gang core's registry (gang.System) instead", file, line, system)
				}
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d files checked", checked)
	}
}
