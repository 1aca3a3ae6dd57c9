//! Rust twin of controller-tools' `nogroup` fixture: an empty group and a kind with nothing but
//! its metadata.

use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
#[k8s(
    group = "",
    version = "nogroup",
    kind = "CronJob",
    no_spec,
    doc = "CronJob is the Schema for the cronjobs API"
)]
pub struct CronJobFields {}
