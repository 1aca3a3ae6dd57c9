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

//! The Memcached controller against a real control plane (see `common`): the sample in
//! `config/samples/cache_v1alpha1_memcached.yaml` gets a Deployment of the image, owned by it, with
//! `spec.size` replicas, becomes Available, gets an event, and its deletion completes.
//! `make test` runs it.

mod common;

use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, PostParams};

use demo::api::v1alpha1::Memcached;
use demo::controller::memcached::{self as controller, AVAILABLE, FINALIZER};

#[tokio::test]
async fn memcached_sample_gets_its_deployment_and_is_deleted() {
    let Some(env) = common::TestEnv::start().await else {
        return;
    };
    let manager = env.run_manager(controller::register);
    let client = env.client();
    let api: Api<Memcached> = Api::namespaced(client.clone(), common::NAMESPACE);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), common::NAMESPACE);
    let sample: Memcached = common::sample("cache_v1alpha1_memcached.yaml");
    let name = sample.name_any();
    let created = api
        .create(&PostParams::default(), &sample)
        .await
        .expect("the sample is created");
    let uid = created.uid().expect("a created object has a uid");

    // TODO(user): assert what your reconcile does beyond the scaffold's.
    let deployment = common::eventually("the sample's Deployment", || async {
        deployments.get_opt(&name).await.ok().flatten()
    })
    .await;
    let owners = deployment.owner_references();
    assert!(
        owners
            .iter()
            .any(|o| o.uid == uid && o.kind == "Memcached" && o.controller == Some(true)),
        "the Deployment is not controlled by the sample: {owners:?}"
    );
    let replicas = deployment.spec.replicas;
    assert_eq!(replicas, Some(controller::size(&created)));
    let available = common::eventually("the Available condition", || async {
        let obj = api.get(&name).await.ok()?;
        let conditions = &obj.status.as_ref()?.conditions;
        let available = conditions.iter().find(|c| c.type_ == AVAILABLE)?;
        (available.status == "True").then(|| obj.clone())
    })
    .await;
    assert!(
        available.finalizers().iter().any(|f| f == FINALIZER),
        "the sample lacks the finalizer {FINALIZER}: {:?}",
        available.finalizers()
    );
    common::eventually("the Created event", || {
        common::event(&client, &uid, "Created")
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
