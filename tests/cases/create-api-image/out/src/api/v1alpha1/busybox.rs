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

//! The Busybox API (cache.my.domain/v1alpha1): a Deployment of `busybox:1.36`
//! that the Busybox controller keeps (`create api --image`).

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

// EDIT THIS FILE!  THIS IS SCAFFOLDING FOR YOU TO OWN!
// NOTE: run `make manifests` to regenerate the CRD after editing this file.

/// BusyboxSpec defines the desired state of Busybox
///
/// +kubebuilder:subresource:status
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[k8s(
    group = "cache.my.domain",
    version = "v1alpha1",
    kind = "Busybox",
    status = "BusyboxStatus",
    doc = "Busybox is the Schema for the busyboxes API"
)]
#[serde(rename_all = "camelCase")]
pub struct BusyboxSpec {
    /// size defines the number of Busybox instances: the replicas of its Deployment
    /// +kubebuilder:default=1
    /// +kubebuilder:validation:Minimum=0
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i32>,
}

/// BusyboxStatus defines the observed state of Busybox.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BusyboxStatus {
    /// conditions represent the current state of the Busybox resource: `Available` while
    /// its Deployment is kept, `Degraded` while it is being deleted.
    /// +listType=map
    /// +listMapKey=type
    /// +optional
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where `make manifests` writes this kind's CRD.
    const CRD_FILE: &str = "config/crd/bases/cache.my.domain_busyboxes.yaml";

    /// `make manifests` writes the CRD by reading this file's source; the derive builds it at
    /// compile time. The two must agree byte for byte (for a kind of several versions: the CRD's
    /// own fields and this version's entry).
    #[test]
    fn crd_matches_make_manifests() {
        let path = format!("{}/{CRD_FILE}", env!("CARGO_MANIFEST_DIR"));
        let on_disk = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {path}: {e}; run `make manifests`"));
        if let Err(e) = operator_gen_runtime::check_crd_file(&on_disk, Busybox::crd_version()) {
            panic!("{path} is stale: {e}; run `make manifests`");
        }
    }
}
