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

//! Reconciles CronJob objects: starts a Job for each run their schedule makes due, keeps the
//! number of finished Jobs they ask for, and reports the running Jobs, the time of the latest
//! run and a `Ready` condition in their status, with an event for each Job started.
//!
// ANCHOR: rbac
//! +kubebuilder:rbac:groups=batch.tutorial.operator-gen.io,resources=cronjobs,verbs=get;list;watch;create;update;patch;delete
//! +kubebuilder:rbac:groups=batch.tutorial.operator-gen.io,resources=cronjobs/status,verbs=get;update;patch
//! +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
//! +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get
//! +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// ANCHOR_END: rbac

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType};
use kube::runtime::watcher;
use operator_gen_runtime::controller::{self as shared, Retries};
use operator_gen_runtime::events::Recorder;
use operator_gen_runtime::manager::{Manager, Metrics};
use operator_gen_runtime::prelude::*;
use operator_gen_runtime::shard::Shard;

use crate::api::v1::{ConcurrencyPolicy, CronJob, CronJobApply, CronJobStatus, CronJobStatusApply};
use crate::schedule::Schedule;
use crate::webhook::v1::cron_job::{
    DEFAULT_FAILED_JOBS_HISTORY_LIMIT, DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT,
};

/// The controller's name in logs, metrics and events, and its field manager for the status.
pub const CONTROLLER_NAME: &str = "cronjob";

/// The annotation on each Job: the time its run was scheduled for (RFC 3339).
pub const SCHEDULED_AT: &str = "batch.tutorial.operator-gen.io/scheduled-at";

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes API call failed.
    #[error("kubernetes api call failed: {0}")]
    Kube(#[from] kube::Error),
}

// ANCHOR: context
/// Where a reconcile reads the time: the system clock in the manager; tests pass their own.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// What every reconcile of this controller shares.
pub struct Context {
    /// The Kubernetes client.
    pub client: Client,
    /// Publishes events about reconciled objects.
    pub recorder: Recorder,
    /// Reconcile counters and durations, served on `/metrics`.
    pub metrics: Metrics,
    /// Consecutive failures per object, for the error policy's backoff.
    pub retries: Retries,
    /// The share of the objects this replica set reconciles (`--shard-count`, `--shard-index`).
    pub shard: Shard,
    /// The current time.
    pub clock: Clock,
}
// ANCHOR_END: context

// ANCHOR: register
/// Registers the CronJob controller with the manager; it starts once the manager leads.
pub fn register(mgr: &mut Manager) {
    register_with_clock(mgr, Arc::new(Timestamp::now));
}

/// [`register`] with the clock `clock`.
pub fn register_with_clock(mgr: &mut Manager, clock: Clock) {
    let api: Api<CronJob> = mgr.watched_api();
    let jobs: Api<Job> = mgr.watched_api();
    let ctx = Arc::new(Context {
        client: mgr.client(),
        recorder: mgr.recorder(CONTROLLER_NAME),
        metrics: mgr.metrics(),
        retries: Retries::default(),
        shard: mgr.shard(),
        clock,
    });
    // woken when a CronJob's generation changes (a spec edit), when one of its Jobs changes
    // (`owns`: the Job's controller owner reference names it), and when the next run is due
    // (the `Action` a reconcile returns)
    let config = watcher::Config::default();
    let controller = shared::generation_changed_in_shard(api, config.clone(), ctx.shard)
        .owns(jobs, config)
        .graceful_shutdown_on(mgr.shutdown_signal())
        .run(reconcile, error_policy, ctx);
    mgr.add_controller_stream(CONTROLLER_NAME, controller);
}
// ANCHOR_END: register

/// Brings one CronJob to its desired state; records its duration and result in the metrics.
pub async fn reconcile(obj: Arc<CronJob>, ctx: Arc<Context>) -> Result<Action, Error> {
    // an object of another shard, named by a Job it owns
    if !ctx.shard.owns(obj.as_ref()) {
        return Ok(Action::await_change());
    }
    let work = reconcile_cron_job(&obj, &ctx);
    let observed = ctx.metrics.observe(CONTROLLER_NAME, work);
    ctx.retries.track(obj.as_ref(), observed).await
}

// ANCHOR: reconcile
async fn reconcile_cron_job(obj: &CronJob, ctx: &Context) -> Result<Action, Error> {
    if obj.metadata.deletion_timestamp.is_some() {
        // its Jobs go with it: they name it as their owner, and the garbage collector
        // deletes what a deleted object owned
        return Ok(Action::await_change());
    }
    let namespace = obj.namespace().unwrap_or_default();
    let jobs: Api<Job> = Api::namespaced(ctx.client.clone(), &namespace);
    let now = (ctx.clock)();

    let mut children = Children::of(obj, &jobs).await?;
    let spec = &obj.spec;
    let successful_limit = spec
        .successful_jobs_history_limit
        .unwrap_or(DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT);
    let failed_limit = spec
        .failed_jobs_history_limit
        .unwrap_or(DEFAULT_FAILED_JOBS_HISTORY_LIMIT);
    prune(&jobs, &mut children.succeeded, successful_limit).await?;
    prune(&jobs, &mut children.failed, failed_limit).await?;

    let schedule: Schedule = match spec.schedule.parse() {
        Ok(schedule) => schedule,
        Err(problem) => {
            let ready = ready_condition(obj, now, false, "InvalidSchedule", problem);
            let changed = write_status(obj, ctx, &children, ready.clone()).await?;
            if changed {
                let event = warning_event("InvalidSchedule", ready.message, "Schedule");
                ctx.recorder.publish(&event, &obj.object_ref(&())).await?;
            }
            // a spec edit wakes it again
            return Ok(Action::await_change());
        }
    };
    if spec.suspend == Some(true) {
        let message = "spec.suspend is true: no Job is started".to_owned();
        let ready = ready_condition(obj, now, false, "Suspended", message);
        write_status(obj, ctx, &children, ready).await?;
        return Ok(Action::await_change());
    }

    // the latest run that is due: after the last one started (or the CronJob's creation)
    let since = children
        .last_schedule_time
        .or_else(|| obj.creation_timestamp().map(|t| t.0))
        .unwrap_or(now);
    if let Some(due) = schedule.last_between(since, now) {
        start_run(obj, ctx, &jobs, &mut children, due).await?;
    }

    let next = schedule.next_after(now);
    let message = match next {
        Some(next) => format!("the next run is at {next}"),
        None => "the schedule does not fire in the next four years".to_owned(),
    };
    let ready = ready_condition(obj, now, true, "Scheduled", message);
    write_status(obj, ctx, &children, ready).await?;
    // woken again when the next run is due
    Ok(match next {
        Some(next) => {
            let wait = Duration::try_from(next.duration_since(now)).unwrap_or_default();
            Action::requeue(wait.max(Duration::from_secs(1)))
        }
        None => Action::await_change(),
    })
}
// ANCHOR_END: reconcile

// ANCHOR: children
/// The Jobs a CronJob owns, by state, and the time of its latest run.
struct Children {
    active: Vec<Job>,
    succeeded: Vec<Job>,
    failed: Vec<Job>,
    last_schedule_time: Option<Timestamp>,
}

impl Children {
    /// Lists the Jobs in `obj`'s namespace whose controller owner is `obj`.
    async fn of(obj: &CronJob, jobs: &Api<Job>) -> Result<Children, Error> {
        let uid = obj.uid();
        let mut children = Children {
            active: Vec::new(),
            succeeded: Vec::new(),
            failed: Vec::new(),
            last_schedule_time: obj
                .status
                .as_ref()
                .and_then(|s| s.last_schedule_time.as_ref())
                .map(|t| t.0),
        };
        for job in jobs.list(&ListParams::default()).await?.items {
            let owned = job
                .owner_references()
                .iter()
                .any(|o| o.controller == Some(true) && Some(&o.uid) == uid.as_ref());
            if !owned {
                continue;
            }
            if let Some(at) = scheduled_at(&job) {
                children.last_schedule_time = children.last_schedule_time.max(Some(at));
            }
            match finished(&job) {
                None => children.active.push(job),
                Some(true) => children.succeeded.push(job),
                Some(false) => children.failed.push(job),
            }
        }
        Ok(children)
    }
}

/// `Some(true)` when the Job completed, `Some(false)` when it failed, `None` while it runs.
fn finished(job: &Job) -> Option<bool> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .find(|c| c.status == "True" && (c.type_ == "Complete" || c.type_ == "Failed"))
        .map(|c| c.type_ == "Complete")
}

/// The time the Job's run was scheduled for, from its annotation.
fn scheduled_at(job: &Job) -> Option<Timestamp> {
    job.annotations().get(SCHEDULED_AT)?.parse().ok()
}
// ANCHOR_END: children

// ANCHOR: prune
/// Deletes the oldest of the finished `jobs` until at most `limit` are left.
async fn prune(api: &Api<Job>, jobs: &mut Vec<Job>, limit: i32) -> Result<(), Error> {
    let keep = usize::try_from(limit).unwrap_or(0);
    if jobs.len() <= keep {
        return Ok(());
    }
    jobs.sort_by_key(scheduled_at);
    let excess = jobs.len() - keep;
    for job in jobs.drain(..excess) {
        tracing::info!(job = %job.name_any(), "deleting a finished Job beyond the history limit");
        delete_job(api, &job).await?;
    }
    Ok(())
}

/// Deletes `job` and, in the background, its Pods; a Job already gone is no error.
async fn delete_job(api: &Api<Job>, job: &Job) -> Result<(), Error> {
    match api
        .delete(&job.name_any(), &DeleteParams::background())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}
// ANCHOR_END: prune

// ANCHOR: start_run
/// Starts the run due at `due`, as the concurrency policy allows.
async fn start_run(
    obj: &CronJob,
    ctx: &Context,
    jobs: &Api<Job>,
    children: &mut Children,
    due: Timestamp,
) -> Result<(), Error> {
    let regarding = obj.object_ref(&());
    match obj.spec.concurrency_policy.unwrap_or_default() {
        ConcurrencyPolicy::Forbid if !children.active.is_empty() => {
            let note = format!(
                "the run of {due} is skipped: {} Job(s) still run and spec.concurrencyPolicy is Forbid",
                children.active.len()
            );
            let event = shared::normal_event("Skipped", note, "StartJob");
            ctx.recorder.publish(&event, &regarding).await?;
            return Ok(());
        }
        ConcurrencyPolicy::Replace => {
            for job in children.active.drain(..) {
                delete_job(jobs, &job).await?;
                let note = format!("Job {} is replaced by the run of {due}", job.name_any());
                let event = shared::normal_event("Replaced", note, "DeleteJob");
                ctx.recorder.publish(&event, &regarding).await?;
            }
        }
        _ => {}
    }
    let job = job_for(obj, due);
    let name = job.name_any();
    let job = match jobs.create(&PostParams::default(), &job).await {
        Ok(job) => job,
        // the run's Job exists already: take it rather than fail
        Err(kube::Error::Api(status)) if status.code == 409 => jobs.get(&name).await?,
        Err(e) => return Err(e.into()),
    };
    let note = format!("Job {name} started for the run of {due}");
    let event = shared::normal_event("Created", note, "StartJob");
    ctx.recorder.publish(&event, &regarding).await?;
    children.active.push(job);
    children.last_schedule_time = Some(due);
    Ok(())
}

/// The Job of the run at `due`: the CronJob's template, named after the CronJob and the run's
/// time (so a run is started once), annotated with the time and owned by the CronJob.
fn job_for(obj: &CronJob, due: Timestamp) -> Job {
    let template = &obj.spec.job_template;
    let mut metadata = template.metadata.clone().unwrap_or_default();
    metadata.name = Some(format!("{}-{}", obj.name_any(), due.as_second()));
    metadata.generate_name = None;
    metadata.namespace = obj.namespace();
    metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(SCHEDULED_AT.to_owned(), due.to_string());
    metadata.owner_references = Some(obj.controller_owner_ref(&()).into_iter().collect());
    Job {
        metadata,
        spec: template.spec.clone(),
        status: None,
    }
}
// ANCHOR_END: start_run

// ANCHOR: status
/// The `Ready` condition with `status` and `reason`: its transition time moves only when its
/// status changes.
fn ready_condition(
    obj: &CronJob,
    now: Timestamp,
    ready: bool,
    reason: &str,
    message: String,
) -> Condition {
    let status = if ready { "True" } else { "False" };
    let previous = obj
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == shared::READY));
    let last_transition_time = match previous {
        Some(previous) if previous.status == status => previous.last_transition_time.clone(),
        _ => Time(now),
    };
    Condition {
        type_: shared::READY.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message,
        observed_generation: obj.metadata.generation,
        last_transition_time,
    }
}

/// Writes the running Jobs, the latest run's time and `ready` into the status by server-side
/// apply, unless the status already says so. Returns whether it wrote.
async fn write_status(
    obj: &CronJob,
    ctx: &Context,
    children: &Children,
    ready: Condition,
) -> Result<bool, Error> {
    let mut active: Vec<ObjectReference> = children.active.iter().map(job_reference).collect();
    active.sort_by(|a, b| a.name.cmp(&b.name));
    let status = CronJobStatus {
        active,
        last_schedule_time: children.last_schedule_time.map(Time),
        conditions: vec![ready],
    };
    let current = obj.status.clone().unwrap_or_default();
    let current_ready = current.conditions.iter().find(|c| c.type_ == shared::READY);
    if current.active == status.active
        && current.last_schedule_time == status.last_schedule_time
        && current_ready == status.conditions.first()
    {
        return Ok(false);
    }
    // the typed apply configuration: the fields set here are all this manager owns of the status
    let applied = CronJobStatusApply {
        active: Some(status.active).filter(|a| !a.is_empty()),
        last_schedule_time: status.last_schedule_time,
        conditions: Some(status.conditions),
    };
    let config = CronJobApply::new(&obj.name_any()).with_status(applied);
    let cron_jobs = CronJob::client(ctx.client.clone(), &obj.namespace().unwrap_or_default());
    let params = PatchParams::apply(CONTROLLER_NAME).force();
    cron_jobs.apply_status(&config, &params).await?;
    Ok(true)
}

/// A reference to `job` for `status.active`.
fn job_reference(job: &Job) -> ObjectReference {
    ObjectReference {
        api_version: Some("batch/v1".to_owned()),
        kind: Some("Job".to_owned()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid: job.metadata.uid.clone(),
        ..ObjectReference::default()
    }
}
// ANCHOR_END: status

/// A `Warning` event.
fn warning_event(reason: &str, note: String, action: &str) -> Event {
    Event {
        type_: EventType::Warning,
        reason: reason.to_owned(),
        note: Some(note),
        action: action.to_owned(),
        secondary: None,
    }
}

/// A failed reconcile is retried with exponential backoff per object: 5s, 10s, 20s ... 5m.
pub fn error_policy(obj: Arc<CronJob>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.retries.after_failure(obj.as_ref(), error)
}

/// The reconcile on its own, against operator-gen's in-memory Kubernetes API
/// (`operator_gen_runtime::fake`): no control plane, so a plain `cargo test` runs it. The
/// controller against a real one is `tests/cronjob_controller.rs`.
#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::batch::v1::{JobCondition, JobStatus};
    use k8s_openapi::api::events::v1::Event;
    use k8s_openapi::jiff::SignedDuration;
    use operator_gen_envtest::read_yaml;
    use operator_gen_runtime::events::Reporter;
    use operator_gen_runtime::fake::FakeApi;

    // ANCHOR: test_setup
    /// A fake API holding the sample CronJob with `change` applied, and a context whose clock
    /// reads `minutes` after the CronJob's creation.
    async fn setup(
        change: impl FnOnce(&mut CronJob),
        minutes: i64,
    ) -> (FakeApi, CronJob, Arc<Context>) {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/samples/batch_v1_cronjob.yaml"
        );
        let mut sample: CronJob = read_yaml(path).expect("the sample parses");
        change(&mut sample);
        let fake = FakeApi::new()
            .with_crd(&CronJob::crd())
            .register::<Job>()
            .with_object(&sample);
        let client = fake.client();
        let api: Api<CronJob> = Api::namespaced(client.clone(), "default");
        let obj = api
            .get(&sample.name_any())
            .await
            .expect("the sample is there");
        let created = obj.creation_timestamp().expect("a creation time").0;
        let now = created + SignedDuration::from_mins(minutes);
        let reporter = Reporter {
            controller: CONTROLLER_NAME.into(),
            instance: None,
        };
        let ctx = Arc::new(Context {
            client: client.clone(),
            recorder: Recorder::new(client, reporter),
            metrics: Metrics::default(),
            retries: Retries::default(),
            shard: Shard::ALL,
            clock: Arc::new(move || now),
        });
        (fake, obj, ctx)
    }
    // ANCHOR_END: test_setup

    /// The Jobs the fake holds, by name.
    async fn jobs(ctx: &Context) -> Vec<Job> {
        let api: Api<Job> = Api::namespaced(ctx.client.clone(), "default");
        let mut jobs = api
            .list(&ListParams::default())
            .await
            .expect("jobs are listed")
            .items;
        jobs.sort_by_key(|j| j.name_any());
        jobs
    }

    /// The reasons of the events recorded about the object `name`.
    async fn event_reasons(ctx: &Context, name: &str) -> Vec<String> {
        let events: Api<Event> = Api::namespaced(ctx.client.clone(), "default");
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

    /// The CronJob `name` after one reconcile.
    async fn reconcile_once(ctx: &Arc<Context>, obj: CronJob) -> (CronJob, Action) {
        let name = obj.name_any();
        let action = reconcile(Arc::new(obj), ctx.clone())
            .await
            .expect("the reconcile succeeds");
        let api: Api<CronJob> = Api::namespaced(ctx.client.clone(), "default");
        (api.get(&name).await.expect("the CronJob is there"), action)
    }

    /// A finished Job of `owner`, scheduled `minutes` after the Unix epoch.
    fn finished_job(owner: &CronJob, minutes: i64, condition: &str) -> Job {
        let at = Timestamp::from_second(minutes * 60).expect("a valid time");
        let mut job = job_for(owner, at);
        job.status = Some(JobStatus {
            conditions: Some(vec![JobCondition {
                type_: condition.to_owned(),
                status: "True".to_owned(),
                ..JobCondition::default()
            }]),
            ..JobStatus::default()
        });
        job
    }

    // ANCHOR: test_run
    #[tokio::test]
    async fn a_due_run_starts_an_owned_job_and_is_reported() {
        // the sample runs every minute; ten minutes after its creation a run is due
        let (_fake, obj, ctx) = setup(|_| {}, 10).await;
        let now = (ctx.clock)();
        let due = Timestamp::from_second(now.as_second().div_euclid(60) * 60).expect("a time");
        let (obj, action) = reconcile_once(&ctx, obj).await;

        let started = jobs(&ctx).await;
        let names: Vec<String> = started.iter().map(|j| j.name_any()).collect();
        let expected = format!("{}-{}", obj.name_any(), due.as_second());
        assert_eq!(
            names,
            std::slice::from_ref(&expected),
            "one Job for the latest due run"
        );
        let owner = &started[0].owner_references()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.controller),
            ("CronJob", Some(true))
        );
        assert_eq!(Some(&owner.uid), obj.uid().as_ref());
        assert_eq!(started[0].annotations()[SCHEDULED_AT], due.to_string());

        let status = obj.status.clone().expect("a status");
        let active: Vec<_> = status
            .active
            .iter()
            .filter_map(|r| r.name.clone())
            .collect();
        assert_eq!(active, [expected]);
        assert_eq!(status.last_schedule_time, Some(Time(due)));
        assert!(shared::is_ready(
            &status.conditions,
            obj.metadata.generation
        ));
        // the controller owns the status fields its typed apply set, and extract reads them back
        let owned = CronJobApply::extract_status(&obj, CONTROLLER_NAME).expect("extracts");
        let owned = owned.status.expect("the controller's status fields");
        assert_eq!(owned.active.map(|a| a.len()), Some(1));
        assert_eq!(owned.last_schedule_time, Some(Time(due)));
        assert_eq!(owned.conditions.map(|c| c.len()), Some(1));
        assert!(
            event_reasons(&ctx, &obj.name_any())
                .await
                .contains(&"Created".to_owned())
        );
        // woken at the next minute
        let next = due + SignedDuration::from_mins(1);
        let wait = Duration::try_from(next.duration_since(now)).expect("ahead");
        assert_eq!(action, Action::requeue(wait.max(Duration::from_secs(1))));

        // the same time again: the run was started, so nothing more is
        reconcile_once(&ctx, obj).await;
        assert_eq!(jobs(&ctx).await, started);
    }
    // ANCHOR_END: test_run

    #[tokio::test]
    async fn forbid_skips_a_run_while_a_job_runs_and_replace_replaces_it() {
        let (_fake, obj, ctx) = setup(
            |o| o.spec.concurrency_policy = Some(ConcurrencyPolicy::Forbid),
            10,
        )
        .await;
        let (obj, _) = reconcile_once(&ctx, obj).await;
        let first = jobs(&ctx).await;
        assert!(!first.is_empty(), "the due run started a Job");

        // a minute later the Job still runs: Forbid skips the run
        let later = (ctx.clock)() + SignedDuration::from_mins(1);
        let ctx = Arc::new(Context {
            clock: Arc::new(move || later),
            client: ctx.client.clone(),
            recorder: Recorder::new(
                ctx.client.clone(),
                Reporter {
                    controller: CONTROLLER_NAME.into(),
                    instance: None,
                },
            ),
            metrics: Metrics::default(),
            retries: Retries::default(),
            shard: Shard::ALL,
        });
        let (obj, _) = reconcile_once(&ctx, obj).await;
        assert_eq!(jobs(&ctx).await, first, "no Job is started");
        assert!(
            event_reasons(&ctx, &obj.name_any())
                .await
                .contains(&"Skipped".to_owned())
        );

        // under Replace the running Job is deleted and the run's Job started
        let api: Api<CronJob> = Api::namespaced(ctx.client.clone(), "default");
        let patch = serde_json::json!({ "spec": { "concurrencyPolicy": "Replace" } });
        let obj = api
            .patch(
                &obj.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .expect("the policy changes");
        let (obj, _) = reconcile_once(&ctx, obj).await;
        let names: Vec<String> = jobs(&ctx).await.iter().map(|j| j.name_any()).collect();
        let expected = format!(
            "{}-{}",
            obj.name_any(),
            later.as_second().div_euclid(60) * 60
        );
        assert_eq!(names, [expected]);
        assert!(
            event_reasons(&ctx, &obj.name_any())
                .await
                .contains(&"Replaced".to_owned())
        );
    }

    // ANCHOR: test_history
    #[tokio::test]
    async fn finished_jobs_beyond_the_history_limits_are_deleted() {
        let (fake, obj, ctx) = setup(
            |o| {
                o.spec.successful_jobs_history_limit = Some(1);
                o.spec.failed_jobs_history_limit = Some(0);
                // no run is started: the Jobs left are the ones kept
                o.spec.suspend = Some(true);
            },
            0,
        )
        .await;
        for (minute, condition) in [(1, "Complete"), (2, "Complete"), (3, "Failed")] {
            fake.seed(&finished_job(&obj, minute, condition));
        }
        reconcile_once(&ctx, obj.clone()).await;
        let names: Vec<String> = jobs(&ctx).await.iter().map(|j| j.name_any()).collect();
        assert_eq!(
            names,
            [format!("{}-120", obj.name_any())],
            "the newer successful Job is kept"
        );
    }
    // ANCHOR_END: test_history

    #[tokio::test]
    async fn a_bad_schedule_or_suspend_reports_not_ready_and_starts_nothing() {
        for (change, reason) in [
            (
                Box::new(|o: &mut CronJob| o.spec.schedule = "every minute".into())
                    as Box<dyn FnOnce(&mut CronJob)>,
                "InvalidSchedule",
            ),
            (
                Box::new(|o: &mut CronJob| o.spec.suspend = Some(true)),
                "Suspended",
            ),
        ] {
            let (_fake, obj, ctx) = setup(change, 10).await;
            let (obj, action) = reconcile_once(&ctx, obj).await;
            assert_eq!(action, Action::await_change());
            assert!(jobs(&ctx).await.is_empty(), "{reason}: no Job is started");
            let status = obj.status.expect("a status");
            let ready = &status.conditions[0];
            assert_eq!(
                (ready.status.as_str(), ready.reason.as_str()),
                ("False", reason)
            );
        }
    }
}
