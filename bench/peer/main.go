// Command peer is the Go side of refwatch's peer benchmark: the demo's App
// controller written with controller-runtime (cr-watch, cr-backoff), and a
// bare client-go watch that is the floor (raw-watch). Every mode writes
// status.resolvedAt on an App once its Database, Cache and Secret are Ready;
// the benchmark's workload generator reads it from there.
//
//	peer --mode cr-watch --namespace NS --kubeconfig FILE [--workers 8]
//
// It prints "ready" on stdout once its caches are synced, and exits 0 on
// SIGTERM or SIGINT.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// resolvedAtLayout is RFC 3339 with milliseconds in UTC, as JavaScript's toISOString writes it.
const resolvedAtLayout = "2006-01-02T15:04:05.000Z07:00"

func main() {
	// A FlagSet of its own: controller-runtime registers --kubeconfig on the global one.
	flags := flag.NewFlagSet("peer", flag.ExitOnError)
	mode := flags.String("mode", "", "cr-watch, cr-backoff or raw-watch")
	namespace := flags.String("namespace", "", "the namespace of the Apps (referents are watched in every namespace)")
	kubeconfig := flags.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (default $KUBECONFIG)")
	workers := flags.Int("workers", 8, "concurrent reconciles (controller-runtime's MaxConcurrentReconciles) or status writers")
	_ = flags.Parse(os.Args[1:])
	if err := run(*mode, *namespace, *kubeconfig, *workers); err != nil {
		fmt.Fprintf(os.Stderr, "peer: %v\n", err)
		os.Exit(1)
	}
}

func run(mode, namespace, kubeconfig string, workers int) error {
	if namespace == "" {
		return fmt.Errorf("--namespace is required: the namespace that holds the Apps")
	}
	if kubeconfig == "" {
		return fmt.Errorf("--kubeconfig (or $KUBECONFIG) is required: the cluster to run against")
	}
	if workers < 1 {
		return fmt.Errorf("--workers must be at least 1, got %d", workers)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
	}
	tune(cfg)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ready := func() { fmt.Println("ready") }
	switch mode {
	case "cr-watch":
		return runController(ctx, cfg, namespace, workers, false, ready)
	case "cr-backoff":
		return runController(ctx, cfg, namespace, workers, true, ready)
	case "raw-watch":
		return runRawWatch(ctx, cfg, namespace, workers, ready)
	default:
		return fmt.Errorf("--mode %q: choose cr-watch, cr-backoff or raw-watch", mode)
	}
}

// tune sets the client as controller-runtime's ctrl.GetConfig() does: QPS -1
// disables client-side rate limiting and leaves flow control to the API
// server (priority and fairness). refwatch's client has no client-side limit either.
func tune(cfg *rest.Config) {
	cfg.QPS = -1
	cfg.Burst = 0
	cfg.UserAgent = "refwatch-peer"
}
