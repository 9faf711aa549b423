package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Field indexes on App: the referent each reference names, as "namespace/name".
const (
	databaseIndex = "spec.databaseRef"
	cacheIndex    = "spec.cacheRef"
	secretIndex   = "spec.secretRef"
)

// errNotReady makes cr-backoff's reconcile fail while a referent is missing
// or not Ready, so the controller's default rate limiter requeues the App.
var errNotReady = errors.New("a referent is missing or not Ready")

// runController runs the App controller on controller-runtime.
//
// cr-watch (backoff false) is the idiomatic way: For(&App{}), plus Watches on
// Database, Cache and Secret whose EnqueueRequestsFromMapFunc finds the
// referring Apps through a field index; a reconcile that finds a referent not
// Ready returns nil and waits for the referent's event.
//
// cr-backoff is the classic way: For(&App{}) only; a referent not Ready
// returns an error, and the default controller rate limiter (5 ms·2ⁿ up to
// 1000 s, max'ed with a 10 qps / burst 100 bucket) decides when to retry.
//
// Both read referents through the manager's cached client, Apps in the
// given namespace, referents in every namespace, as refwatch's engine does.
func runController(ctx context.Context, cfg *rest.Config, namespace string, workers int, backoff bool, ready func()) error {
	if backoff {
		// Every wait is a "Reconciler error" by design: logging each would measure the logger.
		ctrl.SetLogger(logr.Discard())
	} else {
		ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := addToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{
			ByObject: map[client.Object]cache.ByObject{&App{}: {Namespaces: map[string]cache.Config{namespace: {}}}},
		},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	r := &appReconciler{client: mgr.GetClient(), backoff: backoff}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("app").
		For(&App{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers})
	if !backoff {
		indexer := mgr.GetFieldIndexer()
		for field, refOf := range map[string]func(*App) ObjectRef{
			databaseIndex: func(a *App) ObjectRef { return a.Spec.DatabaseRef },
			cacheIndex:    func(a *App) ObjectRef { return a.Spec.CacheRef },
			secretIndex:   func(a *App) ObjectRef { return a.Spec.SecretRef },
		} {
			if err := indexer.IndexField(ctx, &App{}, field, func(o client.Object) []string {
				app := o.(*App)
				ref := refOf(app)
				if ref.Name == "" {
					return nil
				}
				return []string{refKey(app, ref)}
			}); err != nil {
				return fmt.Errorf("indexing Apps by %s: %w", field, err)
			}
		}
		b = b.Watches(&Database{}, handler.EnqueueRequestsFromMapFunc(r.referrers(databaseIndex))).
			Watches(&Cache{}, handler.EnqueueRequestsFromMapFunc(r.referrers(cacheIndex))).
			Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.referrers(secretIndex)))
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("building the controller: %w", err)
	}

	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	// Ready once every informer this mode uses holds its initial list; cr-backoff's
	// referent informers would otherwise start on its first read, during the run.
	for _, obj := range []client.Object{&App{}, &Database{}, &Cache{}, &corev1.Secret{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			select {
			case err2 := <-done:
				return fmt.Errorf("the manager stopped before its caches synced: %w", errors.Join(err, err2))
			default:
				return fmt.Errorf("waiting for the %T informer: %w", obj, err)
			}
		}
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return <-done
	}
	ready()
	return <-done
}

// refKey is the field index value of a reference: the referent's "namespace/name".
func refKey(app *App, ref ObjectRef) string {
	ns := ref.Namespace
	if ns == "" {
		ns = app.Namespace
	}
	return ns + "/" + ref.Name
}

type appReconciler struct {
	client  client.Client
	backoff bool
}

// referrers maps a referent event to the Apps whose field index names it.
func (r *appReconciler) referrers(index string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var apps AppList
		if err := r.client.List(ctx, &apps, client.MatchingFields{index: o.GetNamespace() + "/" + o.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the Apps that refer to a referent", "index", index, "referent", client.ObjectKeyFromObject(o))
			return nil
		}
		reqs := make([]reconcile.Request, len(apps.Items))
		for i := range apps.Items {
			reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&apps.Items[i])}
		}
		return reqs
	}
}

func (r *appReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var app App
	if err := r.client.Get(ctx, req.NamespacedName, &app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if app.Status.ResolvedAt != "" {
		return ctrl.Result{}, nil
	}
	ready, err := r.referentsReady(ctx, &app)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !ready {
		if r.backoff {
			return ctrl.Result{}, errNotReady
		}
		// A Watches handler queues the App again when a referent changes.
		return ctrl.Result{}, nil
	}
	resolvedAt := time.Now().UTC().Format(resolvedAtLayout)
	// The resourceVersion makes a stale cached App fail with 409 instead of writing twice.
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"status":{"resolvedAt":%q}}`, app.ResourceVersion, resolvedAt)
	err = r.client.Status().Patch(ctx, &app, client.RawPatch(types.MergePatchType, []byte(patch)))
	if apierrors.IsConflict(err) {
		// The newer App is on its way to the cache and queues the App again.
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, err
}

// referentsReady reads the App's Database, Cache and Secret from the cache:
// the first two must have condition Ready=True, the Secret must exist.
func (r *appReconciler) referentsReady(ctx context.Context, app *App) (bool, error) {
	var db Database
	var c Cache
	var s corev1.Secret
	for _, x := range []struct {
		ref ObjectRef
		obj client.Object
	}{{app.Spec.DatabaseRef, &db}, {app.Spec.CacheRef, &c}, {app.Spec.SecretRef, &s}} {
		if x.ref.Name == "" {
			return false, nil
		}
		ns := x.ref.Namespace
		if ns == "" {
			ns = app.Namespace
		}
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: x.ref.Name}, x.obj); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, err
		}
	}
	return isReady(&db.Status) && isReady(&c.Status), nil
}
