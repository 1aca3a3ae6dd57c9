//! Reconciles Captain objects: keeps the `crew.example.com/finalizer` finalizer on them, reports a
//! `Ready` condition in their status and records an event.
//!
//! +kubebuilder:rbac:groups=crew.example.com,resources=captains,verbs=get;list;watch;create;update;patch;delete,namespace=demo-system
//! +kubebuilder:rbac:groups=crew.example.com,resources=captains/status,verbs=get;update;patch,namespace=demo-system
//! +kubebuilder:rbac:groups=crew.example.com,resources=captains/finalizers,verbs=update,namespace=demo-system
//! +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch,namespace=demo-system

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder};
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::watcher;
use operator_gen_runtime::manager::{Manager, Metrics};
use operator_gen_runtime::prelude::*;

use crate::api::v1::Captain;

/// The finalizer this controller keeps on every Captain.
pub const FINALIZER: &str = "crew.example.com/finalizer";

/// The controller's name in logs, metrics and events.
pub const CONTROLLER_NAME: &str = "captain";

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes API call failed.
    #[error("kubernetes api call failed: {0}")]
    Kube(#[from] kube::Error),
    /// Adding or removing the finalizer, or the step it wraps, failed.
    #[error("finalizer failed: {0}")]
    Finalizer(#[source] Box<finalizer::Error<Error>>),
}

/// What every reconcile of this controller shares.
pub struct Context {
    /// The Kubernetes client.
    pub client: Client,
    /// Publishes events about reconciled objects.
    pub recorder: Recorder,
    /// Reconcile counters and durations, served on `/metrics`.
    pub metrics: Metrics,
    /// Consecutive failures per object, for the error policy's backoff.
    failures: Mutex<HashMap<String, u32>>,
}

impl Context {
    /// A context around `client`.
    pub fn new(client: Client, recorder: Recorder, metrics: Metrics) -> Self {
        Self {
            client,
            recorder,
            metrics,
            failures: Mutex::default(),
        }
    }

    /// Count one more failure for `key`; returns the consecutive failures so far.
    fn count_failure(&self, key: &str) -> u32 {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let count = failures.entry(key.to_owned()).or_insert(0);
        *count = count.saturating_add(1);
        *count
    }

    /// Forget the failures of `key` after a successful reconcile.
    fn forget_failures(&self, key: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        failures.remove(key);
    }
}

/// Registers the Captain controller with the manager; it starts once the manager leads.
pub fn register(mgr: &mut Manager) {
    let api: Api<Captain> = mgr.watched_api();
    let recorder = mgr.recorder(CONTROLLER_NAME);
    let ctx = Arc::new(Context::new(mgr.client(), recorder, mgr.metrics()));
    let controller = Controller::new(api, watcher::Config::default())
        .graceful_shutdown_on(mgr.shutdown_signal())
        .run(reconcile, error_policy, ctx);
    mgr.add_controller_stream(CONTROLLER_NAME, controller);
}

/// Brings one Captain to its desired state; records its duration and result in the metrics.
pub async fn reconcile(obj: Arc<Captain>, ctx: Arc<Context>) -> Result<Action, Error> {
    let key = object_key(&obj);
    let work = reconcile_with_finalizer(obj, &ctx);
    let result = ctx.metrics.observe(CONTROLLER_NAME, work).await;
    if result.is_ok() {
        ctx.forget_failures(&key);
    }
    result
}

async fn reconcile_with_finalizer(obj: Arc<Captain>, ctx: &Context) -> Result<Action, Error> {
    let namespace = obj.namespace().unwrap_or_default();
    let api: Api<Captain> = Api::namespaced(ctx.client.clone(), &namespace);
    let api_ref = &api;
    finalizer(&api, FINALIZER, obj, |event| async move {
        match event {
            finalizer::Event::Apply(obj) => apply(&obj, api_ref, ctx).await,
            finalizer::Event::Cleanup(obj) => cleanup(&obj, ctx).await,
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))
}

/// The object exists and carries the finalizer: make the cluster match its spec.
async fn apply(obj: &Captain, api: &Api<Captain>, ctx: &Context) -> Result<Action, Error> {
    let name = obj.name_any();
    // TODO(user): make the cluster match `obj.spec` here.

    let generation = obj.metadata.generation;
    let ready = obj.status.as_ref().is_some_and(|status| {
        status.conditions.iter().any(|c| {
            c.type_ == "Ready" && c.status == "True" && c.observed_generation == generation
        })
    });
    if !ready {
        let condition = Condition {
            type_: "Ready".to_owned(),
            status: "True".to_owned(),
            reason: "Reconciled".to_owned(),
            message: format!("Captain {name} is reconciled"),
            observed_generation: generation,
            last_transition_time: Time(Timestamp::now()),
        };
        let status = serde_json::json!({ "status": { "conditions": [condition] } });
        let (params, patch) = (PatchParams::default(), Patch::Merge(&status));
        api.patch_status(&name, &params, &patch).await?;
        let event = Event {
            type_: EventType::Normal,
            reason: "Reconciled".to_owned(),
            note: Some(format!("Captain {name} is ready")),
            action: "Reconcile".to_owned(),
            secondary: None,
        };
        ctx.recorder.publish(&event, &obj.object_ref(&())).await?;
    }
    Ok(Action::requeue(Duration::from_secs(300)))
}

/// The object is being deleted: release what it owns outside the cluster, then let the
/// finalizer go.
async fn cleanup(obj: &Captain, ctx: &Context) -> Result<Action, Error> {
    // TODO(user): release external resources owned by `obj` here.
    let event = Event {
        type_: EventType::Normal,
        reason: "Deleting".to_owned(),
        note: Some(format!("Captain {} is being deleted", obj.name_any())),
        action: "Cleanup".to_owned(),
        secondary: None,
    };
    ctx.recorder.publish(&event, &obj.object_ref(&())).await?;
    Ok(Action::await_change())
}

/// A failed reconcile is retried with exponential backoff per object: 5s, 10s, 20s ... 5m.
pub fn error_policy(obj: Arc<Captain>, error: &Error, ctx: Arc<Context>) -> Action {
    let key = object_key(&obj);
    let failures = ctx.count_failure(&key);
    let delay = backoff(failures);
    tracing::warn!(object = %key, %error, failures, ?delay, "reconcile failed; retrying");
    Action::requeue(delay)
}

/// The delay before retry number `failures` (1-based).
fn backoff(failures: u32) -> Duration {
    let exponent = failures.saturating_sub(1).min(6);
    Duration::from_secs((5u64 << exponent).min(300))
}

fn object_key(obj: &Captain) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        assert_eq!(backoff(1), Duration::from_secs(5));
        assert_eq!(backoff(2), Duration::from_secs(10));
        assert_eq!(backoff(4), Duration::from_secs(40));
        assert_eq!(backoff(100), Duration::from_secs(300));
    }
}
