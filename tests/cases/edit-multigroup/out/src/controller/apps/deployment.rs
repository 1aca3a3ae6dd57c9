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

//! Reconciles the built-in Deployment (apps/v1) objects.
//!
//! +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
//! +kubebuilder:rbac:groups=apps,resources=deployments/status,verbs=get;update;patch
//! +kubebuilder:rbac:groups=apps,resources=deployments/finalizers,verbs=update
//! +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

use std::sync::Arc;

use kube::Client;
use kube::api::Api;
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use operator_gen_runtime::controller::{self as shared, Retries, object_key};
use operator_gen_runtime::events::Recorder;
use operator_gen_runtime::manager::{Manager, Metrics};
use operator_gen_runtime::shard::Shard;
use operator_gen_runtime::watch::Source;

use k8s_openapi::api::apps::v1::Deployment;

/// The controller's name in logs, metrics and events.
pub const CONTROLLER_NAME: &str = "deployment";

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

/// Registers the Deployment controller with the manager; it starts once the manager leads.
pub fn register(mgr: &mut Manager) {
    let api: Api<Deployment> = mgr.watched_api();
    // the objects waiting for a reconcile, served as controller-runtime's `workqueue_*` metrics
    let queue = mgr.metrics().queue(CONTROLLER_NAME);
    let ctx = Arc::new(Context {
        client: mgr.client(),
        recorder: mgr.recorder(CONTROLLER_NAME),
        metrics: mgr.metrics(),
        retries: Retries::in_queue(queue.clone()),
        shard: mgr.shard(),
    });
    // woken by changes of generation (or of resource version, for kinds without one), not by
    // updates that leave it: see `operator_gen_runtime::controller::generation_changed`
    // and only by the objects of this replica set's shard
    let source = Source::new(api, watcher::Config::default())
        .shard(ctx.shard)
        .queue(queue);
    // built again once a mass deletion has emptied its cache, so that the room its queue grew
    // to is given back: see `operator_gen_runtime::controller::run_generation_changed`
    let stop = mgr.shutdown_token();
    let controller = shared::run_generation_changed(
        source,
        move |controller| controller.graceful_shutdown_on(stop.clone().cancelled_owned()),
        reconcile,
        error_policy,
        ctx,
    );
    mgr.add_controller_stream(CONTROLLER_NAME, controller);
}

/// Reacts to one Deployment; records its duration and result in the metrics.
pub async fn reconcile(obj: Arc<Deployment>, ctx: Arc<Context>) -> Result<Action, Error> {
    // an object of another shard, named by a trigger added with `owns` or `watches`
    if !ctx.shard.owns(obj.as_ref()) {
        return Ok(Action::await_change());
    }
    let work = apply(&obj, &ctx);
    let observed = ctx.metrics.observe(CONTROLLER_NAME, work);
    ctx.retries.track(obj.as_ref(), observed).await
}

async fn apply(obj: &Deployment, _ctx: &Context) -> Result<Action, Error> {
    // TODO(user): act on the Deployment here; `_ctx.client` reaches the API server and
    // `_ctx.recorder` publishes events.
    tracing::info!(object = %object_key(obj), "reconciling Deployment");
    Ok(Action::await_change())
}

/// A failed reconcile is retried with exponential backoff per object: 5s, 10s, 20s ... 5m.
pub fn error_policy(obj: Arc<Deployment>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.retries.after_failure(obj.as_ref(), error)
}
