// The envtest suite, kubebuilder-style: envtest starts the control plane from
// KUBEBUILDER_ASSETS (kubefake's, from `kubefake envtest-assets DIR`, when scripts/envtest.sh
// runs it), installs the CRD from config/crd with its conversion webhook pointed at this
// process, installs config/webhook's ValidatingWebhookConfiguration the same way, and a
// manager serves both webhooks and runs the reconciler. Nothing here knows about kubefake.
package controller

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	v1 "example.kubefake.dev/widgets/api/v1"
	v2 "example.kubefake.dev/widgets/api/v2"
	widgetwebhook "example.kubefake.dev/widgets/internal/webhook"
)

// rbacNamespace is reconciled only by the manager rbac_test.go runs with the service
// account's token; the suite's manager leaves it alone.
const rbacNamespace = "rbac-check"

var (
	scheme    = runtime.NewScheme()
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	ctx       context.Context

	// convertCalls counts the ConversionReviews the apiserver sent to /convert.
	convertCalls atomic.Int64
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1.AddToScheme(scheme))
	utilruntime.Must(v2.AddToScheme(scheme))
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapInfo())))
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run scripts/envtest.sh, or point it at `kubefake envtest-assets DIR` (or at setup-envtest's binaries)")
		return 1
	}

	// TestGarbageCollection needs kube-controller-manager's garbage collector, which envtest's
	// bare apiserver lacks; kubefake runs it when asked (a real apiserver ignores the variable,
	// and with USE_EXISTING_CLUSTER=true a real cluster has its own).
	if err := os.Setenv("KUBEFAKE_CONTROLLERS", "garbage-collector-controller"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()

	testEnv = &envtest.Environment{
		Scheme:                scheme,
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd")},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join("..", "..", "config", "webhook")},
		},
	}
	began := time.Now()
	var err error
	cfg, err = testEnv.Start()
	startTime := time.Since(began)
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest Start: %v\n", err)
		if testEnv.ControlPlane.APIServer != nil {
			_ = testEnv.Stop()
		}
		return 1
	}
	fmt.Printf("envtest: Start took %s (control plane up, CRD and webhooks installed)\n", startTime.Round(time.Millisecond))
	defer func() {
		began := time.Now()
		if err := testEnv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "envtest Stop: %v\n", err)
		}
		fmt.Printf("envtest: Stop took %s\n", time.Since(began).Round(time.Millisecond))
	}()

	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		return 1
	}

	stopManager, err := startManager()
	if err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		return 1
	}
	code := m.Run()
	stopManager()
	return code
}

// startManager runs the suite's manager: the webhook server where envtest pointed the
// webhooks, the conversion and validating webhooks, and the reconciler for every namespace but
// rbacNamespace. It returns once the webhook server answers and the caches are synced.
func startManager() (stop func(), err error) {
	opts := &testEnv.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    opts.LocalServingHost,
			Port:    opts.LocalServingPort,
			CertDir: opts.LocalServingCertDir,
		}),
		Cache: cache.Options{
			DefaultFieldSelector: fields.OneTermNotEqualSelector("metadata.namespace", rbacNamespace),
		},
	})
	if err != nil {
		return nil, err
	}
	// /convert, counted; the webhook builder then sees it handled and leaves it.
	convert := conversion.NewWebhookHandler(mgr.GetScheme(), mgr.GetConverterRegistry())
	mgr.GetWebhookServer().Register("/convert", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		convertCalls.Add(1)
		convert.ServeHTTP(w, r)
	}))
	if err := widgetwebhook.SetupWidgetWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&WidgetReconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("widget-controller"),
	}).SetupWithManager(mgr, "widget"); err != nil {
		return nil, err
	}

	mgrCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "manager stopped: %v\n", err)
		}
	}

	// The webhook server answers TLS (as kubebuilder's scaffolded suite waits for it).
	address := net.JoinHostPort(opts.LocalServingHost, fmt.Sprint(opts.LocalServingPort))
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", address, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("webhook server at %s: %w", address, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		stop()
		return nil, fmt.Errorf("manager caches did not sync")
	}
	return stop, nil
}

// eventually retries f every 50ms until it returns nil, failing the test after 15s with f's
// last error.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after 15s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// zapInfo is the log level: info, or debug when ENVTEST_DEBUG is set.
func zapInfo() zapcore.Level {
	if os.Getenv("ENVTEST_DEBUG") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.InfoLevel
}
