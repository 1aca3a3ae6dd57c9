// Written by hand in hack/twins/handwritten; hack/twins copies it here.

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MetadataTwinItem is a small struct.
type MetadataTwinItem struct {
	Size int32 `json:"size"`
}

// MetadataTwinSpec holds one field.
type MetadataTwinSpec struct {
	Item MetadataTwinItem `json:"item"`
}

// +kubebuilder:object:root=true
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="the name has at most 40 characters"

// MetadataTwin is a kind whose metadata is required.
// controller-gen writes its metadata as type: object, without the CEL rule on it.
type MetadataTwin struct {
	metav1.TypeMeta `json:",inline"`
	// +required
	// +kubebuilder:validation:XValidation:rule="self.name.size() <= 63",message="name too long"
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec MetadataTwinSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// MetadataTwinList is a list of MetadataTwin.
type MetadataTwinList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MetadataTwin `json:"items"`
}
