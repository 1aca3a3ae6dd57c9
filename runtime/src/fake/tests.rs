//! The fake as users and kube's runtime reach it: seeded objects, registered types, and kube's
//! `watcher`. Its agreement with a real apiserver is the behaviour table of the repository's
//! `tests/tests/apiserver/fake_client.rs`.

use super::*;
use futures::TryStreamExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams};
use kube::runtime::watcher::{self, Event};

fn config_map(name: &str, namespace: Option<&str>) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.namespace = namespace.map(str::to_owned);
    cm
}

#[tokio::test]
async fn seeded_objects_get_server_fields_and_are_served() {
    let fake = FakeApi::new()
        .with_object(&config_map("a", None))
        .with_object(&config_map("b", Some("other")));
    let client = fake.client();
    let default: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let a = default.get("a").await.expect("seeded into default");
    let b: Api<ConfigMap> = Api::namespaced(client.clone(), "other");
    let b = b.get("b").await.expect("seeded into other");
    assert!(
        a.metadata
            .resource_version
            .as_deref()
            .and_then(|v| v.parse::<u64>().ok())
            < b.metadata
                .resource_version
                .as_deref()
                .and_then(|v| v.parse::<u64>().ok()),
        "one revision counter orders the writes"
    );
    assert!(a.metadata.uid.is_some() && a.metadata.creation_timestamp.is_some());
    assert_eq!(a.metadata.generation, None, "ConfigMaps have no generation");
    let all: Api<ConfigMap> = Api::all(client);
    let names: Vec<_> = all
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .map(|c| {
            (
                c.metadata.namespace.unwrap_or_default(),
                c.metadata.name.unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("default".to_owned(), "a".to_owned()),
            ("other".to_owned(), "b".to_owned())
        ]
    );
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(fake.client());
    let other = namespaces
        .get("other")
        .await
        .expect("seeding made the namespace");
    assert_eq!(
        other.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
}

#[tokio::test]
async fn a_seeded_type_outside_the_builtins_is_registered_from_its_resource_impl() {
    let mut job = Job::default();
    job.metadata.name = Some("nightly".into());
    let fake = FakeApi::new().with_object(&job);
    let api: Api<Job> = Api::namespaced(fake.client(), "default");
    let got = api.get("nightly").await.expect("served at /apis/batch/v1");
    assert_eq!(got.metadata.generation, Some(1));
    let err = api.get("weekly").await.expect_err("absent");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 404 && s.message == "jobs.batch \"weekly\" not found"),
        "{err}"
    );
}

#[tokio::test]
async fn an_unknown_resource_is_not_found() {
    let fake = FakeApi::new();
    let api: Api<Job> = Api::namespaced(fake.client(), "default");
    let err = api
        .list(&ListParams::default())
        .await
        .expect_err("not served");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 404 && s.reason == "NotFound"),
        "{err}"
    );
}

#[tokio::test]
async fn kube_watcher_lists_then_follows_changes() {
    let fake = FakeApi::new().with_object(&config_map("first", None));
    let api: Api<ConfigMap> = Api::namespaced(fake.client(), "default");
    let mut events = Box::pin(watcher::watcher(api.clone(), watcher::Config::default()));
    let mut initial = Vec::new();
    loop {
        match events.try_next().await.expect("watch").expect("open") {
            Event::Init => {}
            Event::InitApply(cm) => initial.push(cm.metadata.name.unwrap_or_default()),
            Event::InitDone => break,
            other => panic!("unexpected before InitDone: {other:?}"),
        }
    }
    assert_eq!(initial, ["first"]);
    api.create(&PostParams::default(), &config_map("second", None))
        .await
        .expect("create");
    match events.try_next().await.expect("watch").expect("open") {
        Event::Apply(cm) => assert_eq!(cm.metadata.name.as_deref(), Some("second")),
        other => panic!("expected the new object, got {other:?}"),
    }
}
