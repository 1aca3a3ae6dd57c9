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

//! The Captain controller against a real control plane (see `common`): the sample in
//! `config/samples/crew_v1_captain.yaml` becomes Ready, keeps the finalizer, gets an event,
//! and its deletion completes. `make test` runs it.

mod common;

use kube::ResourceExt;
use kube::api::{Api, DeleteParams, PostParams};

use demo::api::v1::Captain;
use demo::controller::captain::{self as controller, FINALIZER};

#[tokio::test]
async fn captain_sample_is_reconciled_and_deleted() {
    let Some(env) = common::TestEnv::start().await else {
        return;
    };
    let manager = env.run_manager(controller::register);
    let client = env.client();
    let api: Api<Captain> = Api::namespaced(client.clone(), common::NAMESPACE);
    let sample: Captain = common::sample("crew_v1_captain.yaml");
    let name = sample.name_any();
    let created = api
        .create(&PostParams::default(), &sample)
        .await
        .expect("the sample is created");
    let uid = created.uid().expect("a created object has a uid");

    // TODO(user): assert what your reconcile does beyond the scaffold's.
    let ready = common::eventually(
        "the Ready condition for the sample's generation",
        || async {
            let obj = api.get(&name).await.ok()?;
            let conditions = &obj.status.as_ref()?.conditions;
            let ready = conditions.iter().find(|c| c.type_ == "Ready")?;
            (ready.status == "True" && ready.observed_generation == obj.metadata.generation)
                .then(|| obj.clone())
        },
    )
    .await;
    assert!(
        ready.finalizers().iter().any(|f| f == FINALIZER),
        "the sample lacks the finalizer {FINALIZER}: {:?}",
        ready.finalizers()
    );
    common::eventually("the Reconciled event", || {
        common::event(&client, &uid, "Reconciled")
    })
    .await;

    api.delete(&name, &DeleteParams::default())
        .await
        .expect("the sample's deletion is accepted");
    common::eventually("the sample to be gone", || async {
        matches!(api.get_opt(&name).await, Ok(None)).then_some(())
    })
    .await;
    common::eventually("the Deleting event", || {
        common::event(&client, &uid, "Deleting")
    })
    .await;
    manager.stop().await;
}
