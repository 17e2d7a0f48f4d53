package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WidgetSpec is v1's spelling: Size is v2's Replicas.
type WidgetSpec struct {
	// Size is the number of pods.
	Size int32 `json:"size"`
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

// Widget is the v1 (spoke) version.
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

func init() {
	SchemeBuilder.Register(&Widget{}, &WidgetList{})
}
