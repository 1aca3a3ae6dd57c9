// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The Ship API (fleet.example.com/v1), imported from ships.yaml by `operator-gen create api --from-crd`.
//! Someone else's kind (`--external`): `manifests` writes no CRD for it.
//!
//! +kubebuilder:skip
//! +kubebuilder:rbac:groups=fleet.example.com,resources=ships,verbs=get;list;watch

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// ShipSpec is the desired state of a ship.
///
/// +kubebuilder:resource:path=ships,shortName=sh,categories=fleet
/// +kubebuilder:subresource:status
/// +kubebuilder:subresource:scale:specpath=".spec.replicas",statuspath=".status.replicas",selectorpath=".status.selector"
/// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".spec.replicas"
/// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="When it sailed.",priority=1
/// +kubebuilder:selectablefield:JSONPath=".spec.port"
/// +kubebuilder:validation:XValidation:rule="self.crew.exists(c, c.rank == 'captain')",message="a ship needs a captain"
/// +kubebuilder:validation:XValidation:rule="self.replicas <= 10",messageExpression="\"too many: \" + string(self.replicas)"
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[k8s(
    group = "fleet.example.com",
    version = "v1",
    kind = "Ship",
    status = "ShipStatus",
    doc = "Ship is the Schema for the ships API."
)]
#[serde(rename_all = "camelCase")]
pub struct ShipSpec {
    /// crew lists the sailors, keyed by name.
    ///
    /// Each sailor appears once.
    ///
    /// +kubebuilder:validation:MaxItems=64
    /// +listType=map
    /// +listMapKey=name
    pub crew: Vec<ShipSpecCrewItem>,
    /// cargo is the load by hold, as quantities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cargo: Option<BTreeMap<String, ShipSpecCargoValue>>,
    /// extra holds anything the operator does not read.
    ///
    /// +kubebuilder:validation:Type=object
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<serde_json::Value>,
    /// port is the harbour port, by number or name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    /// +kubebuilder:validation:Minimum=0
    /// +default=1
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// template is an embedded object the ship launches.
    ///
    /// +kubebuilder:validation:XEmbeddedResource
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<serde_json::Value>,
    /// +listType=set
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// +default={"gross":100,"unit":"t"}
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tonnage: Option<ShipSpecTonnage>,
}

/// ShipStatus is the observed state of a ship.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShipStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

/// Sailor is one member of the crew.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShipSpecCrewItem {
    /// +kubebuilder:validation:MinLength=1
    /// +kubebuilder:validation:MaxLength=63
    pub name: String,
    /// +kubebuilder:validation:Enum=captain;mate;deckhand
    /// +default="deckhand"
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<String>,
    /// +kubebuilder:validation:Minimum=0
    /// +kubebuilder:validation:Maximum=3
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<i32>,
}

/// +kubebuilder:validation:Pattern=`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ShipSpecCargoValue(pub k8s_openapi::apimachinery::pkg::util::intstr::IntOrString);

#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShipSpecTonnage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gross: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}
