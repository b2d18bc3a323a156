package cmd

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// SubjectKind says what a verb was asked about.
type SubjectKind int

// The kinds of subject a verb accepts.
const (
	SubjectPod      SubjectKind = iota + 1 // pod/NAME
	SubjectPodGroup                        // podgroup/NAME or podgroups.<group>/NAME
	SubjectSelector                        // -l SELECTOR, an ad hoc gang
	SubjectFile                            // -f FILE, a what-if gang
	SubjectWorkload                        // jobset/NAME and other workloads, read from the cluster
	SubjectWaiting                         // workloads.kueue.x-k8s.io/NAME: a queueing layer's workload with no pods yet
)

// Subject is a parsed pod, PodGroup, workload, selector or file argument.
type Subject struct {
	Kind SubjectKind
	// Arg is the argument as given, TYPE/NAME.
	Arg  string
	Name string
	// Group is the API group of a fully qualified podgroups.<group>/NAME; empty
	// means whichever PodGroup kind exists under that name.
	Group    string
	Selector labels.Selector
	Filename string
	// Workload is the kind of a workload subject.
	Workload workload.Kind
	// Waiter is the queueing layer of a SubjectWaiting.
	Waiter gang.Waiter
	// made makes the gang of a subject whose members are made rather than
	// found (-f, a workload), once readSubject has read its inputs.
	made func(*schedule.Snapshot) (*gang.Gang, error)
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
	flags.StringVarP(&f.Filename, "filename", "f", f.Filename, "What-if: read the gang from manifests (Pods, a PodGroup with its pods, or Jobs and other pod templates with replicas) that need not exist yet: a file, a directory of .yaml, .yml and .json files (as kubectl reads one), or - for stdin.")
	flags.Int32Var(&f.MinMember, "min-member", f.MinMember, "The gang's minimum for -l or -f input without a PodGroup; 0 means every matched pod.")
}

// subjectsWanted lists the subjects a verb accepts, for messages: pods
// where allowPod, workloads and -f where allowFile (the verbs that take
// members that do not exist yet).
func subjectsWanted(allowPod, allowFile bool) string {
	var want []string
	if allowPod {
		want = append(want, "pod/NAME")
	}
	want = append(want, "podgroup/NAME")
	if allowFile {
		want = append(want, "jobset/NAME (and other workloads)")
	}
	want = append(want, "-l SELECTOR")
	if allowFile {
		want = append(want, "-f FILE")
	}
	return strings.Join(want[:len(want)-1], ", ") + " or " + want[len(want)-1]
}

// workloadTypes lists the workload types a subject may name, for messages.
func workloadTypes() string {
	names := make([]string, len(workload.Kinds))
	for i, k := range workload.Kinds {
		names[i] = k.Names[0]
	}
	return strings.Join(names, ", ")
}

// parseSubject turns the verb's arguments and subject flags into a Subject.
// allowPod says whether pod/NAME is accepted; allowFile whether -f and
// workloads (jobset/NAME, ...) are: both may stand for pods that do not
// exist yet.
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
	want := subjectsWanted(allowPod, allowFile)
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
		return nil, usageErrorf("--min-member applies to -l and -f input; a PodGroup or workload carries its own minimum")
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
		return &Subject{Kind: SubjectPod, Arg: args[0], Name: name}, nil
	case "podgroup", "podgroups", "pg":
		if group != "" && !slices.Contains(gang.PodGroupGroups(), group) {
			return nil, usageErrorf("unknown PodGroup group %q: expected one of %s", group, strings.Join(gang.PodGroupGroups(), ", "))
		}
		return &Subject{Kind: SubjectPodGroup, Arg: args[0], Name: name, Group: group}, nil
	}
	if w := gang.WaiterOf(resource, group); w != nil {
		if !allowFile {
			return nil, usageErrorf("%q names a workload, whose members may not exist yet; give %s (its pods: -l with their labels)", args[0], want)
		}
		return &Subject{Kind: SubjectWaiting, Arg: args[0], Name: name, Waiter: w}, nil
	}
	if k, found := workloadKind(resource); found {
		switch {
		case group != "" && group != k.Resource.Group && group != k.Resource.Version+"."+k.Resource.Group:
			return nil, usageErrorf("unknown resource type %q: this build reads %s as %s, version %s", typ, k.Kind, k.Qualified(), k.Resource.Version)
		case !allowFile:
			return nil, usageErrorf("%q names a workload, whose members may not exist yet; give %s (its pods: -l with their labels)", args[0], want)
		}
		return &Subject{Kind: SubjectWorkload, Arg: args[0], Name: name, Workload: k}, nil
	}
	if allowFile {
		return nil, usageErrorf("unknown resource type %q: give %s; the workloads are %s", typ, want, workloadTypes())
	}
	return nil, usageErrorf("unknown resource type %q: give %s", typ, want)
}

// workloadKind finds the workload a resource name (singular, plural or
// short, lower-case) names.
func workloadKind(resource string) (workload.Kind, bool) {
	for _, k := range workload.Kinds {
		if slices.Contains(k.Names, resource) {
			return k, true
		}
	}
	return workload.Kind{}, false
}

// workloadHelp ends the help of the verbs that take workloads.
var workloadHelp = `

	WORKLOAD/NAME reads a workload from the cluster: ` + workloadTypes() + `
	(lws for a LeaderWorkerSet), or TYPE.GROUP/NAME such as
	jobsets.jobset.x-k8s.io/NAME. Its gang is the pods its controllers
	created (matched by name, or by their Job, Ray group or Kubeflow role
	where the names are random) plus those still to come, expanded as -f
	expands its manifest. Offline (--snapshot), give the manifest with -f.

	workloads.kueue.x-k8s.io/NAME (wl/NAME) is a Workload Kueue holds
	whose job made no pods yet, found in the snapshot (offline too): the
	pods its pod sets make, Kueue's decision first, as explain -A lists it.`
