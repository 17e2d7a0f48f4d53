// Package bare checks that kubefake, started by envtest as its kube-apiserver, behaves as
// envtest's bare apiserver does: nothing kube-controller-manager would do happens (no garbage
// collector, no namespace finalization, no default ServiceAccount or kube-root-ca.crt), unless
// the suite opts in through KUBEFAKE_CONTROLLERS (or the --kubefake-controllers flag).
package bare

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// start runs an envtest control plane with KUBEFAKE_CONTROLLERS set to controllers.
func start(t *testing.T, controllers string) *kubernetes.Clientset {
	t.Helper()
	t.Setenv("KUBEFAKE_CONTROLLERS", controllers)
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest Start: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("envtest Stop: %v", err)
		}
	})
	return kubernetes.NewForConfigOrDie(cfg)
}

var ctx = context.Background()

func namespace(t *testing.T, cs *kubernetes.Clientset, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
}

// ownerAndDependent creates a ConfigMap and a Secret it owns (blocking its owner's deletion).
func ownerAndDependent(t *testing.T, cs *kubernetes.Clientset, ns string) {
	t.Helper()
	owner, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create owner: %v", err)
	}
	block := true
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "dependent",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap",
			Name: owner.Name, UID: owner.UID, BlockOwnerDeletion: &block}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create dependent: %v", err)
	}
	foreground := metav1.DeletePropagationForeground
	err = cs.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: &foreground})
	if err != nil {
		t.Fatalf("delete owner: %v", err)
	}
}

// settle gives a controller that should not run the time it would take if it did.
func settle() { time.Sleep(300 * time.Millisecond) }

func TestNothingKubeControllerManagerWouldDo(t *testing.T) {
	cs := start(t, "")
	namespace(t, cs, "bare")
	settle()
	if _, err := cs.CoreV1().ServiceAccounts("bare").Get(ctx, "default", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the default ServiceAccount: %v, want NotFound", err)
	}
	if _, err := cs.CoreV1().ConfigMaps("bare").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("kube-root-ca.crt: %v, want NotFound", err)
	}

	ownerAndDependent(t, cs, "bare")
	settle()
	owner, err := cs.CoreV1().ConfigMaps("bare").Get(ctx, "owner", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the owner of a foreground deletion stays: %v", err)
	}
	if owner.DeletionTimestamp == nil || fmt.Sprint(owner.Finalizers) != "[foregroundDeletion]" {
		t.Errorf("owner: deletionTimestamp %v, finalizers %v", owner.DeletionTimestamp, owner.Finalizers)
	}
	if _, err := cs.CoreV1().Secrets("bare").Get(ctx, "dependent", metav1.GetOptions{}); err != nil {
		t.Errorf("the dependent stays: %v", err)
	}

	if err := cs.CoreV1().Namespaces().Delete(ctx, "bare", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete namespace: %v", err)
	}
	settle()
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "bare", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the namespace stays: %v", err)
	}
	if ns.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("namespace phase %q, want Terminating", ns.Status.Phase)
	}
}

func TestControllersOptIn(t *testing.T) {
	cs := start(t, "garbage-collector,namespace,serviceaccount")
	namespace(t, cs, "managed")
	if _, err := cs.CoreV1().ServiceAccounts("managed").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("the default ServiceAccount: %v", err)
	}
	ownerAndDependent(t, cs, "managed")
	eventually(t, "the foreground deletion completes", func() error {
		_, err := cs.CoreV1().ConfigMaps("managed").Get(ctx, "owner", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("owner: %v", err)
	})
	if err := cs.CoreV1().Namespaces().Delete(ctx, "managed", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete namespace: %v", err)
	}
	eventually(t, "the namespace goes", func() error {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "managed", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("namespace: %v", err)
	})
}

func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
