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

//! Reconciles Busybox objects: keeps for each a Deployment of `busybox:1.36` with
//! `spec.size` replicas, owned by it; keeps the `cache.my.domain/finalizer` finalizer on them, reports
//! `Available` and `Degraded` conditions in their status and records events
//! (`create api --image`).
//!
//! +kubebuilder:rbac:groups=cache.my.domain,resources=busyboxes,verbs=get;list;watch;create;update;patch;delete
//! +kubebuilder:rbac:groups=cache.my.domain,resources=busyboxes/status,verbs=get;update;patch
//! +kubebuilder:rbac:groups=cache.my.domain,resources=busyboxes/finalizers,verbs=update
//! +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//! +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, PodSecurityContext, PodSpec, PodTemplateSpec,
    SeccompProfile, SecurityContext,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use operator_gen_runtime::controller::{self as shared, Retries};
use operator_gen_runtime::events::{Event, EventType, Recorder};
use operator_gen_runtime::manager::{Manager, Metrics};
use operator_gen_runtime::prelude::*;
use operator_gen_runtime::shard::Shard;
use operator_gen_runtime::watch::Source;

use crate::api::v1alpha1::Busybox;

/// The finalizer this controller keeps on every Busybox.
pub const FINALIZER: &str = "cache.my.domain/finalizer";

/// The controller's name in logs, metrics and events.
pub const CONTROLLER_NAME: &str = "busybox";

/// The image the Deployment runs (`create api --image`); `BUSYBOX_IMAGE` in the
/// manager's environment overrides it.
pub const IMAGE: &str = "busybox:1.36";

/// The environment variable that overrides [`IMAGE`].
pub const IMAGE_ENV: &str = "BUSYBOX_IMAGE";

/// The `app.kubernetes.io/managed-by` label of the Deployment and its pods.
pub const MANAGED_BY: &str = "BusyboxController";

/// The name of the Deployment's container.
pub const CONTAINER_NAME: &str = "busybox";

/// The condition type reporting that the Deployment is kept.
pub const AVAILABLE: &str = "Available";

/// The condition type reporting that the Busybox is being deleted.
pub const DEGRADED: &str = "Degraded";

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes API call failed.
    #[error("kubernetes api call failed: {0}")]
    Kube(#[from] kube::Error),
}

/// What every reconcile of this controller shares.
pub struct Context {
    /// The Kubernetes client.
    pub client: Client,
    /// Publishes events about reconciled objects.
    pub recorder: Recorder,
    /// Reconcile counters and durations, served on `/metrics`.
    pub metrics: Metrics,
    /// Consecutive failures per object, for the error policy's backoff; follows the reconciles
    /// in the controller's work queue.
    pub retries: Retries,
    /// The share of the objects this replica set reconciles (`--shard-count`, `--shard-index`).
    pub shard: Shard,
}

/// Registers the Busybox controller with the manager; it starts once the manager leads.
pub fn register(mgr: &mut Manager) {
    let api: Api<Busybox> = mgr.watched_api();
    let deployments: Api<Deployment> = mgr.watched_api();
    // the objects waiting for a reconcile, served as controller-runtime's `workqueue_*` metrics
    let queue = mgr.metrics().queue(CONTROLLER_NAME);
    let ctx = Arc::new(Context {
        client: mgr.client(),
        recorder: mgr.recorder(CONTROLLER_NAME),
        metrics: mgr.metrics(),
        retries: Retries::in_queue(queue.clone()),
        shard: mgr.shard(),
    });
    // woken when an object's generation changes and when a Deployment it owns changes
    // (`owns`), and only by the objects of this replica set's shard
    let source = Source::new(api, watcher::Config::default())
        .shard(ctx.shard)
        .queue(queue);
    // a backlog waits in the controller's own queue, and the controller is built again (its
    // Deployment watch made again) once a mass deletion has emptied its cache, so that the room
    // kube's scheduler grew to is given back: see
    // `operator_gen_runtime::controller::run_generation_changed`
    let stop = mgr.shutdown_token();
    let controller = shared::run_generation_changed(
        source,
        move |controller| {
            controller
                .owns(deployments.clone(), watcher::Config::default())
                .graceful_shutdown_on(stop.clone().cancelled_owned())
        },
        reconcile,
        error_policy,
        ctx,
    );
    mgr.add_controller_stream(CONTROLLER_NAME, controller);
}

/// Brings one Busybox to its desired state; records its duration and result in the metrics.
pub async fn reconcile(obj: Arc<Busybox>, ctx: Arc<Context>) -> Result<Action, Error> {
    // an object of another shard, named by its Deployment's change
    if !ctx.shard.owns(obj.as_ref()) {
        return Ok(Action::await_change());
    }
    let work = reconcile_with_finalizer(obj.clone(), &ctx);
    let observed = ctx.metrics.observe(CONTROLLER_NAME, work);
    ctx.retries.track(obj.as_ref(), observed).await
}

async fn reconcile_with_finalizer(obj: Arc<Busybox>, ctx: &Context) -> Result<Action, Error> {
    let namespace = obj.namespace().unwrap_or_default();
    let api: Api<Busybox> = Api::namespaced(ctx.client.clone(), &namespace);
    if obj.metadata.deletion_timestamp.is_some() {
        if shared::has_finalizer(obj.as_ref(), FINALIZER) {
            cleanup(&obj, &api, ctx).await?;
            shared::remove_finalizer(&api, obj.as_ref(), FINALIZER).await?;
            // done with the object: the recorder forgets its events
            ctx.recorder.forget(&obj.object_ref(&()));
        }
        return Ok(Action::await_change());
    }
    shared::add_finalizer(&api, obj.as_ref(), FINALIZER).await?;
    let deployments: Api<Deployment> = Api::namespaced(ctx.client.clone(), &namespace);
    apply(&obj, &api, &deployments, ctx).await
}

/// The object exists and carries the finalizer: create its Deployment when there is none, give
/// it `spec.size` replicas when it has others, and report `Available`.
async fn apply(
    obj: &Busybox,
    api: &Api<Busybox>,
    deployments: &Api<Deployment>,
    ctx: &Context,
) -> Result<Action, Error> {
    let name = obj.name_any();
    let replicas = size(obj);
    let found = deployments.get_opt(&name).await?;
    let (reason, message) = match found.and_then(|d| d.spec.replicas) {
        None => {
            let deployment = deployment_for(obj);
            let params = PostParams::default();
            if let Err(e) = deployments.create(&params, &deployment).await {
                let message = format!("Failed to create the Deployment: {e}");
                return failed(obj, api, "Reconciling", message, e).await;
            }
            let note = format!("Created Deployment {name} with {replicas} replicas");
            let event = (EventType::Normal, "Created", "CreateDeployment");
            publish(ctx, obj, event, note).await?;
            ("Reconciling", format!("Deployment {name} created"))
        }
        Some(current) if current != replicas => {
            let patch = serde_json::json!({ "spec": { "replicas": replicas } });
            let (params, patch) = (PatchParams::default(), Patch::Merge(&patch));
            if let Err(e) = deployments.patch(&name, &params, &patch).await {
                let message = format!("Failed to resize the Deployment: {e}");
                return failed(obj, api, "Resizing", message, e).await;
            }
            let note = format!("Resized Deployment {name} to {replicas} replicas");
            let event = (EventType::Normal, "Resized", "ResizeDeployment");
            publish(ctx, obj, event, note).await?;
            ("Resizing", format!("Deployment {name} resized"))
        }
        Some(_) => ("Reconciling", format!("Deployment {name} is kept")),
    };
    // TODO(user): compare more of the Deployment with `deployment_for(obj)` here.
    let message = format!("{message} with {replicas} replicas");
    let generation = obj.metadata.generation;
    let available = condition(AVAILABLE, "True", reason, message, generation);
    if !holds(obj, &available) {
        // server-side apply of the status subresource: one request
        shared::apply_conditions(api, obj, CONTROLLER_NAME, &[available]).await?;
    }
    Ok(Action::await_change())
}

/// Reports `Available=False` with `reason` and `message`, then fails the reconcile with `error`.
async fn failed(
    obj: &Busybox,
    api: &Api<Busybox>,
    reason: &str,
    message: String,
    error: kube::Error,
) -> Result<Action, Error> {
    let generation = obj.metadata.generation;
    let unavailable = condition(AVAILABLE, "False", reason, message, generation);
    shared::apply_conditions(api, obj, CONTROLLER_NAME, &[unavailable]).await?;
    Err(error.into())
}

/// The object is being deleted: report `Degraded` and record it; its Deployment goes with it
/// (the owner reference), and the finalizer goes when this succeeds.
async fn cleanup(obj: &Busybox, api: &Api<Busybox>, ctx: &Context) -> Result<(), Error> {
    let name = obj.name_any();
    // TODO(user): release external resources owned by `obj` here.
    let message = format!("Performing finalizer operations for {name}");
    let generation = obj.metadata.generation;
    let degraded = condition(DEGRADED, "True", "Finalizing", message, generation);
    shared::apply_conditions(api, obj, CONTROLLER_NAME, &[degraded]).await?;
    let namespace = obj.namespace().unwrap_or_default();
    let note = format!("{name} is being deleted from the namespace {namespace}");
    let event = (EventType::Warning, "Deleting", "DeleteCR");
    publish(ctx, obj, event, note).await?;
    Ok(())
}

/// A failed reconcile is retried with exponential backoff per object: 5s, 10s, 20s ... 5m.
pub fn error_policy(obj: Arc<Busybox>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.retries.after_failure(obj.as_ref(), error)
}

/// The replicas `obj` asks for: `spec.size`, 1 when unset (the CRD's default).
pub fn size(obj: &Busybox) -> i32 {
    obj.spec.size.unwrap_or(1)
}

/// The image to deploy: `BUSYBOX_IMAGE` when set, else [`IMAGE`].
pub fn image() -> String {
    std::env::var(IMAGE_ENV)
        .ok()
        .filter(|i| !i.is_empty())
        .unwrap_or_else(|| IMAGE.to_owned())
}

/// The labels of `obj`'s Deployment and its pods, which its selector matches.
pub fn labels_for(obj: &Busybox) -> BTreeMap<String, String> {
    let labels = [
        ("app.kubernetes.io/name", "demo".to_owned()),
        ("app.kubernetes.io/instance", obj.name_any()),
        ("app.kubernetes.io/managed-by", MANAGED_BY.to_owned()),
    ];
    labels.map(|(k, v)| (k.to_owned(), v)).into()
}

/// The Deployment `obj` asks for: its name and namespace, owned by it (so it is deleted with
/// it and its changes wake the controller), [`size`] replicas of one container of [`image`],
/// run as a non-root user without privileges.
pub fn deployment_for(obj: &Busybox) -> Deployment {
    let labels = labels_for(obj);
    let container = Container {
        name: CONTAINER_NAME.to_owned(),
        image: Some(image()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        security_context: Some(SecurityContext {
            run_as_non_root: Some(true),
            allow_privilege_escalation: Some(false),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                ..Capabilities::default()
            }),
            ..SecurityContext::default()
        }),
        ..Container::default()
    };
    let pod = PodSpec {
        containers: vec![container],
        security_context: Some(PodSecurityContext {
            run_as_non_root: Some(true),
            seccomp_profile: Some(SeccompProfile {
                type_: "RuntimeDefault".to_owned(),
                ..SeccompProfile::default()
            }),
            ..PodSecurityContext::default()
        }),
        ..PodSpec::default()
    };
    Deployment {
        metadata: ObjectMeta {
            name: Some(obj.name_any()),
            namespace: obj.namespace(),
            labels: Some(labels.clone()),
            owner_references: obj.controller_owner_ref(&()).map(|r| vec![r]),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(size(obj)),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

/// A condition of `type_` for `generation`, stamped now.
fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    generation: Option<i64>,
) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message,
        observed_generation: generation,
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::now()),
    }
}

/// Whether `obj`'s status holds `wanted` (but for its time) already.
fn holds(obj: &Busybox, wanted: &Condition) -> bool {
    let conditions = obj.status.as_ref().map(|s| s.conditions.as_slice());
    conditions.unwrap_or_default().iter().any(|c| {
        c.type_ == wanted.type_
            && c.status == wanted.status
            && c.reason == wanted.reason
            && c.message == wanted.message
            && c.observed_generation == wanted.observed_generation
    })
}

/// Publishes an event of (type, reason, action) about `obj`.
async fn publish(
    ctx: &Context,
    obj: &Busybox,
    (type_, reason, action): (EventType, &str, &str),
    note: String,
) -> Result<(), Error> {
    let event = Event {
        type_,
        reason: reason.to_owned(),
        note: Some(note),
        action: action.to_owned(),
        secondary: None,
    };
    ctx.recorder.publish(&event, &obj.object_ref(&())).await?;
    Ok(())
}

/// The reconcile on its own, against operator-gen's in-memory Kubernetes API
/// (`operator_gen_runtime::fake`): no control plane, so a plain `cargo test` runs it. The
/// controller against a real one is `tests/busybox_controller.rs`.
#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::events::v1::Event as K8sEvent;
    use kube::api::{DeleteParams, ListParams};
    use operator_gen_envtest::read_yaml;
    use operator_gen_runtime::events::Reporter;
    use operator_gen_runtime::fake::FakeApi;

    /// The reasons of the events recorded about the object `name`.
    async fn event_reasons(client: &Client, name: &str) -> Vec<String> {
        let events: Api<K8sEvent> = Api::namespaced(client.clone(), "default");
        let list = events
            .list(&ListParams::default())
            .await
            .expect("events are listed");
        list.items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
            .filter_map(|e| e.reason)
            .collect()
    }

    /// The status of `obj`'s condition `type_`.
    fn status_of(obj: &Busybox, type_: &str) -> Option<String> {
        let conditions = obj.status.as_ref().map(|s| s.conditions.clone());
        let mut all = conditions.unwrap_or_default().into_iter();
        all.find(|c| c.type_ == type_).map(|c| c.status)
    }

    #[tokio::test]
    async fn reconcile_deploys_the_image_resizes_and_cleans_up() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/samples/cache_v1alpha1_busybox.yaml"
        );
        let sample: Busybox = read_yaml(path).expect("the sample parses");
        let name = sample.name_any();
        let crd = Busybox::crd();
        let fake = FakeApi::new().with_crd(&crd).with_object(&sample);
        let client = fake.client();
        let reporter = Reporter {
            controller: CONTROLLER_NAME.into(),
            instance: None,
        };
        let ctx = Arc::new(Context {
            client: client.clone(),
            recorder: Recorder::new(client.clone(), reporter),
            metrics: Metrics::default(),
            retries: Retries::default(),
            shard: Shard::ALL,
        });
        let api: Api<Busybox> = Api::namespaced(client.clone(), "default");
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");

        // TODO(user): seed what your reconcile reads and assert what it does beyond the scaffold's.
        let obj = api.get(&name).await.expect("the sample is there");
        reconcile(Arc::new(obj), ctx.clone())
            .await
            .expect("the reconcile succeeds");
        let obj = api.get(&name).await.expect("the sample is still there");
        assert!(
            shared::has_finalizer(&obj, FINALIZER),
            "the sample lacks the finalizer {FINALIZER}: {:?}",
            obj.finalizers()
        );
        let deployment = deployments.get(&name).await.expect("a Deployment");
        let owners = deployment.owner_references();
        let uid = obj.uid();
        assert!(
            owners
                .iter()
                .any(|o| Some(&o.uid) == uid.as_ref() && o.controller == Some(true)),
            "the Deployment is not controlled by the sample: {owners:?}"
        );
        assert_eq!(deployment.spec.replicas, Some(size(&obj)));
        let pod = deployment.spec.template.spec.unwrap_or_default();
        let images: Vec<_> = pod.containers.iter().map(|c| c.image.clone()).collect();
        assert_eq!(images, [Some(image())]);
        assert_eq!(status_of(&obj, AVAILABLE).as_deref(), Some("True"));
        let reasons = event_reasons(&client, &name).await;
        let created = reasons.iter().any(|r| r == "Created");
        assert!(created, "no Created event: {reasons:?}");

        // a new size resizes the Deployment
        let patch = serde_json::json!({ "spec": { "size": size(&obj) + 2 } });
        let resized = api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("the size is changed");
        reconcile(Arc::new(resized.clone()), ctx.clone())
            .await
            .expect("the resize succeeds");
        let deployment = deployments.get(&name).await.expect("a Deployment");
        assert_eq!(deployment.spec.replicas, Some(size(&resized)));

        api.delete(&name, &DeleteParams::default())
            .await
            .expect("the deletion is accepted");
        let marked = api.get(&name).await.expect("held by the finalizer");
        assert!(marked.metadata.deletion_timestamp.is_some());
        reconcile(Arc::new(marked), ctx)
            .await
            .expect("the cleanup succeeds");
        let gone = api.get_opt(&name).await.expect("the sample is looked up");
        assert!(gone.is_none(), "the sample is still there: {gone:?}");
        let reasons = event_reasons(&client, &name).await;
        let deleting = reasons.iter().any(|r| r == "Deleting");
        assert!(deleting, "no Deleting event: {reasons:?}");
    }
}
