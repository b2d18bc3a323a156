package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// resolveGang turns the parsed subject into a gang on the snapshot. A group
// or pod that is not there, or a bad manifest, is bad input (exit 2).
func resolveGang(snap *schedule.Snapshot, s *Subject, namespace string, minMember int32) (*gang.Gang, error) {
	var g *gang.Gang
	var err error
	switch s.Kind {
	case SubjectPodGroup:
		g, err = gang.ResolvePodGroup(snap, gang.Ref{Namespace: namespace, Name: s.Name, Group: s.Group})
	case SubjectSelector:
		g, err = gang.ResolveSelector(snap, namespace, s.Selector, minMember)
	case SubjectFile, SubjectWorkload:
		g, err = s.made(snap)
	case SubjectPod:
		g, _, err = gang.ResolvePod(snap, namespace, s.Name)
	case SubjectWaiting:
		g, err = resolveWaiting(snap, s, namespace)
	default:
		return nil, fmt.Errorf("internal error: subject kind %d", s.Kind)
	}
	if err != nil {
		return nil, asInputError(err)
	}
	return g, nil
}

// readManifestFile reads -f's manifests, refuses objects of another
// namespace than the one enforced, and adds their namespaces to those the
// snapshot reads in one by one when the cluster-wide list is refused.
func (o *GangVerbOptions) readManifestFile(filename string) ([]*unstructured.Unstructured, error) {
	objs, err := readManifests(filename, o.In)
	if err != nil {
		return nil, asInputError(err)
	}
	if err := checkNamespaces(objs, o.Snapshot.enforcedNamespace()); err != nil {
		return nil, err
	}
	for _, obj := range objs {
		if ns := obj.GetNamespace(); ns != "" && !slices.Contains(o.Snapshot.Namespaces, ns) {
			o.Snapshot.Namespaces = append(o.Snapshot.Namespaces, ns)
		}
	}
	return objs, nil
}

// readSubject reads what a subject whose members are made rather than
// found is made from, -f's manifests or a workload read from the cluster,
// and expands manifests once (a TrainJob's runtime missing from the file is
// looked up in the cluster when online); Subject.made then makes the gang
// on the snapshot. Other subjects are found on the snapshot (resolveGang).
func (o *GangVerbOptions) readSubject(ctx context.Context) error {
	s := o.subject
	opts := workload.Options{Namespace: o.namespace, MinMember: o.Subject.MinMember}
	if !o.Snapshot.Offline() {
		opts.Runtimes = clusterRuntimes{ctx: ctx, config: o.Snapshot.RESTConfig}
	}
	switch s.Kind {
	case SubjectFile:
		objs, err := o.readManifestFile(s.Filename)
		if err != nil {
			return err
		}
		g, err := workload.FromManifestsWith(objs, opts.Namespace, opts.MinMember, opts.Runtimes)
		if err != nil {
			return asInputError(fmt.Errorf("%s: %w", manifestSource(s.Filename), err))
		}
		s.made = func(snap *schedule.Snapshot) (*gang.Gang, error) { return workload.Create(g, snap) }
	case SubjectWorkload:
		cfg, err := o.Snapshot.RESTConfig()
		if err != nil {
			return err
		}
		obj, err := readWorkload(ctx, cfg, s, o.namespace)
		if err != nil {
			return err
		}
		s.made = func(snap *schedule.Snapshot) (*gang.Gang, error) { return workload.Live(obj, snap, opts) }
	}
	return nil
}

// checkNamespaces refuses an object of -f whose namespace differs from the
// one -n gives, in kubectl's words (kubectl apply and create refuse it so):
// the what-if must not place pods where they would not be created.
func checkNamespaces(objs []*unstructured.Unstructured, enforced string) error {
	if enforced == "" {
		return nil
	}
	for _, obj := range objs {
		if ns := obj.GetNamespace(); ns != "" && ns != enforced {
			return usageErrorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", ns, enforced, ns)
		}
	}
	return nil
}

// readManifests reads and decodes -f's input: a missing file or input that
// is not manifests is reported before anything else is read.
func readManifests(filename string, stdin io.Reader) ([]*unstructured.Unstructured, error) {
	if filename != "-" {
		if info, err := os.Stat(filename); err == nil && info.IsDir() {
			return readManifestDir(filename)
		}
	}
	source := manifestSource(filename)
	var data []byte
	var err error
	if filename == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(filename)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, usageErrorf("%s: no such file", filename)
		}
		return nil, &exitError{code: ExitError, err: fmt.Errorf("reading %s: %w", source, err)}
	}
	return workload.Decode(data, source)
}

// readManifestDir reads -f DIR as kubectl does: the files of DIR (not of
// its subdirectories) named *.yaml, *.yml or *.json, in name order, each
// decoded as its own source. A directory without any is bad input.
func readManifestDir(dir string) ([]*unstructured.Unstructured, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &exitError{code: ExitError, err: fmt.Errorf("reading %s: %w", dir, err)}
	}
	var objs []*unstructured.Unstructured
	read := 0
	for _, e := range entries { // os.ReadDir sorts by name
		if e.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(e.Name())) {
			continue
		}
		more, err := readManifests(filepath.Join(dir, e.Name()), nil)
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
		read++
	}
	if read == 0 {
		return nil, usageErrorf("%s: a directory without .yaml, .yml or .json files", dir)
	}
	return objs, nil
}

// manifestSource names -f's input in messages.
func manifestSource(filename string) string {
	if filename == "-" {
		return "<stdin>"
	}
	return filename
}

// clusterRuntimes looks TrainJobs' runtimes up in the cluster
// (workload.TrainingRuntimes): a runtime the server does not serve, or that is
// not there, is none.
type clusterRuntimes struct {
	ctx context.Context
	// config is called only when a runtime is looked up, so that -f
	// without a TrainJob needs no kubeconfig to be read.
	config func() (*rest.Config, error)
}

func (c clusterRuntimes) TrainingRuntime(kind, namespace, name string) (*unstructured.Unstructured, error) {
	gvr, ok := workload.TrainingRuntimeResources[kind]
	if !ok {
		return nil, nil
	}
	if gvr.Resource == "clustertrainingruntimes" {
		namespace = ""
	}
	cfg, err := c.config()
	if err != nil {
		return nil, err
	}
	obj, err := snapshot.GetObject(c.ctx, cfg, gvr, namespace, name)
	var notServed *snapshot.NotServedError
	switch {
	case err == nil:
		return obj, nil
	case apierrors.IsNotFound(err), errors.As(err, &notServed):
		return nil, nil
	}
	return nil, err
}

// readWorkload reads a workload subject from the cluster, at the version
// FromManifests reads, in namespace. A resource the server does not serve
// or an object that is not there is bad input (exit 2), said in one line.
func readWorkload(ctx context.Context, cfg *rest.Config, s *Subject, namespace string) (*unstructured.Unstructured, error) {
	k := s.Workload
	obj, err := snapshot.GetObject(ctx, cfg, k.Resource, namespace, s.Name)
	var notServed *snapshot.NotServedError
	switch {
	case err == nil:
		return obj, nil
	case errors.As(err, &notServed) && len(notServed.Versions) > 0:
		return nil, usageErrorf("the server serves %s at %s, not at %s, the version this build reads",
			k.Qualified(), strings.Join(notServed.Versions, ", "), k.Resource.Version)
	case errors.As(err, &notServed):
		return nil, usageErrorf("the server does not serve %s (is %s installed?)", k.Qualified(), k.Kind)
	case apierrors.IsNotFound(err):
		return nil, asInputError(&gang.NotFoundError{Resource: k.Qualified(), Namespace: namespace, Name: s.Name})
	}
	return nil, err
}

// asInputError marks resolution failures as bad input: a group or pod not in
// the snapshot, an ambiguous name, a malformed manifest or PodGroup field. An
// error that already carries its exit code (an I/O error) keeps it.
func asInputError(err error) error {
	var exit *exitError
	if errors.As(err, &exit) {
		return err
	}
	if nf := (*gang.NotFoundError)(nil); errors.As(err, &nf) && nf.Unread() {
		// It may exist: not bad input but a question the snapshot cannot
		// answer (issue #42), exit 3 as for anything not evaluated.
		return &exitError{code: ExitNo, err: err}
	}
	return &exitError{code: ExitUsage, err: err}
}

// resolveWaiting finds a queueing layer's workload that waits with no
// pods yet (gang.Waiter) on the snapshot.
func resolveWaiting(snap *schedule.Snapshot, s *Subject, namespace string) (*gang.Gang, error) {
	for _, g := range s.Waiter.Waiting(snap) {
		if g.Namespace == namespace && strings.HasSuffix(g.Subject, "/"+s.Name) {
			return g, nil
		}
	}
	// Say which of the reasons it is, as far as the snapshot tells.
	var elsewhere []string
	for _, u := range snap.Objects {
		if u.GetName() != s.Name || !s.Waiter.Holds(u) {
			continue
		}
		if u.GetNamespace() != namespace {
			elsewhere = append(elsewhere, u.GetNamespace())
			continue
		}
		return nil, usageErrorf("%s in namespace %s does not wait in a queue with no pods: %s (explain its job, or its pods, instead)", s.Arg, namespace, s.Waiter.NotWaiting(snap, u))
	}
	if len(elsewhere) > 0 {
		return nil, usageErrorf("%s is not in namespace %s; it is in %s (give -n)", s.Arg, namespace, strings.Join(elsewhere, ", "))
	}
	return nil, usageErrorf("%s: the snapshot holds no such object in namespace %s", s.Arg, namespace)
}
