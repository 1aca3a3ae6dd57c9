package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Hull is the kind of hull a ship has.
// +kubebuilder:validation:Enum=Steel;Wood;Composite
type Hull string

const (
	// HullSteel is a steel hull.
	HullSteel Hull = "Steel"
	// HullWood is a wooden hull.
	HullWood      Hull = "Wood"
	HullComposite Hull = "Composite"
)

// Rig is how a ship is rigged.
// +k8s:enum
type Rig string

const (
	RigSloop Rig = "sloop"
	RigKetch Rig = "ketch"
	RigBrig  Rig = "brig"
)

// CallSign is a ship's radio call sign.
// +kubebuilder:validation:Pattern=`^[A-Z0-9]{3,7}$`
// +kubebuilder:validation:MaxLength=7
type CallSign string

// Knots is a speed.
// +kubebuilder:validation:Minimum=0
// +kubebuilder:validation:Maximum=60
type Knots int32

// Common holds the fields every part of a ship has.
type Common struct {
	// label names the part.
	// +kubebuilder:validation:MinLength=1
	Label string `json:"label"`

	// notes are free text.
	// +optional
	Notes string `json:"notes,omitempty"`
}

// Berth is where a ship docks.
type Berth struct {
	Common `json:",inline"`

	// pier is the pier's number.
	// +kubebuilder:validation:Minimum=1
	Pier int32 `json:"pier"`

	// depth of the water at the berth.
	// +optional
	Depth *resource.Quantity `json:"depth,omitempty"`
}

// ShipSpec defines the desired state of Ship.
// +kubebuilder:validation:XValidation:rule="self.minCrew <= self.maxCrew",message="minCrew must not exceed maxCrew"
type ShipSpec struct {
	// INSERT ADDITIONAL SPEC FIELDS - desired state of cluster

	// hull of the ship.
	Hull Hull `json:"hull"`

	// rig of the ship.
	// +optional
	Rig Rig `json:"rig,omitempty"`

	// callSign of the ship.
	CallSign CallSign `json:"callSign"`

	// speed is the cruising speed.
	// +optional
	// +kubebuilder:default=12
	Speed *Knots `json:"speed,omitempty"`

	// minCrew is the fewest sailors aboard.
	MinCrew int32 `json:"minCrew"`

	// maxCrew is the most sailors aboard.
	// +kubebuilder:validation:Maximum=500
	MaxCrew int32 `json:"maxCrew"`

	// captain is required although it is a pointer: it has no omitempty.
	Captain *string `json:"captain"`

	// flags are the flags flown.
	// +listType=set
	// +kubebuilder:validation:MaxItems=5
	// +optional
	Flags []string `json:"flags,omitempty"`

	// berths by harbour.
	// +optional
	Berths map[string]Berth `json:"berths,omitempty"`

	// home is the home berth.
	// +optional
	Home *Berth `json:"home,omitempty"`

	// galley runs the cook.
	// +optional
	Galley *corev1.Container `json:"galley,omitempty"`

	// engine holds the engine room's resources.
	// +optional
	Engine corev1.ResourceRequirements `json:"engine,omitempty"`

	// watch is how long a watch lasts.
	// +optional
	Watch *metav1.Duration `json:"watch,omitempty"`

	// port is a port by number or name.
	// +optional
	Port *intstr.IntOrString `json:"port,omitempty"`

	// cargo is anything loaded.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Cargo *runtime.RawExtension `json:"cargo,omitempty"`

	// selector picks the crew's pods.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// launched is when the ship was launched.
	// +optional
	Launched *metav1.Time `json:"launched,omitempty"`

	// log is kept out of the API.
	Log string `json:"-"`

	// replicas is the number of boats.
	// +kubebuilder:object:generate=false
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// ShipStatus defines the observed state of Ship.
type ShipStatus struct {
	// replicas seen.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// selector for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

	// conditions of the ship.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:scope=Cluster,shortName=sh;shp
// +kubebuilder:printcolumn:name="Hull",type=string,JSONPath=`.spec.hull`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="name too long"

// Ship is the Schema for the ships API.
type Ship struct {
	metav1.TypeMeta `json:",inline"`

	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ShipSpec `json:"spec"`

	// +optional
	Status ShipStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ShipList contains a list of Ship.
type ShipList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Ship `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Ship{}, &ShipList{})
		return nil
	})
}
