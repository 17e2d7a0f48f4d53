// Package controller holds the Widget reconciler.
package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v2 "example.kubefake.dev/widgets/api/v2"
)

// WidgetReconciler makes, for each Widget, a ConfigMap holding its message and a Deployment of
// its replicas, both owned by it, and records what it made in the Widget's status.
type WidgetReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=example.kubefake.dev,resources=widgets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=example.kubefake.dev,resources=widgets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=example.kubefake.dev,resources=widgets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// ConfigMapName is the name of a Widget's ConfigMap.
func ConfigMapName(widget string) string { return widget + "-config" }

// Reconcile brings the Widget's ConfigMap and Deployment to what its spec says.
func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)

	var w v2.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName(w.Name), Namespace: w.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": w.Spec.Message}
		return controllerutil.SetControllerReference(&w, cm, r.Scheme)
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("configmap: %w", err)
	}

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		labels := map[string]string{"app.kubernetes.io/name": "widget", "app.kubernetes.io/instance": w.Name}
		replicas := w.Spec.Replicas
		dep.Spec.Replicas = &replicas
		if dep.Spec.Selector == nil { // immutable once set
			dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		}
		dep.Spec.Template.Labels = labels
		dep.Spec.Template.Spec.Containers = []corev1.Container{{
			Name:  "widget",
			Image: "registry.k8s.io/pause:3.10",
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name},
			}}},
		}}
		return controllerutil.SetControllerReference(&w, dep, r.Scheme)
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("deployment: %w", err)
	}

	if w.Status.ConfigMapName != cm.Name || w.Status.DeploymentName != dep.Name || w.Status.ObservedGeneration != w.Generation {
		w.Status.ConfigMapName = cm.Name
		w.Status.DeploymentName = dep.Name
		w.Status.ObservedGeneration = w.Generation
		if err := r.Status().Update(ctx, &w); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, fmt.Errorf("status: %w", err)
		}
	}
	if op != controllerutil.OperationResultNone && r.Recorder != nil {
		r.Recorder.Eventf(&w, dep, corev1.EventTypeNormal, "Reconciled", "Reconcile", "deployment %s %s", dep.Name, op)
	}
	log.V(1).Info("reconciled", "deployment", op)
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler: it watches Widgets and the ConfigMaps and
// Deployments they own.
func (r *WidgetReconciler) SetupWithManager(mgr ctrl.Manager, name string) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v2.Widget{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&appsv1.Deployment{}).
		Named(name).
		Complete(r)
}
