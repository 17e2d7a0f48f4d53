// Package serve shows client-go against `kubefake serve` directly, for tests that do not use
// envtest: the test starts the binary on a free port, reads the kubeconfig path it prints, and
// builds a clientset from that file. The binary is $KUBEFAKE_BIN (scripts/envtest.sh sets it),
// else `kubefake` on the PATH.
package serve

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// startKubefake runs `kubefake serve` until the test ends and returns a clientset for it.
func startKubefake(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	bin := os.Getenv("KUBEFAKE_BIN")
	if bin == "" {
		bin = "kubefake"
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cmd := exec.Command(bin, "serve", "--port", "0", "--kubeconfig", kubeconfig)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting kubefake (set KUBEFAKE_BIN or put kubefake on the PATH): %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "KUBECONFIG=") {
	}
	go func() { // keep draining stdout
		for lines.Scan() {
		}
	}()
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("kubefake serve did not write its kubeconfig: %v", err)
	}
	return kubernetes.NewForConfigOrDie(config)
}

func TestConfigMapCRUDAndWatch(t *testing.T) {
	begin := time.Now()
	client := startKubefake(t)
	t.Logf("start-to-ready %v", time.Since(begin))
	ctx := context.Background()
	configMaps := client.CoreV1().ConfigMaps("default")

	w, err := configMaps.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=settings"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := configMaps.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"},
		Data:       map[string]string{"mode": "test"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}},
		metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: want AlreadyExists, got %v", err)
	}
	select {
	case event := <-w.ResultChan():
		cm, ok := event.Object.(*corev1.ConfigMap)
		if !ok || event.Type != watch.Added || cm.Name != "settings" || cm.Data["mode"] != "test" {
			t.Fatalf("want ADDED settings with mode=test, got %s %v", event.Type, event.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10 s")
	}

	created.Data["mode"] = "changed"
	if _, err := configMaps.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	created.Data["mode"] = "stale"
	if _, err := configMaps.Update(ctx, created, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: want Conflict, got %v", err)
	}
	if err := configMaps.Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := configMaps.Get(ctx, "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: want NotFound, got %v", err)
	}
}
