//! Rust twin of controller-tools' `jobs` fixture: validation markers on fields and on types.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

/// JobSpec is the spec for the jobs API.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]
#[k8s(
    group = "testdata.kubebuilder.io",
    version = "v1beta1",
    kind = "Job",
    doc = "Job is the Schema for the jobs API"
)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    /// FriendlyName is the friendly name for the job.
    /// +kubebuilder:validation:MinLength=5
    pub friendly_name: String,
    /// Count is the number of times a job may be executed.
    #[k8s(minimum = 0, maximum = 10)]
    pub count: i32,
    /// CronJob is the spec for the related CrongJob.
    pub crong_job: CronJobSpec,
}

#[derive(Schema, Serialize, Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct CronJobSpec {
    /// +kubebuilder:validation:Minimum=-2
    /// +kubebuilder:validation:Maximum=2
    /// +kubebuilder:validation:MultipleOf=2
    pub int32_with_validations: i32,
    /// This tests that markers that are allowed on both fields and types are applied to fields
    /// +kubebuilder:validation:MinLength=4
    pub two_of_a_kind_part0: String,
}
