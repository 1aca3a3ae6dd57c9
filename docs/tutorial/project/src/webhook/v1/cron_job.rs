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

//! The webhooks of CronJob (batch.tutorial.operator-gen.io/v1), served by the manager's webhook server.
//! `operator-gen create webhook` adds each webhook type here; `make manifests` writes the webhook
//! configurations in config/webhook/manifests.yaml from the `+kubebuilder:webhook` lines below.
//!
// ANCHOR: markers
//! +kubebuilder:webhook:path=/mutate-batch-tutorial-operator-gen-io-v1-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.operator-gen.io,resources=cronjobs,verbs=create;update,versions=v1,name=mcronjob-v1.kb.io,admissionReviewVersions=v1
//! +kubebuilder:webhook:path=/validate-batch-tutorial-operator-gen-io-v1-cronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.operator-gen.io,resources=cronjobs,verbs=create;update,versions=v1,name=vcronjob-v1.kb.io,admissionReviewVersions=v1
// ANCHOR_END: markers

use operator_gen_runtime::webhook::Defaulter;
use operator_gen_runtime::webhook::HookError;
use operator_gen_runtime::webhook::HubConverter;
use operator_gen_runtime::webhook::Validator;
use operator_gen_runtime::webhook::Warnings;
use operator_gen_runtime::webhook::WebhookServerBuilder;

use crate::api::v1::{ConcurrencyPolicy, CronJob};
use crate::schedule::Schedule;

// ANCHOR: register
/// Adds the CronJob webhooks to the manager's webhook server (called from `main.rs`).
pub fn register(webhooks: WebhookServerBuilder) -> WebhookServerBuilder {
    let webhooks = webhooks.defaulter::<CronJob>(CronJobCustomDefaulter);
    let webhooks = webhooks.validator::<CronJob>(CronJobCustomValidator);
    // conversion between this version, the hub, and its spokes (their `From` impls)
    let converter = HubConverter::<CronJob>::new();
    let converter = converter.spoke::<crate::api::v2::CronJob>();
    let webhooks = webhooks.converter(converter);
    // +operator-gen:scaffold:webhookregistrations
    webhooks
}
// ANCHOR_END: register

// ANCHOR: defaulter
/// The number of finished Jobs that succeeded a CronJob keeps when it does not say.
pub const DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT: i32 = 3;
/// The number of finished Jobs that failed a CronJob keeps when it does not say.
pub const DEFAULT_FAILED_JOBS_HISTORY_LIMIT: i32 = 1;

/// Sets the defaults of CronJob objects when they are created or updated (the mutating
/// webhook `mcronjob-v1.kb.io`); the server answers with the patch to the result.
pub struct CronJobCustomDefaulter;

impl Defaulter<CronJob> for CronJobCustomDefaulter {
    fn default(&self, obj: &mut CronJob) {
        tracing::info!(name = ?obj.metadata.name, "defaulting CronJob");
        let spec = &mut obj.spec;
        spec.concurrency_policy
            .get_or_insert(ConcurrencyPolicy::Allow);
        spec.suspend.get_or_insert(false);
        spec.successful_jobs_history_limit
            .get_or_insert(DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT);
        spec.failed_jobs_history_limit
            .get_or_insert(DEFAULT_FAILED_JOBS_HISTORY_LIMIT);
    }
}
// ANCHOR_END: defaulter

// ANCHOR: validator
/// The longest name a CronJob may have: its Jobs are named `<name>-<unix time of the run>`
/// (eleven more characters), and a Job's name is also a label value, at most 63 characters.
pub const MAX_NAME_LENGTH: usize = 52;

/// Checks CronJob objects when they are created, updated or deleted (the validating webhook
/// `vcronjob-v1.kb.io`): `Err(error)` denies the request with the error's
/// message, `Ok(warnings)` admits it and shows the warnings to the client.
pub struct CronJobCustomValidator;

impl CronJobCustomValidator {
    /// What creation and update both check: the name's length and the schedule.
    fn validate(&self, obj: &CronJob) -> Result<Warnings, HookError> {
        let name = obj.metadata.name.as_deref().unwrap_or_default();
        if name.len() > MAX_NAME_LENGTH {
            return Err(format!(
                "metadata.name {name:?} is {} characters long; a CronJob's name has at most {MAX_NAME_LENGTH}",
                name.len()
            )
            .into());
        }
        let schedule: Schedule = obj
            .spec
            .schedule
            .parse()
            .map_err(|e| format!("spec.schedule: {e}"))?;
        let mut warnings = Warnings::new();
        if schedule
            .next_after(k8s_openapi::jiff::Timestamp::now())
            .is_none()
        {
            warnings.push(format!(
                "spec.schedule {:?} does not fire in the next four years",
                obj.spec.schedule
            ));
        }
        Ok(warnings)
    }
}

impl Validator<CronJob> for CronJobCustomValidator {
    fn validate_create(&self, obj: &CronJob) -> Result<Warnings, HookError> {
        tracing::info!(name = ?obj.metadata.name, "validating the creation of CronJob");
        self.validate(obj)
    }

    fn validate_update(&self, old: &CronJob, new: &CronJob) -> Result<Warnings, HookError> {
        tracing::info!(name = ?new.metadata.name, "validating the update of CronJob");
        let _ = old;
        self.validate(new)
    }

    fn validate_delete(&self, obj: &CronJob) -> Result<Warnings, HookError> {
        tracing::info!(name = ?obj.metadata.name, "validating the deletion of CronJob");
        Ok(Warnings::new())
    }
}
// ANCHOR_END: validator

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::v1::CronJobSpec;

    fn cron_job(name: &str, schedule: &str) -> CronJob {
        CronJob::new(
            name,
            CronJobSpec {
                schedule: schedule.into(),
                ..CronJobSpec::default()
            },
        )
    }

    // ANCHOR: test
    #[test]
    fn the_defaulter_fills_what_is_missing_and_keeps_what_is_set() {
        let mut obj = cron_job("nightly", "0 2 * * *");
        obj.spec.failed_jobs_history_limit = Some(0);
        CronJobCustomDefaulter.default(&mut obj);
        assert_eq!(obj.spec.concurrency_policy, Some(ConcurrencyPolicy::Allow));
        assert_eq!(obj.spec.suspend, Some(false));
        assert_eq!(obj.spec.successful_jobs_history_limit, Some(3));
        assert_eq!(obj.spec.failed_jobs_history_limit, Some(0));
    }

    #[test]
    fn the_validator_denies_a_bad_schedule_and_a_long_name() {
        let good = cron_job("nightly", "0 2 * * *");
        let warnings = CronJobCustomValidator
            .validate_create(&good)
            .expect("a good schedule is admitted");
        assert_eq!(warnings, Warnings::new());

        let bad = cron_job("nightly", "0 25 * * *");
        let error = CronJobCustomValidator
            .validate_update(&good, &bad)
            .expect_err("hour 25 is denied");
        assert_eq!(
            error.to_string(),
            "spec.schedule: the hour field \"25\" is out of range: values go from 0 to 23"
        );

        let long = cron_job(&"n".repeat(MAX_NAME_LENGTH + 1), "0 2 * * *");
        let error = CronJobCustomValidator
            .validate_create(&long)
            .expect_err("a 53-character name is denied");
        assert!(error.to_string().contains("at most 52"), "{error}");

        let never = cron_job("never", "0 0 31 2 *");
        let warnings = CronJobCustomValidator
            .validate_create(&never)
            .expect("a schedule that never fires is admitted");
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("does not fire in the next four years")),
            "{warnings:?}"
        );
    }
    // ANCHOR_END: test
}
