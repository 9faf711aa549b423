package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	watchtools "k8s.io/client-go/tools/watch"
)

var (
	appsGVR      = groupVersion.WithResource("apps")
	databasesGVR = groupVersion.WithResource("databases")
	cachesGVR    = groupVersion.WithResource("caches")
	secretsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// runRawWatch is the floor: one bare client-go watch per kind (a list, then
// a RetryWatcher from its resourceVersion), no cache, no queue, no reconcile.
// It stamps an App resolved the moment the event that makes its last
// referent Ready arrives, then writes status.resolvedAt from a pool of
// writers, so the write never delays the next event.
func runRawWatch(ctx context.Context, cfg *rest.Config, namespace string, workers int, ready func()) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// Room for every App of the largest run: a full channel would hold up the watches.
	t := newReadinessTracker(1 << 16)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range t.resolved {
				patch := fmt.Sprintf(`{"status":{"resolvedAt":%q}}`, w.at.UTC().Format(resolvedAtLayout))
				_, err := dyn.Resource(appsGVR).Namespace(w.namespace).Patch(ctx, w.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
				if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
					fmt.Fprintf(os.Stderr, "peer: writing resolvedAt of App %s/%s: %v\n", w.namespace, w.name, err)
				}
			}
		}()
	}

	sources := []struct {
		client dynamic.ResourceInterface
		handle func(watch.EventType, *unstructured.Unstructured)
	}{
		{dyn.Resource(appsGVR).Namespace(namespace), t.app},
		{dyn.Resource(databasesGVR), func(e watch.EventType, o *unstructured.Unstructured) { t.referent("Database", e, o) }},
		{dyn.Resource(cachesGVR), func(e watch.EventType, o *unstructured.Unstructured) { t.referent("Cache", e, o) }},
		{dyn.Resource(secretsGVR), func(e watch.EventType, o *unstructured.Unstructured) { t.referent("Secret", e, o) }},
	}
	watchers := make([]*watchtools.RetryWatcher, 0, len(sources))
	defer func() {
		for _, w := range watchers {
			w.Stop()
			<-w.Done()
		}
		close(t.resolved)
		wg.Wait()
	}()
	for _, s := range sources {
		list, err := s.client.List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing: %w", err)
		}
		for i := range list.Items {
			s.handle(watch.Added, &list.Items[i])
		}
		w, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), &watchFunc{s.client})
		if err != nil {
			return fmt.Errorf("watching: %w", err)
		}
		watchers = append(watchers, w)
		go func(w *watchtools.RetryWatcher, handle func(watch.EventType, *unstructured.Unstructured)) {
			for e := range w.ResultChan() {
				if o, ok := e.Object.(*unstructured.Unstructured); ok {
					handle(e.Type, o)
				}
			}
		}(w, s.handle)
	}
	ready()
	<-ctx.Done()
	return nil
}

// watchFunc adapts a dynamic client to the RetryWatcher's watch-only interface.
type watchFunc struct{ client dynamic.ResourceInterface }

func (f *watchFunc) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.AllowWatchBookmarks = true
	return f.client.Watch(ctx, opts)
}

type resolution struct {
	namespace, name string
	at              time.Time
}

type appRefs struct {
	keys     [3]string // Database, Cache, Secret: "Kind/namespace/name"
	resolved bool
}

// readinessTracker holds which referents are Ready and which Apps wait on
// them; it sends each App to resolved once, when its last referent is Ready.
type readinessTracker struct {
	mu        sync.Mutex
	ready     map[string]bool
	apps      map[string]*appRefs
	referrers map[string][]string
	resolved  chan resolution
}

func newReadinessTracker(buffer int) *readinessTracker {
	return &readinessTracker{
		ready:     map[string]bool{},
		apps:      map[string]*appRefs{},
		referrers: map[string][]string{},
		resolved:  make(chan resolution, buffer),
	}
}

func (t *readinessTracker) referent(kind string, e watch.EventType, o *unstructured.Unstructured) {
	key := kind + "/" + o.GetNamespace() + "/" + o.GetName()
	ok := e != watch.Deleted && (kind == "Secret" || readyCondition(o))
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if e == watch.Bookmark || t.ready[key] == ok {
		return
	}
	t.ready[key] = ok
	if !ok {
		return
	}
	for _, app := range t.referrers[key] {
		t.check(app, now)
	}
}

func (t *readinessTracker) app(e watch.EventType, o *unstructured.Unstructured) {
	if e == watch.Bookmark {
		return
	}
	ns, name := o.GetNamespace(), o.GetName()
	key := ns + "/" + name
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if e == watch.Deleted {
		delete(t.apps, key)
		return
	}
	if _, known := t.apps[key]; known {
		return
	}
	resolvedAt, _, _ := unstructured.NestedString(o.Object, "status", "resolvedAt")
	refs := &appRefs{resolved: resolvedAt != ""}
	for i, f := range []struct{ field, kind string }{{"databaseRef", "Database"}, {"cacheRef", "Cache"}, {"secretRef", "Secret"}} {
		refName, _, _ := unstructured.NestedString(o.Object, "spec", f.field, "name")
		refNs, _, _ := unstructured.NestedString(o.Object, "spec", f.field, "namespace")
		if refNs == "" {
			refNs = ns
		}
		refs.keys[i] = f.kind + "/" + refNs + "/" + refName
		t.referrers[refs.keys[i]] = append(t.referrers[refs.keys[i]], key)
	}
	t.apps[key] = refs
	t.check(key, now)
}

// check sends the App to the writers if every referent is Ready; called with mu held.
func (t *readinessTracker) check(key string, now time.Time) {
	a := t.apps[key]
	if a == nil || a.resolved {
		return
	}
	for _, k := range a.keys {
		if !t.ready[k] {
			return
		}
	}
	a.resolved = true
	ns, name, _ := strings.Cut(key, "/")
	t.resolved <- resolution{namespace: ns, name: name, at: now}
}

func readyCondition(o *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}
