//! Reconciles Captain objects: keeps the `crew.example.com/finalizer` finalizer on them, reports a
//! `Ready` condition in their status and records an event.
//!
//! +kubebuilder:rbac:groups=crew.example.com,resources=captains,verbs=get;list;watch;create;update;patch;delete,namespace=demo-system
//! +kubebuilder:rbac:groups=crew.example.com,resources=captains/status,verbs=get;update;patch,namespace=demo-system
//! +kubebuilder:rbac:groups=crew.example.com,resources=captains/finalizers,verbs=update,namespace=demo-system
//! +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch,namespace=demo-system

use std::sync::Arc;

use kube::Client;
use kube::api::{Api, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use operator_gen_runtime::controller::{self as shared, Retries};
use operator_gen_runtime::events::Recorder;
use operator_gen_runtime::manager::{Manager, Metrics};
use operator_gen_runtime::prelude::*;
use operator_gen_runtime::shard::Shard;
use operator_gen_runtime::watch::Source;

use crate::api::v1::Captain;
use crate::api::v1::CaptainApply;
use crate::api::v1::CaptainClient;
use crate::api::v1::CaptainStatusApply;

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

/// Registers the Captain controller with the manager; it starts once the manager leads.
pub fn register(mgr: &mut Manager) {
    let api: Api<Captain> = mgr.watched_api();
    // the objects waiting for a reconcile, served as controller-runtime's `workqueue_*` metrics
    let queue = mgr.metrics().queue(CONTROLLER_NAME);
    let ctx = Arc::new(Context {
        client: mgr.client(),
        recorder: mgr.recorder(CONTROLLER_NAME),
        metrics: mgr.metrics(),
        retries: Retries::in_queue(queue.clone()),
        shard: mgr.shard(),
    });
    // woken when an object's generation changes (spec edits, deletion marking), not by this
    // controller's own finalizer and status writes: one reconcile per change
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

/// Brings one Captain to its desired state; records its duration and result in the metrics.
pub async fn reconcile(obj: Arc<Captain>, ctx: Arc<Context>) -> Result<Action, Error> {
    // an object of another shard, named by a trigger added with `owns` or `watches`
    if !ctx.shard.owns(obj.as_ref()) {
        return Ok(Action::await_change());
    }
    let work = reconcile_with_finalizer(obj.clone(), &ctx);
    let observed = ctx.metrics.observe(CONTROLLER_NAME, work);
    ctx.retries.track(obj.as_ref(), observed).await
}

async fn reconcile_with_finalizer(obj: Arc<Captain>, ctx: &Context) -> Result<Action, Error> {
    let namespace = obj.namespace().unwrap_or_default();
    let client = Captain::client(ctx.client.clone(), &namespace);
    // server-side apply as this controller: it owns the fields its apply configurations set
    // (the finalizer, the Ready condition) and no other
    let owner = PatchParams::apply(CONTROLLER_NAME);
    if obj.metadata.deletion_timestamp.is_some() {
        if shared::has_finalizer(obj.as_ref(), FINALIZER) {
            cleanup(&obj, ctx).await?;
            // applying nothing drops the finalizer this controller applied; one it did not
            // apply (an older version's JSON patch) goes by a JSON patch
            let released = client.apply(&CaptainApply::of(&obj), &owner).await?;
            shared::remove_finalizer(client.api(), &released, FINALIZER).await?;
            // done with the object: the recorder forgets its events
            ctx.recorder.forget(&obj.object_ref(&()));
        }
        return Ok(Action::await_change());
    }
    // one apply when the finalizer is missing; the reconcile goes on without waiting to be
    // woken by it. Every apply names the object's uid: once the object is deleted it is refused
    // (409 Conflict) instead of making a new object of the name.
    if !shared::has_finalizer(obj.as_ref(), FINALIZER) {
        let finalized = CaptainApply::of(&obj).with_finalizers([FINALIZER]);
        client.apply(&finalized, &owner).await?;
    }
    apply(&obj, &client, ctx).await
}

/// The object exists and carries the finalizer: make the cluster match its spec.
async fn apply(obj: &Captain, client: &CaptainClient, ctx: &Context) -> Result<Action, Error> {
    let name = obj.name_any();
    // TODO(user): make the cluster match `obj.spec` here.

    let generation = obj.metadata.generation;
    let status = obj.status.as_ref();
    let conditions = status.map(|s| s.conditions.as_slice()).unwrap_or_default();
    if !shared::is_ready(conditions, generation) {
        let message = format!("Captain {name} is reconciled");
        let ready = shared::ready("Reconciled", message, generation);
        // server-side apply of the status subresource, forced: the Ready condition is this
        // controller's, whoever set it before
        let status = CaptainStatusApply::default().with_conditions([ready]);
        let config = CaptainApply::of(obj).with_status(status);
        let owner = PatchParams::apply(CONTROLLER_NAME).force();
        client.apply_status(&config, &owner).await?;
        let note = format!("Captain {name} is ready");
        let event = shared::normal_event("Reconciled", note, "Reconcile");
        ctx.recorder.publish(&event, &obj.object_ref(&())).await?;
    }
    // woken again by the next change of generation, as kubebuilder's scaffold; return
    // `Action::requeue(...)` to also check on the object after a while
    Ok(Action::await_change())
}

/// The object is being deleted: release what it owns outside the cluster; the finalizer goes
/// when this succeeds.
async fn cleanup(obj: &Captain, ctx: &Context) -> Result<(), Error> {
    // TODO(user): release external resources owned by `obj` here.
    let note = format!("Captain {} is being deleted", obj.name_any());
    let event = shared::normal_event("Deleting", note, "Cleanup");
    ctx.recorder.publish(&event, &obj.object_ref(&())).await?;
    Ok(())
}

/// A failed reconcile is retried with exponential backoff per object: 5s, 10s, 20s ... 5m.
pub fn error_policy(obj: Arc<Captain>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.retries.after_failure(obj.as_ref(), error)
}

/// The reconcile on its own, against operator-gen's in-memory Kubernetes API
/// (`operator_gen_runtime::fake`): no control plane, so a plain `cargo test` runs it. The
/// controller against a real one is `tests/captain_controller.rs`.
#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::events::v1::Event;
    use kube::api::{DeleteParams, ListParams};
    use operator_gen_envtest::read_yaml;
    use operator_gen_runtime::events::Reporter;
    use operator_gen_runtime::fake::FakeApi;

    /// The reasons of the events recorded about the object `name`.
    async fn event_reasons(client: &Client, name: &str) -> Vec<String> {
        let events: Api<Event> = Api::namespaced(client.clone(), "default");
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

    #[tokio::test]
    async fn reconcile_adds_the_finalizer_reports_ready_and_cleans_up() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/samples/crew_v1_captain.yaml"
        );
        let sample: Captain = read_yaml(path).expect("the sample parses");
        let name = sample.name_any();
        let crd = Captain::crd();
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
        let api: Api<Captain> = Api::namespaced(client.clone(), "default");

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
        // the controller applied the finalizer and owns no other field of the object
        let owned = CaptainApply::extract(&obj, CONTROLLER_NAME).expect("extracts");
        assert_eq!(owned.metadata.finalizers, Some(vec![FINALIZER.to_string()]));
        assert!(
            owned.spec.is_none(),
            "the controller owns spec fields: {owned:?}"
        );
        let status = obj.status.as_ref();
        let conditions = status.map(|s| s.conditions.as_slice()).unwrap_or_default();
        assert!(
            shared::is_ready(conditions, obj.metadata.generation),
            "no Ready condition for generation {:?}: {conditions:?}",
            obj.metadata.generation
        );
        let reasons = event_reasons(&client, &name).await;
        assert!(
            reasons.iter().any(|r| r == "Reconciled"),
            "no Reconciled event: {reasons:?}"
        );

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
        assert!(
            reasons.iter().any(|r| r == "Deleting"),
            "no Deleting event: {reasons:?}"
        );
    }
}
