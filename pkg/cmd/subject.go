package cmd

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// SubjectKind says what a verb was asked about.
type SubjectKind int

// The kinds of subject a verb accepts.
const (
	SubjectPod      SubjectKind = iota + 1 // pod/NAME
	SubjectPodGroup                        // podgroup/NAME or podgroups.<group>/NAME
	SubjectSelector                        // -l SELECTOR, an ad hoc gang
	SubjectFile                            // -f FILE, a what-if gang
)

// Subject is a parsed pod, PodGroup, selector or file argument.
type Subject struct {
	Kind SubjectKind
	Name string
	// Group is the API group of a fully qualified podgroups.<group>/NAME; empty
	// means whichever PodGroup kind exists under that name.
	Group    string
	Selector labels.Selector
	Filename string
	// manifest is the gang read from Filename (priorities not yet applied).
	manifest *gang.Gang
}

// SubjectFlags are the flags that name a subject instead of an argument.
type SubjectFlags struct {
	Selector  string
	Filename  string
	MinMember int32
}

// AddFlags adds -l, -f and --min-member.
func (f *SubjectFlags) AddFlags(flags *pflag.FlagSet, what string) {
	flags.StringVarP(&f.Selector, "selector", "l", f.Selector, "Treat the pods this label selector matches as an ad hoc gang "+what+" (supports '=', '==', '!=', 'in', 'notin').")
	flags.StringVarP(&f.Filename, "filename", "f", f.Filename, "What-if: read the gang from manifests (Pods, a PodGroup with its pods, or Jobs and other pod templates with replicas) that need not exist yet; - for stdin.")
	flags.Int32Var(&f.MinMember, "min-member", f.MinMember, "The gang's minimum for -l or -f input without a PodGroup; 0 means every matched pod.")
}

// podGroupGroups maps the API groups a podgroups.<group>/NAME may name.
var podGroupGroups = []string{schedule.NativeGroup, schedule.VolcanoGroup, schedule.CoschedulingGroup}

// parseSubject turns the verb's arguments and subject flags into a Subject.
// allowPod says whether pod/NAME is accepted; allowFile whether -f is.
func parseSubject(args []string, f *SubjectFlags, allowPod, allowFile bool) (*Subject, error) {
	// kubectl takes "TYPE NAME" as well as "TYPE/NAME".
	if len(args) == 2 && !strings.Contains(args[0], "/") && !strings.Contains(args[1], "/") {
		args = []string{args[0] + "/" + args[1]}
	}
	given := 0
	if len(args) > 0 {
		given++
	}
	if f.Selector != "" {
		given++
	}
	if f.Filename != "" {
		given++
	}
	want := "podgroup/NAME, -l SELECTOR"
	if allowPod {
		want = "pod/NAME, " + want
	}
	if allowFile {
		want += " or -f FILE"
	}
	switch {
	case given == 0:
		return nil, usageErrorf("name the gang: %s ('kubectl gang explain' without one lists what is pending)", want)
	case given > 1 || len(args) > 1:
		return nil, usageErrorf("give exactly one of %s", want)
	}
	if f.MinMember < 0 {
		return nil, usageErrorf("--min-member must not be negative, got %d", f.MinMember)
	}
	if f.MinMember > 0 && len(args) > 0 {
		return nil, usageErrorf("--min-member applies to -l and -f input; a PodGroup carries its own minimum")
	}
	switch {
	case f.Selector != "":
		sel, err := labels.Parse(f.Selector)
		if err != nil {
			return nil, usageErrorf("invalid selector %q: %v", f.Selector, err)
		}
		if sel.Empty() {
			return nil, usageErrorf("the selector %q matches every pod; name the gang's pods", f.Selector)
		}
		return &Subject{Kind: SubjectSelector, Selector: sel}, nil
	case f.Filename != "":
		if !allowFile {
			return nil, usageErrorf("-f is not accepted here: the pods must exist; give %s", want)
		}
		return &Subject{Kind: SubjectFile, Filename: f.Filename}, nil
	}

	typ, name, ok := strings.Cut(args[0], "/")
	if !ok || name == "" || typ == "" || strings.Contains(name, "/") {
		return nil, usageErrorf("%q is not TYPE/NAME: give %s", args[0], want)
	}
	resource, group, _ := strings.Cut(strings.ToLower(typ), ".")
	switch resource {
	case "pod", "pods", "po":
		if group != "" {
			return nil, usageErrorf("unknown resource type %q: pods are in the core group", typ)
		}
		if !allowPod {
			return nil, usageErrorf("%q names a pod; give its gang: %s", args[0], want)
		}
		return &Subject{Kind: SubjectPod, Name: name}, nil
	case "podgroup", "podgroups", "pg":
		if group != "" && !slices.Contains(podGroupGroups, group) {
			return nil, usageErrorf("unknown PodGroup group %q: expected one of %s", group, strings.Join(podGroupGroups, ", "))
		}
		return &Subject{Kind: SubjectPodGroup, Name: name, Group: group}, nil
	}
	return nil, usageErrorf("unknown resource type %q: give %s", typ, want)
}
