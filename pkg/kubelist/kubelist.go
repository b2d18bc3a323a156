// Package kubelist reads a whole LIST page by page, as client-go's pager
// does, and survives the continue token expiring: a LIST of a large cluster
// can outlive etcd's compaction window, and the API server then answers the
// next page 410 Gone (reason Expired). client-go's EachListItem returns that
// error; ListPager.List would list again in one request (FullListIfExpired).
// List does the latter for every reader of the product (the live snapshot,
// bind's re-reads): what was read is dropped and the list is read again in
// one request, so every object comes from one resourceVersion, never two
// (docs/design.md#snapshot).
package kubelist

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"
)

// DefaultPageSize is how many objects one LIST page asks for, client-go's
// pager's default and kube-apiserver's recommended chunk.
const DefaultPageSize = 500

// List reads every item of the list page reads, pageSize objects a
// request. When a continue token expires, what was read is dropped and the
// list is read again whole in one request, once. counted, when set, is told
// of the items as they arrive, and of those dropped (a negative count).
func List(ctx context.Context, page pager.ListPageFunc, pageSize int64, opts metav1.ListOptions, counted func(int64)) ([]runtime.Object, error) {
	paged := false // a continue token was sent: one that may expire
	p := pager.New(func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		paged = paged || o.Continue != ""
		obj, err := page(ctx, o)
		if err != nil {
			return nil, err
		}
		return obj, IsList(obj)
	})
	var items []runtime.Object
	each := func(obj runtime.Object) error {
		items = append(items, obj)
		if counted != nil {
			counted(1)
		}
		return nil
	}
	p.PageSize = pageSize
	err := p.EachListItem(ctx, opts, each)
	if !apierrors.IsResourceExpired(err) || !paged {
		// An expired first page is no stale token: nothing to restart.
		return items, err
	}
	if counted != nil {
		counted(-int64(len(items)))
	}
	items = nil
	p.PageSize = 0 // no limit: one request, no token to expire
	err = p.EachListItem(ctx, opts, each)
	return items, err
}

// ErrNotAList is an answer to a LIST that no API server gives: a list
// without a resourceVersion. A typed client that is answered another kind
// (a misrouted or broken proxy) decodes it into a new object and hands back
// the empty list it was given, with no error (rest.Result.Into): taken as
// it is, that would be a cluster without pods or nodes.
var ErrNotAList = errors.New("the server's answer to a LIST is not that list (it has no resourceVersion): a proxy or a server that is not kube-apiserver answered")

// IsList checks that obj is a list an API server answered: every LIST
// kube-apiserver serves carries the resourceVersion it was read at.
func IsList(obj runtime.Object) error {
	m, err := meta.ListAccessor(obj)
	if err != nil {
		return fmt.Errorf("the server's answer to a LIST is not a list: %w", err)
	}
	if m.GetResourceVersion() == "" {
		return ErrNotAList
	}
	return nil
}
