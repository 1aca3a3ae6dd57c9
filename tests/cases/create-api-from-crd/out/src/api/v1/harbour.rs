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

//! The Harbour API (fleet.example.com/v1), imported from harbours.yaml by `operator-gen create api --from-crd`.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// HarbourSpec is the desired state of a harbour.
///
/// +kubebuilder:resource:path=harbours,scope=Cluster
/// +kubebuilder:metadata:labels="fleet.example.com/tier=core"
/// +kubebuilder:storageversion
/// +kubebuilder:subresource:status
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[k8s(
    group = "fleet.example.com",
    version = "v1",
    kind = "Harbour",
    status = "HarbourStatus",
    doc = "Harbour is where ships berth.\n\n+kubebuilder:validation:XValidation:rule=\"size(self.metadata.name) <= 20\",message=\"names are short\"",
    required_metadata
)]
#[serde(rename_all = "camelCase")]
pub struct HarbourSpec {
    /// berths maps a berth's name to its depth in metres.
    ///
    /// +kubebuilder:validation:MaxProperties=100
    /// +mapType=granular
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub berths: Option<BTreeMap<String, i32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Vec<HarbourSpecLimitsItem>>,
    /// +kubebuilder:validation:Nullable
    /// +mapType=atomic
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<HarbourSpecLocation>,
    /// +kubebuilder:validation:Format=uri
    #[serde(rename = "URL", default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// +kubebuilder:validation:Enum=`"1"`;tidal;`with space`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
}

/// +kubebuilder:pruning:PreserveUnknownFields
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HarbourStatus {}

/// +kubebuilder:validation:MaxLength=8
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct HarbourSpecLimitsItemItem(pub String);

/// +kubebuilder:validation:MaxItems=2
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct HarbourSpecLimitsItem(pub Vec<HarbourSpecLimitsItemItem>);

#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HarbourSpecLocation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latitude: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longitude: Option<f64>,
}
