package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WidgetSpec is what a Widget asks for: a Deployment of Replicas pods and a ConfigMap with
// Message.
type WidgetSpec struct {
	// Replicas is the size of the Widget's Deployment. Refused when negative.
	Replicas int32 `json:"replicas"`
	// Message goes into the Widget's ConfigMap.
	Message string `json:"message,omitempty"`
}

// WidgetStatus is what the reconciler last did.
type WidgetStatus struct {
	ConfigMapName      string `json:"configMapName,omitempty"`
	DeploymentName     string `json:"deploymentName,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion

// Widget is the hub version: v1 converts to and from it.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// Hub marks v2 as the conversion hub.
func (*Widget) Hub() {}

func init() {
	SchemeBuilder.Register(&Widget{}, &WidgetList{})
}
