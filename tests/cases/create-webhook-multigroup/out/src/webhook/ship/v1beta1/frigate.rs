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

//! The webhooks of Frigate (ship.my.domain/v1beta1), served by the manager's webhook server.
//! `operator-gen create webhook` adds each webhook type here; `make manifests` writes the webhook
//! configurations in config/webhook/manifests.yaml from the `+kubebuilder:webhook` lines below.
//!
//! +kubebuilder:webhook:path=/mutate-ship-my-domain-v1beta1-frigate,mutating=true,failurePolicy=fail,sideEffects=None,groups=ship.my.domain,resources=frigates,verbs=create;update,versions=v1beta1,name=mfrigate-v1beta1.kb.io,admissionReviewVersions=v1
// +operator-gen:scaffold:webhookmarkers

use operator_gen_runtime::webhook::Defaulter;
use operator_gen_runtime::webhook::WebhookServerBuilder;
// +operator-gen:scaffold:imports

use crate::api::ship::v1beta1::Frigate;

/// Adds the Frigate webhooks to the manager's webhook server (called from `main.rs`).
pub fn register(webhooks: WebhookServerBuilder) -> WebhookServerBuilder {
    let webhooks = webhooks.defaulter::<Frigate>(FrigateCustomDefaulter);
    // +operator-gen:scaffold:webhookregistrations
    webhooks
}

/// Sets the defaults of Frigate objects when they are created or updated (the mutating
/// webhook `mfrigate-v1beta1.kb.io`); the server answers with the patch to the result.
pub struct FrigateCustomDefaulter;

impl Defaulter<Frigate> for FrigateCustomDefaulter {
    fn default(&self, obj: &mut Frigate) {
        tracing::info!(name = ?obj.metadata.name, "defaulting Frigate");
        // TODO(user): set the defaults of your fields on `obj`.
    }
}

// +operator-gen:scaffold:webhooktypes
