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

//! The CronJob API (batch.tutorial.operator-gen.io/v2): v1 with its schedule in named fields.
//! Each version declares its own types, so one can change without the other.

use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::api::core::v1::ObjectReference;
use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

// ANCHOR: spec
/// CronJobSpec defines the desired state of CronJob: what to run, and when.
///
/// +kubebuilder:subresource:status
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[k8s(
    group = "batch.tutorial.operator-gen.io",
    version = "v2",
    kind = "CronJob",
    status = "CronJobStatus",
    doc = "CronJob runs a Job on a schedule."
)]
#[serde(rename_all = "camelCase")]
pub struct CronJobSpec {
    /// When to run, field by field, in UTC.
    pub schedule: CronSchedule,

    /// What to do when a run is due while an earlier Job still runs: Allow (the default),
    /// Forbid or Replace.
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_policy: Option<ConcurrencyPolicy>,

    /// Stops later runs (not the Jobs already started). Defaults to false.
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,

    /// The Job each run creates.
    pub job_template: JobTemplateSpec,

    /// How many finished Jobs that succeeded to keep. Defaults to 3.
    /// +kubebuilder:validation:Minimum=0
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successful_jobs_history_limit: Option<i32>,

    /// How many finished Jobs that failed to keep. Defaults to 1.
    /// +kubebuilder:validation:Minimum=0
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_jobs_history_limit: Option<i32>,
}

/// ConcurrencyPolicy says how a run that is due is treated while an earlier Job still runs.
#[derive(Schema, Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConcurrencyPolicy {
    /// Allow starts the new Job beside the running ones.
    #[default]
    Allow,
    /// Forbid skips the run.
    Forbid,
    /// Replace deletes the running Jobs and starts the new one.
    Replace,
}

/// CronSchedule is a cron schedule in named fields; a field left out matches every value (`*`).
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CronSchedule {
    /// The minutes, 0 to 59.
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minute: Option<String>,
    /// The hours, 0 to 23.
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hour: Option<String>,
    /// The days of the month, 1 to 31.
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day_of_month: Option<String>,
    /// The months, 1 to 12.
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub month: Option<String>,
    /// The days of the week, 0 (Sunday) to 6.
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day_of_week: Option<String>,
}
// ANCHOR_END: spec

/// CronJobStatus defines the observed state of CronJob, as in v1.
#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CronJobStatus {
    /// The Jobs of this CronJob that are still running.
    /// +listType=atomic
    /// +optional
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub active: Vec<ObjectReference>,

    /// When the latest run was scheduled.
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<Time>,

    /// conditions represent the current state of the CronJob resource: `Ready` is true while
    /// its schedule is valid and its runs are being started.
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
    const CRD_FILE: &str = "config/crd/bases/batch.tutorial.operator-gen.io_cronjobs.yaml";

    /// `make manifests` writes the CRD by reading this file's source; the derive builds it at
    /// compile time. The two must agree byte for byte (for a kind of several versions: the CRD's
    /// own fields and this version's entry).
    #[test]
    fn crd_matches_make_manifests() {
        let path = format!("{}/{CRD_FILE}", env!("CARGO_MANIFEST_DIR"));
        let on_disk = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {path}: {e}; run `make manifests`"));
        if let Err(e) = operator_gen_runtime::check_crd_file(&on_disk, CronJob::crd_version()) {
            panic!("{path} is stale: {e}; run `make manifests`");
        }
    }
}
