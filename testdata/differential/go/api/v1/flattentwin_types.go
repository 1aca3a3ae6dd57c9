// Written by hand in hack/twins/handwritten; hack/twins copies it here.

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FlattenInner is embedded two levels deep.
// +kubebuilder:validation:XValidation:rule="self.c > 0",message="inner"
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:MaxProperties=5
type FlattenInner struct {
	C int32 `json:"c"`
}

// FlattenMid embeds FlattenInner.
// +kubebuilder:validation:XValidation:rule="self.b > 0",message="mid"
// +kubebuilder:validation:MinProperties=2
type FlattenMid struct {
	FlattenInner `json:",inline"`
	B            int32 `json:"b"`
}

// FlattenOuter embeds FlattenMid.
// +kubebuilder:validation:XValidation:rule="self.a > 0",message="outer"
type FlattenOuter struct {
	A          int32 `json:"a"`
	FlattenMid `json:",inline"`
}

// FlattenPlain has no markers of its own.
type FlattenPlain struct {
	FlattenMid `json:",inline"`
	D          int32 `json:"d"`
}

// +kubebuilder:validation:XValidation:rule="self.x1 >= 0"
// +kubebuilder:validation:MinProperties=1
type FlattenFirst struct {
	X1 int32 `json:"x1"`
}

// +kubebuilder:validation:XValidation:rule="self.x2 >= 0"
// +kubebuilder:validation:MinProperties=2
type FlattenSecond struct {
	X2 int32 `json:"x2"`
}

// FlattenPair embeds two structs around a field of its own.
// +kubebuilder:validation:XValidation:rule="self.y >= 0"
// +kubebuilder:validation:XValidation:rule="self.y < 100"
type FlattenPair struct {
	FlattenFirst  `json:",inline"`
	Y             int32 `json:"y"`
	FlattenSecond `json:",inline"`
}

// +kubebuilder:validation:XValidation:rule="self.z >= 0"
// +kubebuilder:validation:MinProperties=3
type FlattenLast struct {
	Z int32 `json:"z"`
}

// FlattenMany embeds a struct that embeds two, and one through a pointer.
// +kubebuilder:validation:XValidation:rule="self.w >= 0"
// +kubebuilder:validation:MinProperties=4
type FlattenMany struct {
	FlattenPair  `json:",inline"`
	W            int32 `json:"w"`
	*FlattenLast `json:",inline"`
}

// FlattenCarried's markers other than its rules: which an embedding struct takes.
// +kubebuilder:validation:XValidation:rule="has(self.e) || has(self.f)"
// +kubebuilder:validation:XEmbeddedResource
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:ExactlyOneOf=e;f
// +kubebuilder:title=Carried
// +kubebuilder:example={"e": 1}
// +kubebuilder:externalDocs:url="https://example.com/carried"
// +structType=atomic
type FlattenCarried struct {
	// +optional
	E *int32 `json:"e,omitempty"`
	// +optional
	F *int32 `json:"f,omitempty"`
}

// FlattenCarrier embeds FlattenCarried.
type FlattenCarrier struct {
	FlattenCarried `json:",inline"`
	G              int32 `json:"g"`
}

// FlattenTwinSpec holds structs that embed others.
type FlattenTwinSpec struct {
	FlattenOuter FlattenOuter `json:"flattenOuter"`
	FlattenPlain FlattenPlain `json:"flattenPlain"`
	FlattenMany  FlattenMany  `json:"flattenMany"`
	// A field's own rule comes before its type's.
	// +kubebuilder:validation:XValidation:rule="self.w < 10"
	// +optional
	FlattenManyRuled *FlattenMany   `json:"flattenManyRuled,omitempty"`
	FlattenCarrier   FlattenCarrier `json:"flattenCarrier"`
}

// FlattenTwinStatus is empty: the comparison is about the spec.
type FlattenTwinStatus struct{}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// FlattenTwin holds structs that embed others.
type FlattenTwin struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FlattenTwinSpec   `json:"spec"`
	Status FlattenTwinStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// FlattenTwinList is a list of FlattenTwin.
type FlattenTwinList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FlattenTwin `json:"items"`
}
