package controller

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "example.kubefake.dev/widgets/api/v1"
	v2 "example.kubefake.dev/widgets/api/v2"
	widgetwebhook "example.kubefake.dev/widgets/internal/webhook"
)

// newNamespace creates a namespace of its own for a test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: strings.ToLower(t.Name()) + "-"}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

// controlledBy says whether obj's controller reference is the Widget w, as
// SetControllerReference writes it.
func controlledBy(obj metav1.Object, w *v2.Widget) error {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return fmt.Errorf("%s has no controller reference: %v", obj.GetName(), obj.GetOwnerReferences())
	}
	want := metav1.OwnerReference{
		APIVersion: "example.kubefake.dev/v2", Kind: "Widget", Name: w.Name, UID: w.UID,
		Controller: new(true), BlockOwnerDeletion: new(true),
	}
	if ref.APIVersion != want.APIVersion || ref.Kind != want.Kind || ref.Name != want.Name || ref.UID != want.UID ||
		!*ref.BlockOwnerDeletion {
		return fmt.Errorf("%s's controller is %+v, want %+v", obj.GetName(), *ref, want)
	}
	return nil
}

// waitOwned waits until the reconciler made w's ConfigMap and Deployment as w's spec says, and
// recorded them in w's status.
func waitOwned(t *testing.T, c client.Client, w *v2.Widget) {
	t.Helper()
	key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
	eventually(t, "the Widget's ConfigMap", func() error {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, types.NamespacedName{Namespace: w.Namespace, Name: ConfigMapName(w.Name)}, &cm); err != nil {
			return err
		}
		if got := cm.Data["message"]; got != w.Spec.Message {
			return fmt.Errorf("message %q, want %q", got, w.Spec.Message)
		}
		return controlledBy(&cm, w)
	})
	eventually(t, "the Widget's Deployment", func() error {
		var dep appsv1.Deployment
		if err := c.Get(ctx, key, &dep); err != nil {
			return err
		}
		if dep.Spec.Replicas == nil || *dep.Spec.Replicas != w.Spec.Replicas {
			return fmt.Errorf("replicas %v, want %d", dep.Spec.Replicas, w.Spec.Replicas)
		}
		return controlledBy(&dep, w)
	})
	eventually(t, "the Widget's status", func() error {
		var got v2.Widget
		if err := c.Get(ctx, key, &got); err != nil {
			return err
		}
		want := v2.WidgetStatus{ConfigMapName: ConfigMapName(w.Name), DeploymentName: w.Name, ObservedGeneration: got.Generation}
		if got.Status != want {
			return fmt.Errorf("status %+v, want %+v", got.Status, want)
		}
		return nil
	})
}

// The reconciler creates a ConfigMap and a Deployment owned by the Widget, sets its status,
// and follows a spec change.
func TestReconcilerCreatesOwnedObjects(t *testing.T) {
	ns := newNamespace(t)
	w := &v2.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "alpha", Namespace: ns},
		Spec:       v2.WidgetSpec{Replicas: 2, Message: "hello"},
	}
	if err := k8sClient.Create(ctx, w); err != nil {
		t.Fatalf("create widget: %v", err)
	}
	if w.Generation != 1 || w.UID == "" {
		t.Fatalf("created widget has generation %d, uid %q", w.Generation, w.UID)
	}
	waitOwned(t, k8sClient, w)

	// A spec change: new generation, the Deployment and ConfigMap follow.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		w.Spec.Replicas, w.Spec.Message = 3, "bye"
		return k8sClient.Update(ctx, w)
	}); err != nil {
		t.Fatalf("update widget: %v", err)
	}
	if w.Generation != 2 {
		t.Fatalf("generation after a spec change: %d, want 2", w.Generation)
	}
	waitOwned(t, k8sClient, w)
}

// The validating webhook, served by the suite's manager, refuses a negative replicas on create
// and on update, and the apiserver words the refusal as it does for every webhook.
func TestWebhookRefusesNegativeReplicas(t *testing.T) {
	ns := newNamespace(t)
	bad := &v2.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "negative", Namespace: ns},
		Spec:       v2.WidgetSpec{Replicas: -1},
	}
	err := k8sClient.Create(ctx, bad)
	wantDenied(t, err, -1)
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(bad), &v2.Widget{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the refused Widget: get answers %v, want NotFound", err)
	}

	good := &v2.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "positive", Namespace: ns},
		Spec:       v2.WidgetSpec{Replicas: 1},
	}
	if err := k8sClient.Create(ctx, good); err != nil {
		t.Fatalf("a valid Widget is refused: %v", err)
	}
	good.Spec.Replicas = -5
	wantDenied(t, k8sClient.Update(ctx, good), -5)
}

// wantDenied checks err is the apiserver's answer to the validating webhook's refusal.
func wantDenied(t *testing.T, err error, replicas int32) {
	t.Helper()
	want := fmt.Sprintf("admission webhook %q denied the request: %s", "vwidget-v2.kb.io", widgetwebhook.NegativeReplicasMessage(replicas))
	if err == nil {
		t.Fatalf("a Widget with %d replicas was admitted", replicas)
	}
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("refusal: %v (reason %q, code %d), want Forbidden %q", err, apierrors.ReasonForError(err), statusCode(err), want)
	}
}

func statusCode(err error) int32 {
	if s, ok := err.(apierrors.APIStatus); ok {
		return s.Status().Code
	}
	return 0
}

// The webhook is registered for v2 only, with the default matchPolicy Equivalent: a write
// through v1 must be converted to v2 (by the conversion webhook) and sent to it, and refused.
func TestWebhookSeesV1WritesAsV2(t *testing.T) {
	ns := newNamespace(t)
	bad := &v1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "negative-v1", Namespace: ns},
		Spec:       v1.WidgetSpec{Size: -1},
	}
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, bad) }) // if it was admitted after all
	wantDenied(t, k8sClient.Create(ctx, bad), -1)
}

// The same object through both versions: written through v1 (stored as v2), read through v2
// and v1, listed through both, patched through v1; each conversion goes through the suite's
// /convert.
func TestConversionWebhook(t *testing.T) {
	ns := newNamespace(t)
	before := convertCalls.Load()
	w1 := &v1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "converted", Namespace: ns},
		Spec:       v1.WidgetSpec{Size: 4, Message: "from v1"},
	}
	if err := k8sClient.Create(ctx, w1); err != nil {
		t.Fatalf("create through v1: %v", err)
	}
	if w1.Spec.Size != 4 || w1.UID == "" {
		t.Fatalf("create through v1 answered %+v", w1)
	}

	var w2 v2.Widget
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(w1), &w2); err != nil {
		t.Fatalf("get through v2: %v", err)
	}
	if w2.Spec.Replicas != 4 || w2.Spec.Message != "from v1" || w2.UID != w1.UID {
		t.Fatalf("through v2: %+v", w2.Spec)
	}
	var again v1.Widget
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(w1), &again); err != nil {
		t.Fatalf("get through v1: %v", err)
	}
	// (The resourceVersions may differ: the reconciler may have set the status in between.)
	if again.Spec.Size != 4 || again.Spec.Message != "from v1" || again.UID != w1.UID {
		t.Fatalf("through v1: %+v uid %s, want size 4 uid %s", again.Spec, again.UID, w1.UID)
	}

	var l1 v1.WidgetList
	if err := k8sClient.List(ctx, &l1, client.InNamespace(ns)); err != nil || len(l1.Items) != 1 || l1.Items[0].Spec.Size != 4 {
		t.Fatalf("list through v1: %v %+v", err, l1.Items)
	}
	var l2 v2.WidgetList
	if err := k8sClient.List(ctx, &l2, client.InNamespace(ns)); err != nil || len(l2.Items) != 1 || l2.Items[0].Spec.Replicas != 4 {
		t.Fatalf("list through v2: %v %+v", err, l2.Items)
	}

	// The reconciler (which works on v2) sees it like any other Widget.
	w2.Spec.Message = "from v1"
	waitOwned(t, k8sClient, &w2)

	// A merge patch through v1 changes v2's replicas, and the Deployment follows.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"size":6}}`))
	if err := k8sClient.Patch(ctx, &again, patch); err != nil {
		t.Fatalf("patch through v1: %v", err)
	}
	if again.Spec.Size != 6 {
		t.Fatalf("patched through v1: %+v", again.Spec)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(w1), &w2); err != nil || w2.Spec.Replicas != 6 {
		t.Fatalf("through v2 after the patch: %v %+v", err, w2.Spec)
	}
	waitOwned(t, k8sClient, &w2)

	if calls := convertCalls.Load() - before; calls == 0 {
		t.Fatalf("the conversion webhook was never called")
	} else {
		t.Logf("the apiserver sent %d ConversionReviews", calls)
	}
}

// Deleting a Widget deletes what it owns (the garbage collector), in the background and in
// the foreground; an object whose owner is already gone is collected too. envtest's usual
// control plane (etcd and kube-apiserver) runs no kube-controller-manager, hence no garbage
// collector: this holds on kubefake, which runs one when asked (KUBEFAKE_CONTROLLERS, set in
// TestMain), and on a real cluster (USE_EXISTING_CLUSTER=true).
func TestGarbageCollection(t *testing.T) {
	ns := newNamespace(t)
	for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
		t.Run(string(policy), func(t *testing.T) {
			w := &v2.Widget{
				ObjectMeta: metav1.ObjectMeta{Name: "doomed-" + strings.ToLower(string(policy)), Namespace: ns},
				Spec:       v2.WidgetSpec{Replicas: 1, Message: "soon gone"},
			}
			if err := k8sClient.Create(ctx, w); err != nil {
				t.Fatalf("create: %v", err)
			}
			waitOwned(t, k8sClient, w)
			if err := k8sClient.Delete(ctx, w, client.PropagationPolicy(policy)); err != nil {
				t.Fatalf("delete: %v", err)
			}
			gone := func(obj client.Object, name string) func() error {
				return func() error {
					err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj)
					if apierrors.IsNotFound(err) {
						return nil
					}
					if err != nil {
						return err
					}
					return fmt.Errorf("%T %s still exists (deletionTimestamp %v, finalizers %v)", obj, name, obj.GetDeletionTimestamp(), obj.GetFinalizers())
				}
			}
			eventually(t, "the ConfigMap is collected", gone(&corev1.ConfigMap{}, ConfigMapName(w.Name)))
			eventually(t, "the Deployment is collected", gone(&appsv1.Deployment{}, w.Name))
			eventually(t, "the Widget is gone", gone(&v2.Widget{}, w.Name))
		})
	}

	t.Run("DanglingOwner", func(t *testing.T) {
		w := &v2.Widget{
			ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: ns},
			Spec:       v2.WidgetSpec{Replicas: 0},
		}
		if err := k8sClient.Create(ctx, w); err != nil {
			t.Fatalf("create: %v", err)
		}
		if err := k8sClient.Delete(ctx, w); err != nil {
			t.Fatalf("delete: %v", err)
		}
		eventually(t, "the Widget is gone", func() error {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(w), &v2.Widget{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("get: %v", err)
		})
		// Created afterwards, naming the deleted Widget (by uid) as its owner.
		orphan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "left-behind", Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "example.kubefake.dev/v2", Kind: "Widget", Name: w.Name, UID: w.UID,
			}},
		}}
		if err := k8sClient.Create(ctx, orphan); err != nil {
			t.Fatalf("create the dependent: %v", err)
		}
		eventually(t, "the dependent of a deleted owner is collected", func() error {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(orphan), &corev1.ConfigMap{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("get: %v", err)
		})
	})
}
