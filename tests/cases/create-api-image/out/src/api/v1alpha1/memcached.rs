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

//! The Memcached API (cache.my.domain/v1alpha1): a Deployment of `memcached:1.6.26-alpine3.19`
//! that the Memcached controller keeps (`create api --image`).

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

// EDIT THIS FILE!  THIS IS SCAFFOLDING FOR YOU TO OWN!
// NOTE: run `make manifests` to regenerate the CRD after editing this file.

/// MemcachedSpec defines the desired state of Memcached
///
/// +kubebuilder:subresource:status
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[k8s(
    group = "cache.my.domain",
    version = "v1alpha1",
    kind = "Memcached",
    status = "MemcachedStatus",
    doc = "Memcached is the Schema for the memcacheds API"
)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedSpec {
    /// size defines the number of Memcached instances: the replicas of its Deployment
    /// +kubebuilder:default=1
    /// +kubebuilder:validation:Minimum=0
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i32>,
    /// containerPort defines the port that will be used to init the container with the image
    /// +required
    pub container_port: i32,
}

/// MemcachedStatus defines the observed state of Memcached.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedStatus {
    /// conditions represent the current state of the Memcached resource: `Available` while
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
    const CRD_FILE: &str = "config/crd/bases/cache.my.domain_memcacheds.yaml";

    /// `make manifests` writes the CRD by reading this file's source; the derive builds it at
    /// compile time. The two must agree byte for byte (for a kind of several versions: the CRD's
    /// own fields and this version's entry).
    #[test]
    fn crd_matches_make_manifests() {
        let path = format!("{}/{CRD_FILE}", env!("CARGO_MANIFEST_DIR"));
        let on_disk = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {path}: {e}; run `make manifests`"));
        if let Err(e) = operator_gen_runtime::check_crd_file(&on_disk, Memcached::crd_version()) {
            panic!("{path} is stale: {e}; run `make manifests`");
        }
    }
}
