// Package webhook holds the Widget's admission and conversion webhooks.
package webhook

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "example.kubefake.dev/widgets/api/v1"
	v2 "example.kubefake.dev/widgets/api/v2"
)

// SetupWidgetWebhookWithManager registers the validating webhook for v2 Widgets
// (/validate-example-kubefake-dev-v2-widget) and, since v1 and v2 are convertible, the
// conversion webhook (/convert).
func SetupWidgetWebhookWithManager(mgr ctrl.Manager) error {
	if err := ctrl.NewWebhookManagedBy(mgr, &v2.Widget{}).
		WithValidator(&WidgetValidator{}).
		Complete(); err != nil {
		return err
	}
	return ctrl.NewWebhookManagedBy(mgr, &v1.Widget{}).Complete()
}

// +kubebuilder:webhook:path=/validate-example-kubefake-dev-v2-widget,mutating=false,failurePolicy=fail,sideEffects=None,groups=example.kubefake.dev,resources=widgets,verbs=create;update,versions=v2,name=vwidget-v2.kb.io,admissionReviewVersions=v1

// WidgetValidator refuses Widgets with negative replicas.
type WidgetValidator struct{}

var _ admission.Validator[*v2.Widget] = &WidgetValidator{}

// ValidateCreate refuses a negative spec.replicas.
func (v *WidgetValidator) ValidateCreate(_ context.Context, w *v2.Widget) (admission.Warnings, error) {
	return validate(w)
}

// ValidateUpdate refuses a negative spec.replicas.
func (v *WidgetValidator) ValidateUpdate(_ context.Context, _, w *v2.Widget) (admission.Warnings, error) {
	return validate(w)
}

// ValidateDelete allows every deletion.
func (v *WidgetValidator) ValidateDelete(context.Context, *v2.Widget) (admission.Warnings, error) {
	return nil, nil
}

// NegativeReplicasMessage is the refusal's text for n replicas.
func NegativeReplicasMessage(n int32) string {
	return fmt.Sprintf("spec.replicas must not be negative, got %d", n)
}

func validate(w *v2.Widget) (admission.Warnings, error) {
	if w.Spec.Replicas < 0 {
		return nil, fmt.Errorf("%s", NegativeReplicasMessage(w.Spec.Replicas))
	}
	return nil, nil
}
