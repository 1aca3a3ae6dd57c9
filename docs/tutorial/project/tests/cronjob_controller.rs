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

//! The CronJob controller against a real control plane (see `common`): the sample in
//! `config/samples/batch_v1_cronjob.yaml` gets a Job it owns, reports it in its status and
//! becomes Ready with an event; suspended, it reports why it is not Ready. `make test` runs it.

mod common;

use std::sync::Arc;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};

use cronjob::api::v1::CronJob;
use cronjob::controller::cron_job::{self as controller, SCHEDULED_AT};

// ANCHOR: test
#[tokio::test]
async fn the_sample_starts_a_job_and_reports_it() {
    let Some(env) = common::TestEnv::start().await else {
        return;
    };
    // the controller's clock runs an hour ahead, so the sample's every-minute schedule has a
    // run due as soon as it is created
    let clock: controller::Clock = Arc::new(|| Timestamp::now() + SignedDuration::from_hours(1));
    let manager = env.run_manager(|mgr| controller::register_with_clock(mgr, clock));
    let client = env.client();
    let api: Api<CronJob> = Api::namespaced(client.clone(), common::NAMESPACE);
    let sample: CronJob = common::sample("batch_v1_cronjob.yaml");
    let name = sample.name_any();
    let created = api
        .create(&PostParams::default(), &sample)
        .await
        .expect("the sample is created");
    let uid = created.uid().expect("a created object has a uid");

    // a Job owned by the sample, annotated with its run's time
    let jobs: Api<Job> = Api::namespaced(client.clone(), common::NAMESPACE);
    let job = common::eventually("a Job owned by the sample", || async {
        let list = jobs.list(&ListParams::default()).await.ok()?;
        list.items.into_iter().find(|j| {
            j.owner_references()
                .iter()
                .any(|o| o.uid == uid && o.controller == Some(true))
        })
    })
    .await;
    let scheduled: Timestamp = job.annotations()[SCHEDULED_AT]
        .parse()
        .expect("the annotation is a time");
    assert!(
        job.name_any().starts_with(&format!("{name}-")),
        "{}",
        job.name_any()
    );

    // the status lists it as active, with the run's time, and Ready is true
    let ready = common::eventually("the status to report the Job", || async {
        let obj = api.get(&name).await.ok()?;
        let status = obj.status.clone()?;
        let ready = status.conditions.iter().find(|c| c.type_ == "Ready")?;
        let reported = status.active.iter().any(|r| r.uid == job.metadata.uid)
            && ready.status == "True"
            && ready.observed_generation == obj.metadata.generation;
        reported.then_some(status)
    })
    .await;
    let last = ready.last_schedule_time.expect("a last schedule time").0;
    assert!(
        last >= scheduled,
        "last schedule {last} before the Job's run {scheduled}"
    );
    common::eventually("the Created event", || {
        common::event(&client, &uid, "Created")
    })
    .await;

    // suspended: Ready turns false with the reason
    let patch = serde_json::json!({ "spec": { "suspend": true } });
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the sample is suspended");
    common::eventually("Ready=False with reason Suspended", || async {
        let obj = api.get(&name).await.ok()?;
        let status = obj.status?;
        let ready = status.conditions.iter().find(|c| c.type_ == "Ready")?;
        (ready.status == "False" && ready.reason == "Suspended").then_some(())
    })
    .await;

    api.delete(&name, &DeleteParams::default())
        .await
        .expect("the sample's deletion is accepted");
    common::eventually("the sample to be gone", || async {
        matches!(api.get_opt(&name).await, Ok(None)).then_some(())
    })
    .await;
    manager.stop().await;
}
// ANCHOR_END: test
