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

//! The Harbour API (fleet.example.com/v1alpha1), imported from harbours.yaml by `operator-gen create api --from-crd`.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// +kubebuilder:resource:path=harbours,scope=Cluster
/// +kubebuilder:metadata:labels="fleet.example.com/tier=core"
/// +kubebuilder:unservedversion
/// +kubebuilder:deprecatedversion:warning="fleet.example.com/v1alpha1 Harbour is deprecated; use v1"
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[k8s(
    group = "fleet.example.com",
    version = "v1alpha1",
    kind = "Harbour",
    doc = "Harbour is where ships berth.",
    optional_spec
)]
#[serde(rename_all = "camelCase")]
pub struct HarbourSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub berths: Option<isize>,
}
