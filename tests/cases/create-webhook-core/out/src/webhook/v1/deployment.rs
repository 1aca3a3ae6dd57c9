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

//! The webhooks of Deployment (apps/v1), served by the manager's webhook server.
//! `operator-gen create webhook` adds each webhook type here; `make manifests` writes the webhook
//! configurations in config/webhook/manifests.yaml from the `+kubebuilder:webhook` lines below.
//!
//! +kubebuilder:webhook:path=/mutate-apps-v1-deployment,mutating=true,failurePolicy=fail,sideEffects=None,groups=apps,resources=deployments,verbs=create;update,versions=v1,name=mdeployment-v1.kb.io,admissionReviewVersions=v1
//! +kubebuilder:webhook:path=/validate-apps-v1-deployment,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps,resources=deployments,verbs=create;update,versions=v1,name=vdeployment-v1.kb.io,admissionReviewVersions=v1
// +operator-gen:scaffold:webhookmarkers

use operator_gen_runtime::webhook::Defaulter;
use operator_gen_runtime::webhook::HookError;
use operator_gen_runtime::webhook::Validator;
use operator_gen_runtime::webhook::Warnings;
use operator_gen_runtime::webhook::WebhookServerBuilder;
// +operator-gen:scaffold:imports

use k8s_openapi::api::apps::v1::Deployment;

/// Adds the Deployment webhooks to the manager's webhook server (called from `main.rs`).
pub fn register(webhooks: WebhookServerBuilder) -> WebhookServerBuilder {
    let webhooks = webhooks.defaulter::<Deployment>(DeploymentCustomDefaulter);
    let webhooks = webhooks.validator::<Deployment>(DeploymentCustomValidator);
    // +operator-gen:scaffold:webhookregistrations
    webhooks
}

/// Sets the defaults of Deployment objects when they are created or updated (the mutating
/// webhook `mdeployment-v1.kb.io`); the server answers with the patch to the result.
pub struct DeploymentCustomDefaulter;

impl Defaulter<Deployment> for DeploymentCustomDefaulter {
    fn default(&self, obj: &mut Deployment) {
        tracing::info!(name = ?obj.metadata.name, "defaulting Deployment");
        // TODO(user): set the defaults of your fields on `obj`.
    }
}

/// Checks Deployment objects when they are created, updated or deleted (the validating webhook
/// `vdeployment-v1.kb.io`): `Err(error)` denies the request with the error's
/// message, `Ok(warnings)` admits it and shows the warnings to the client.
pub struct DeploymentCustomValidator;

impl Validator<Deployment> for DeploymentCustomValidator {
    fn validate_create(&self, obj: &Deployment) -> Result<Warnings, HookError> {
        tracing::info!(name = ?obj.metadata.name, "validating the creation of Deployment");
        // TODO(user): check `obj`; return Err("why".into()) to deny its creation.
        Ok(Warnings::new())
    }

    fn validate_update(&self, old: &Deployment, new: &Deployment) -> Result<Warnings, HookError> {
        tracing::info!(name = ?new.metadata.name, "validating the update of Deployment");
        let _ = old;
        // TODO(user): check the change from `old` to `new`; return Err("why".into()) to deny it.
        Ok(Warnings::new())
    }

    fn validate_delete(&self, obj: &Deployment) -> Result<Warnings, HookError> {
        tracing::info!(name = ?obj.metadata.name, "validating the deletion of Deployment");
        // TODO(user): return Err("why".into()) to keep `obj` from being deleted.
        Ok(Warnings::new())
    }
}

// +operator-gen:scaffold:webhooktypes
