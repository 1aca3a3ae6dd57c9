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

//! The webhooks of Captain (crew.my.domain/v1), served by the manager's webhook server.
//! `operator-gen create webhook` adds each webhook type here; `make manifests` writes the webhook
//! configurations in config/webhook/manifests.yaml from the `+kubebuilder:webhook` lines below.
//!
//! +kubebuilder:webhook:path=/custom-mutate,mutating=true,failurePolicy=fail,sideEffects=None,groups=crew.my.domain,resources=captains,verbs=create;update,versions=v1,name=mcaptain-v1.kb.io,admissionReviewVersions=v1
//! +kubebuilder:webhook:path=/hooks/custom_validate,mutating=false,failurePolicy=fail,sideEffects=None,groups=crew.my.domain,resources=captains,verbs=create;update,versions=v1,name=vcaptain-v1.kb.io,admissionReviewVersions=v1
// +operator-gen:scaffold:webhookmarkers

use operator_gen_runtime::webhook::Defaulter;
use operator_gen_runtime::webhook::HookError;
use operator_gen_runtime::webhook::Validator;
use operator_gen_runtime::webhook::Warnings;
use operator_gen_runtime::webhook::WebhookServerBuilder;
// +operator-gen:scaffold:imports

use crate::api::v1::Captain;

/// Adds the Captain webhooks to the manager's webhook server (called from `main.rs`).
pub fn register(webhooks: WebhookServerBuilder) -> WebhookServerBuilder {
    let webhooks = webhooks.defaulter_at::<Captain>(DEFAULTING_PATH, CaptainCustomDefaulter);
    let webhooks = webhooks.validator_at::<Captain>(VALIDATION_PATH, CaptainCustomValidator);
    // +operator-gen:scaffold:webhookregistrations
    webhooks
}

/// The path the defaulting webhook is served on (`create webhook --defaulting-path`), as
/// its `+kubebuilder:webhook` marker names it.
pub const DEFAULTING_PATH: &str = "/custom-mutate";

/// The path the validating webhook is served on (`create webhook --validation-path`), as
/// its `+kubebuilder:webhook` marker names it.
pub const VALIDATION_PATH: &str = "/hooks/custom_validate";

/// Sets the defaults of Captain objects when they are created or updated (the mutating
/// webhook `mcaptain-v1.kb.io`); the server answers with the patch to the result.
pub struct CaptainCustomDefaulter;

impl Defaulter<Captain> for CaptainCustomDefaulter {
    fn default(&self, obj: &mut Captain) {
        tracing::info!(name = ?obj.metadata.name, "defaulting Captain");
        // TODO(user): set the defaults of your fields on `obj`.
    }
}

/// Checks Captain objects when they are created, updated or deleted (the validating webhook
/// `vcaptain-v1.kb.io`): `Err(error)` denies the request with the error's
/// message, `Ok(warnings)` admits it and shows the warnings to the client.
pub struct CaptainCustomValidator;

impl Validator<Captain> for CaptainCustomValidator {
    fn validate_create(&self, obj: &Captain) -> Result<Warnings, HookError> {
        tracing::info!(name = ?obj.metadata.name, "validating the creation of Captain");
        // TODO(user): check `obj`; return Err("why".into()) to deny its creation.
        Ok(Warnings::new())
    }

    fn validate_update(&self, old: &Captain, new: &Captain) -> Result<Warnings, HookError> {
        tracing::info!(name = ?new.metadata.name, "validating the update of Captain");
        let _ = old;
        // TODO(user): check the change from `old` to `new`; return Err("why".into()) to deny it.
        Ok(Warnings::new())
    }

    fn validate_delete(&self, obj: &Captain) -> Result<Warnings, HookError> {
        tracing::info!(name = ?obj.metadata.name, "validating the deletion of Captain");
        // TODO(user): return Err("why".into()) to keep `obj` from being deleted.
        Ok(Warnings::new())
    }
}

// +operator-gen:scaffold:webhooktypes
