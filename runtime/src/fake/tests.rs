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

/// A CRD of `Gauge` (`gauges.example.com/v1`) whose `spec.size` is at most 3, defaults to 1,
/// and may only grow.
fn gauge_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gauges.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "gauges", "singular": "gauge", "kind": "Gauge", "listKind": "GaugeList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": {"size": {
                    "type": "integer", "maximum": 3, "default": 1,
                    "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "must not shrink"}],
                }}}},
            }}}],
        },
    }))
    .expect("the CRD")
}

/// The Gauges of `fake`.
fn gauges(fake: &FakeApi) -> Api<kube::api::DynamicObject> {
    use kube::api::{ApiResource, GroupVersionKind};
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("example.com", "v1", "Gauge"));
    Api::namespaced_with(fake.client(), "default", &resource)
}

/// A Gauge named `name` with `spec`.
fn gauge(name: &str, spec: Value) -> kube::api::DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Gauge",
        "metadata": {"name": name}, "spec": spec,
    }))
    .expect("a Gauge")
}

#[tokio::test]
async fn custom_resources_are_admitted_as_their_crd_says() {
    use kube::api::{Patch, PatchParams};
    let fake = FakeApi::new().with_crd(&gauge_crd());
    let api = gauges(&fake);
    let created = api
        .create(&PostParams::default(), &gauge("g", json!({"extra": true})))
        .await
        .expect("created");
    assert_eq!(
        created.data["spec"],
        json!({"size": 1}),
        "pruned and defaulted"
    );
    let Err(kube::Error::Api(refused)) = api
        .create(&PostParams::default(), &gauge("big", json!({"size": 4})))
        .await
    else {
        panic!("a size of 4 is admitted");
    };
    assert_eq!((refused.code, refused.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        refused.message,
        "Gauge.example.com \"big\" is invalid: spec.size: Invalid value: 4: spec.size in body should be less than or equal to 3"
    );
    let patch = Patch::Merge(json!({"spec": {"size": 3}}));
    api.patch("g", &PatchParams::default(), &patch)
        .await
        .expect("grows");
    let shrink = Patch::Merge(json!({"spec": {"size": 2}}));
    let Err(kube::Error::Api(refused)) = api.patch("g", &PatchParams::default(), &shrink).await
    else {
        panic!("the shrink is admitted");
    };
    assert!(
        refused
            .message
            .ends_with("spec.size: Invalid value: 2: must not shrink"),
        "{}",
        refused.message
    );
    let seeded = |size: i64| {
        std::panic::catch_unwind(|| {
            let mut gauge = Gauge::default();
            gauge.metadata.name = Some("seeded".into());
            gauge.spec = json!({ "size": size });
            FakeApi::new().with_crd(&gauge_crd()).with_object(&gauge)
        })
    };
    assert!(seeded(3).is_ok());
    let refused = seeded(9).expect_err("a seeded object its CRD refuses panics");
    let message = refused
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("spec.size in body should be less than or equal to 3"),
        "{message}"
    );
}

/// A typed `Gauge` to seed.
#[derive(Default, Serialize, serde::Deserialize)]
struct Gauge {
    metadata: kube::api::ObjectMeta,
    spec: Value,
}

impl Resource for Gauge {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;

    fn kind(_: &()) -> std::borrow::Cow<'_, str> {
        "Gauge".into()
    }
    fn group(_: &()) -> std::borrow::Cow<'_, str> {
        "example.com".into()
    }
    fn version(_: &()) -> std::borrow::Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> std::borrow::Cow<'_, str> {
        "gauges".into()
    }
    fn meta(&self) -> &kube::api::ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut kube::api::ObjectMeta {
        &mut self.metadata
    }
}

/// A defaulter that turns a size of 1 into 2 and adds a field the schema does not know, and a
/// validator that denies a size of 3.
struct GaugeHooks;

impl crate::webhook::Defaulter<Gauge> for GaugeHooks {
    fn default(&self, gauge: &mut Gauge) {
        if gauge.spec["size"] == 1 {
            gauge.spec["size"] = json!(2);
            gauge.spec["label"] = json!("pruned");
        }
    }
}

impl crate::webhook::Validator<Gauge> for GaugeHooks {
    fn validate_create(
        &self,
        gauge: &Gauge,
    ) -> Result<crate::webhook::Warnings, crate::webhook::HookError> {
        match gauge.spec["size"].as_i64() {
            Some(3) => Err("size 3 is unlucky".into()),
            _ => Ok(Vec::new()),
        }
    }

    fn validate_update(
        &self,
        _old: &Gauge,
        new: &Gauge,
    ) -> Result<crate::webhook::Warnings, crate::webhook::HookError> {
        self.validate_create(new)
    }
}

#[tokio::test]
async fn registered_webhooks_run_in_the_admission_chain() {
    use kube::api::{DynamicObject, Patch, PatchParams};
    let fake = FakeApi::new()
        .with_crd(&gauge_crd())
        .with_defaulter::<Gauge>(GaugeHooks)
        .with_validator::<Gauge>(GaugeHooks);
    let api = gauges(&fake);
    let created = api
        .create(&PostParams::default(), &gauge("g", json!({})))
        .await
        .expect("created");
    assert_eq!(
        created.data["spec"],
        json!({"size": 2}),
        "the schema's default, then the defaulter's, its unknown field pruned"
    );
    let denied = |result: kube::Result<DynamicObject>| match result {
        Err(kube::Error::Api(status)) => (status.code, status.reason, status.message),
        other => panic!("not denied: {other:?}"),
    };
    let refused = api
        .create(&PostParams::default(), &gauge("three", json!({"size": 3})))
        .await;
    let unlucky = (
        403,
        "Forbidden".to_owned(),
        "admission webhook \"vgauge-v1.kb.io\" denied the request: size 3 is unlucky".to_owned(),
    );
    assert_eq!(denied(refused), unlucky);
    let too_big = api
        .create(&PostParams::default(), &gauge("four", json!({"size": 4})))
        .await;
    assert_eq!(
        denied(too_big).0,
        422,
        "the schema is checked before the validator"
    );
    let patch = Patch::Merge(json!({"spec": {"size": 3}}));
    let updated = api.patch("g", &PatchParams::default(), &patch).await;
    assert_eq!(denied(updated), unlucky);
    assert!(api.get_opt("three").await.expect("get").is_none());
}
