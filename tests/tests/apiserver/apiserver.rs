//! Against a real kube-apiserver: every CRD the generator writes for `testdata/` is accepted with
//! server-side apply and becomes Established, and its markers are enforced.

use crate::project_v4;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use operator_gen::manifests::{self, ManifestsOptions};
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_tests::workspace;
use std::time::Duration;

fn generated_crds()
-> Vec<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>
{
    let mut crds = Vec::new();
    let dir = workspace().join("testdata/conformance");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("testdata")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    cases.sort();
    for case in cases {
        let outputs = manifests::generate(
            &case,
            &ManifestsOptions {
                allow_dangerous_types: true,
                ..Default::default()
            },
        )
        .expect("manifests");
        for (file, text) in outputs
            .iter()
            .filter(|(f, _)| f.starts_with("config/crd/bases/"))
        {
            let crd: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition =
                serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("{file}: {e}"));
            // the apiserver serves no custom resources in the core group: the empty-group
            // fixture is a conformance case only
            if crd.spec.group.is_empty() {
                continue;
            }
            if !crds.iter().any(|c: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition| c.metadata.name == crd_name(&crd)) {
                crds.push(crd);
            }
        }
    }
    crds
}

fn crd_name(
    c: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
) -> Option<String> {
    c.metadata.name.clone()
}

/// Every CRD the conformance inputs give, by name: one per kind, `foos_maxdesclen` repeating
/// `foos` and `nogroup`'s core-group kind left out.
const EXPECTED_CRDS: &[&str] = &[
    "admirales.crew.testproject.org",
    "captains.crew.testproject.org",
    "cronjobs.testdata.kubebuilder.io",
    "enums.testdata.kubebuilder.io",
    "externaldocs.testdata.kubebuilder.io",
    "firstmates.crew.testproject.org",
    "foos.bar.example.com",
    "immutabletypes.testdata.kubebuilder.io",
    "jobs.testdata.kubebuilder.io",
    "navigators.crew.testproject.org",
    "oneofs.testdata.kubebuilder.io",
    "sailors.crew.testproject.org",
    "testquotas.plural.example.com",
    "versionedresources.testdata.kubebuilder.io",
];

/// The CRDs the apiserver test installs are exactly [`EXPECTED_CRDS`]; checked without the
/// apiserver, so a CRD that goes missing fails here too.
#[test]
fn generated_crds_are_the_expected_ones() {
    let mut names: Vec<String> = generated_crds()
        .iter()
        .map(|c| crd_name(c).unwrap_or_default())
        .collect();
    names.sort();
    assert_eq!(names, EXPECTED_CRDS);
}

#[tokio::test]
async fn generated_crds_are_established_and_enforce_their_markers() {
    require_assets!();
    let crds = generated_crds();
    let mut names: Vec<String> = crds
        .iter()
        .map(|c| crd_name(c).unwrap_or_default())
        .collect();
    names.sort();
    assert_eq!(names, EXPECTED_CRDS, "the CRDs to install");
    let plane = ControlPlane::start().await.expect("control plane starts");
    plane
        .install_crds(&crds, Duration::from_secs(60))
        .await
        .expect("every generated CRD is accepted and Established");

    // jobs: count has Minimum=0 Maximum=10, friendlyName MinLength=5, crongJob is required
    let gvk = GroupVersionKind::gvk("testdata.kubebuilder.io", "v1beta1", "Job");
    let api: Api<DynamicObject> =
        Api::namespaced_with(plane.client(), "default", &ApiResource::from_gvk(&gvk));
    let job = |count: i64, name: &str| -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "testdata.kubebuilder.io/v1beta1", "kind": "Job",
            "metadata": {"name": format!("job-{count}")},
            "spec": {"count": count, "friendlyName": name,
                     "crongJob": {"int32WithValidations": 2, "twoOfAKindPart0": "abcd"},
                     "unknownField": "pruned"}
        }))
        .expect("object")
    };
    let created = api
        .create(&PostParams::default(), &job(3, "friendly"))
        .await
        .expect("a valid object is accepted");
    assert!(
        created.data["spec"].get("unknownField").is_none(),
        "unknown fields are pruned"
    );
    let err = api
        .create(&PostParams::default(), &job(11, "friendly"))
        .await
        .expect_err("count above Maximum");
    assert!(
        err.to_string().contains("less than or equal to 10"),
        "{err}"
    );
    let err = api
        .create(&PostParams::default(), &job(4, "abc"))
        .await
        .expect_err("name below MinLength");
    assert!(err.to_string().contains("at least 5 chars long"), "{err}");

    // enums: the field only takes the declared values
    let gvk = GroupVersionKind::gvk("testdata.kubebuilder.io", "v1", "Enum");
    let api: Api<DynamicObject> =
        Api::namespaced_with(plane.client(), "default", &ApiResource::from_gvk(&gvk));
    let e: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "testdata.kubebuilder.io/v1", "kind": "Enum", "metadata": {"name": "bad"}, "spec": {"field": "Value3"}
    }))
    .expect("object");
    let err = api
        .create(&PostParams::default(), &e)
        .await
        .expect_err("value outside the enum");
    assert!(err.to_string().contains("Unsupported value"), "{err}");

    // foos: the default marker is applied by the apiserver
    let gvk = GroupVersionKind::gvk("bar.example.com", "foo", "Foo");
    let api: Api<DynamicObject> =
        Api::namespaced_with(plane.client(), "default", &ApiResource::from_gvk(&gvk));
    let foo: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "bar.example.com/foo", "kind": "Foo", "metadata": {"name": "f"}, "spec": {}
    }))
    .expect("object");
    let created = api
        .create(&PostParams::default(), &foo)
        .await
        .expect("created");
    assert_eq!(created.data["spec"]["defaultedString"], "fooDefaultString");
}

/// The typed client, informer and lister the derive generates, against the real apiserver.
#[tokio::test]
async fn typed_client_informer_and_lister_work() {
    use kube::ResourceExt;
    use kube::api::{DeleteParams, ListParams, Patch};
    use kube::core::{Expression, Selector};
    use project_v4::v1::admiral::{Admiral, AdmiralApply, AdmiralSpecApply};
    use project_v4::v1::captain::{Captain, CaptainSpec};

    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    plane
        .install_crds(&[Captain::crd(), Admiral::crd()], Duration::from_secs(60))
        .await
        .expect("CRDs installed");

    // namespaced: create, get, list by label, patch, status, delete
    let captains = Captain::client(plane.client(), "default");
    let informer = Captain::informer(kube::Api::all(plane.client()), Default::default());
    let mut kirk = Captain::new(
        "kirk",
        CaptainSpec {
            foo: Some("enterprise".into()),
        },
    );
    kirk.metadata.labels = Some([("fleet".to_string(), "starfleet".to_string())].into());
    captains.create(&kirk).await.expect("create");
    captains
        .create(&Captain::new("hook", CaptainSpec::default()))
        .await
        .expect("create");
    assert_eq!(
        captains.get("kirk").await.expect("get").spec.foo.as_deref(),
        Some("enterprise")
    );
    let fleet = ListParams::default().labels("fleet=starfleet");
    let listed = captains.list(&fleet).await.expect("list");
    let listed: Vec<String> = listed.items.iter().map(|c| c.name_any()).collect();
    assert_eq!(listed, ["kirk"], "the captains labelled fleet=starfleet");
    let patched = captains
        .patch(
            "hook",
            &Patch::Merge(serde_json::json!({"spec": {"foo": "jolly roger"}})),
        )
        .await
        .expect("patch");
    assert_eq!(patched.spec.foo.as_deref(), Some("jolly roger"));

    informer.wait_for_sync().await.expect("informer syncs");
    let lister = informer.lister();
    let selector: Selector = Expression::Equal("fleet".into(), "starfleet".into()).into();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while lister.namespace("default").list(&Selector::default()).len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the informer never saw both captains"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let selected: Vec<String> = lister
        .list(&selector)
        .iter()
        .map(|c| c.name_any())
        .collect();
    assert_eq!(
        selected,
        ["kirk"],
        "the lister's captains labelled fleet=starfleet"
    );
    assert!(lister.namespace("default").get("kirk").is_some());
    assert!(lister.namespace("other").get("kirk").is_none());

    captains
        .delete("hook", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(captains.get("hook").await.is_err());

    // cluster-scoped with status: apply, then apply_status through the status subresource
    let admirals = Admiral::client(plane.client());
    let nelson =
        AdmiralApply::new("nelson").with_spec(AdmiralSpecApply::default().with_foo("victory"));
    let applied = admirals
        .apply(&nelson, &kube::api::PatchParams::apply("admiral-client"))
        .await
        .expect("server-side apply");
    assert_eq!(applied.spec.foo.as_deref(), Some("victory"));
    let ready = serde_json::json!({
        "apiVersion": "crew.testproject.org/v1", "kind": "Admiral",
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Flagship",
            "message": "", "lastTransitionTime": "2026-11-22T00:00:00Z"}]}
    });
    let updated = admirals
        .patch_status("nelson", &Patch::Merge(ready))
        .await
        .expect("patch status");
    let conditions = updated.status.expect("status").conditions;
    let types: Vec<&str> = conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, ["Ready"], "the conditions after patch_status");
    // status in a spec update is ignored: the status subresource owns it
    let mut again = admirals.get("nelson").await.expect("get");
    again.status = None;
    again.spec.foo = Some("temeraire".into());
    let replaced = admirals.update(&again).await.expect("update");
    assert_eq!(replaced.spec.foo.as_deref(), Some("temeraire"));
    let types: Vec<String> = replaced
        .status
        .map(|s| s.conditions.into_iter().map(|c| c.type_).collect())
        .unwrap_or_default();
    assert_eq!(types, ["Ready"], "the conditions after a spec update");
}

#[path = "../../../testdata/validation/src/lib.rs"]
mod validation;

/// Every class of validation a marker declares is enforced by the apiserver with its own message.
#[tokio::test]
async fn markers_are_enforced_by_the_apiserver() {
    use kube::api::{Patch, PatchParams};
    use validation::{Settings, Widget, WidgetSpec};

    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    plane
        .install_crds(&[Widget::crd()], Duration::from_secs(60))
        .await
        .expect("installed");
    let widgets = Widget::client(plane.client(), "default");
    let dynamic: Api<DynamicObject> = Api::namespaced_with(
        plane.client(),
        "default",
        &ApiResource::from_gvk(&GroupVersionKind::gvk(
            "test.operator-gen.dev",
            "v1",
            "Widget",
        )),
    );
    let raw = |name: &str, spec: serde_json::Value| -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "test.operator-gen.dev/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec
        }))
        .expect("object")
    };
    let rejected = |e: kube::Error| e.to_string();

    // Pattern, MaxItems, required, CEL: rejected with the apiserver's messages
    let e = rejected(
        dynamic
            .create(
                &PostParams::default(),
                &raw("p", serde_json::json!({"size": "huge"})),
            )
            .await
            .expect_err("pattern"),
    );
    assert!(e.contains("should match '^(small|medium|large)$'"), "{e}");
    let e = rejected(
        dynamic
            .create(
                &PostParams::default(),
                &raw(
                    "m",
                    serde_json::json!({"size": "small", "tags": ["a", "b", "c", "d"]}),
                ),
            )
            .await
            .expect_err("max items"),
    );
    assert!(e.contains("must have at most 3 items"), "{e}");
    let e = rejected(
        dynamic
            .create(
                &PostParams::default(),
                &raw("r", serde_json::json!({"replicas": 1})),
            )
            .await
            .expect_err("required"),
    );
    assert!(e.contains("spec.size: Required value"), "{e}");
    let e = rejected(
        dynamic
            .create(
                &PostParams::default(),
                &raw("c", serde_json::json!({"size": "small", "replicas": 9})),
            )
            .await
            .expect_err("CEL rule"),
    );
    assert!(e.contains("only large widgets scale past 5"), "{e}");

    // preserve-unknown-fields keeps what the schema does not name
    let kept = dynamic
        .create(
            &PostParams::default(),
            &raw(
                "k",
                serde_json::json!({"size": "small", "settings": {"color": "red", "shade": "dark"}}),
            ),
        )
        .await
        .expect("created");
    assert_eq!(kept.data["spec"]["settings"]["shade"], "dark");

    // the status subresource ignores status sent with the object
    let mut w = Widget::new(
        "s",
        WidgetSpec {
            size: "medium".into(),
            replicas: 2,
            settings: Some(Settings::default()),
            ..Default::default()
        },
    );
    w.status = Some(validation::WidgetStatus {
        replicas: 7,
        selector: None,
    });
    let created = widgets.create(&w).await.expect("created");
    assert!(
        created.status.is_none_or(|s| s.replicas == 0),
        "status is not written through the main resource"
    );

    // tagged enums are structural and round-trip through the apiserver
    let mut e = Widget::new(
        "e",
        WidgetSpec {
            size: "small".into(),
            ..Default::default()
        },
    );
    e.spec.source = Some(validation::Source::Git {
        url: "https://example.com/w.git".into(),
    });
    e.spec.strategy = Some(validation::Strategy::Rolling { max_surge: 2 });
    let stored = widgets.create(&e).await.expect("enums accepted");
    assert_eq!(stored.spec.source, e.spec.source);
    assert_eq!(stored.spec.strategy, e.spec.strategy);
    let e = rejected(
        dynamic
            .create(&PostParams::default(), &raw("two", serde_json::json!({"size": "small", "source": {"git": {"url": "u"}, "image": "i"}})))
            .await
            .expect_err("two variants at once"),
    );
    assert!(e.contains("source"), "{e}");

    // untagged enums: every variant is accepted and read back as written
    for (name, port, targets) in [
        (
            "u1",
            validation::Port::Number(8080),
            vec![validation::Target::Nothing],
        ),
        (
            "u2",
            validation::Port::Name("http".into()),
            vec![
                validation::Target::Service {
                    service: "collector".into(),
                    port: 4317,
                },
                validation::Target::Url {
                    url: "https://example.com/report".into(),
                },
            ],
        ),
    ] {
        let mut u = Widget::new(
            name,
            WidgetSpec {
                size: "small".into(),
                ..Default::default()
            },
        );
        u.spec.port = Some(port);
        u.spec.targets = targets;
        let stored = widgets.create(&u).await.expect("untagged enums accepted");
        assert_eq!(stored.spec.port, u.spec.port, "{name}");
        assert_eq!(stored.spec.targets, u.spec.targets, "{name}");
        let read = widgets.get(name).await.expect("read back");
        assert_eq!(read.spec.targets, u.spec.targets, "{name}");
    }
    let e = rejected(
        dynamic
            .create(
                &PostParams::default(),
                &raw(
                    "badport",
                    serde_json::json!({"size": "small", "port": true}),
                ),
            )
            .await
            .expect_err("a boolean port"),
    );
    assert!(e.contains("port"), "{e}");
    let e = rejected(
        dynamic
            .create(
                &PostParams::default(),
                &raw(
                    "badtarget",
                    serde_json::json!({"size": "small", "targets": ["collector"]}),
                ),
            )
            .await
            .expect_err("a string target"),
    );
    assert!(e.contains("targets"), "{e}");

    // the scale subresource reads and writes the declared paths
    let scale = widgets.api().get_scale("s").await.expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
    widgets
        .api()
        .patch_scale(
            "s",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": 4}})),
        )
        .await
        .expect("scaled");
    assert_eq!(widgets.get("s").await.expect("get").spec.replicas, 4);

    // printer columns appear in the table output
    let request = http::Request::get("/apis/test.operator-gen.dev/v1/namespaces/default/widgets")
        .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
        .body(Vec::new())
        .expect("request");
    let table: serde_json::Value = plane.client().request(request).await.expect("table");
    let columns: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(
        columns.contains(&"Size") && columns.contains(&"Replicas"),
        "{columns:?}"
    );
    let row = table["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["object"]["metadata"]["name"] == "s")
        .expect("row s");
    let cells = row["cells"].as_array().expect("cells");
    assert!(
        cells.iter().any(|c| c == "medium") && cells.iter().any(|c| c == 4),
        "{cells:?}"
    );
}

/// What a test controller saw: how many reconciles, per object name.
#[derive(Default)]
struct Seen {
    reconciles: std::sync::Mutex<std::collections::BTreeMap<String, usize>>,
}

impl Seen {
    fn of(&self, name: &str) -> usize {
        let all = self.reconciles.lock().unwrap_or_else(|e| e.into_inner());
        all.get(name).copied().unwrap_or(0)
    }
}

/// The scaffold's reconcile in miniature, through the runtime's helpers: the finalizer in one
/// patch, `Ready` for the generation by server-side apply of status, cleanup on deletion.
async fn reconcile_admiral(
    obj: std::sync::Arc<project_v4::v1::admiral::Admiral>,
    ctx: std::sync::Arc<(Api<project_v4::v1::admiral::Admiral>, Seen)>,
) -> Result<kube::runtime::controller::Action, kube::Error> {
    use kube::ResourceExt;
    use operator_gen_runtime::controller as shared;
    let (api, seen) = ctx.as_ref();
    *seen
        .reconciles
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(obj.name_any())
        .or_default() += 1;
    const FINALIZER: &str = "crew.testproject.org/finalizer";
    if obj.metadata.deletion_timestamp.is_some() {
        shared::remove_finalizer(api, obj.as_ref(), FINALIZER).await?;
        return Ok(kube::runtime::controller::Action::await_change());
    }
    shared::add_finalizer(api, obj.as_ref(), FINALIZER).await?;
    let generation = obj.metadata.generation;
    let conditions = obj
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    if !shared::is_ready(conditions, generation) {
        let ready = shared::ready("Reconciled", "reconciled".into(), generation);
        shared::apply_conditions(api, obj.as_ref(), "admiral-controller", &[ready]).await?;
    }
    Ok(kube::runtime::controller::Action::await_change())
}

/// `controller::generation_changed` wakes a reconcile once per change of generation: not again
/// for the finalizer and status the reconcile itself writes, nor for a label edit; again for a
/// spec edit and for the deletion marking, after which the finalizer goes and the object with
/// it. The same reconcile under a plain `Controller::new` is woken by its own writes, which
/// shows the count can fail.
#[tokio::test]
async fn generation_changed_controller_reconciles_once_per_change() {
    use kube::api::{DeleteParams, Patch, PatchParams};
    use kube::runtime::{Controller, watcher};
    use operator_gen_runtime::controller as shared;
    use operator_gen_runtime::futures::{self, StreamExt};
    use project_v4::v1::admiral::{Admiral, AdmiralSpec};
    use std::sync::Arc;

    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    plane
        .install_crds(&[Admiral::crd()], Duration::from_secs(60))
        .await
        .expect("CRD installed");
    let api: Api<Admiral> = Api::all(plane.client());
    let filtered = Arc::new((api.clone(), Seen::default()));
    let plain = Arc::new((api.clone(), Seen::default()));
    let by_label = |value: &str| watcher::Config::default().labels(&format!("controller={value}"));
    let on_error = |_: Arc<Admiral>, _: &kube::Error, _| {
        kube::runtime::controller::Action::requeue(Duration::from_millis(200))
    };
    let filtered_run = shared::generation_changed(api.clone(), by_label("filtered"))
        .run(reconcile_admiral, on_error, filtered.clone())
        .for_each(|_| async {});
    let plain_run = Controller::new(api.clone(), by_label("plain"))
        .run(reconcile_admiral, on_error, plain.clone())
        .for_each(|_| async {});
    let controllers = tokio::spawn(async move {
        futures::join!(filtered_run, plain_run);
    });

    let admiral = |name: &str, label: &str| {
        let mut a = Admiral::new(
            name,
            AdmiralSpec {
                foo: Some("victory".into()),
            },
        );
        a.metadata.labels = Some([("controller".to_string(), label.to_string())].into());
        a
    };
    api.create(&PostParams::default(), &admiral("nelson", "filtered"))
        .await
        .expect("create nelson");
    api.create(&PostParams::default(), &admiral("drake", "plain"))
        .await
        .expect("create drake");

    // settled: Ready for its generation and the finalizer on, and no reconcile for a while
    async fn settled(api: &Api<Admiral>, name: &str, generation: i64) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let obj = api.get(name).await.expect("get");
            let ready = obj.status.as_ref().is_some_and(|s| {
                operator_gen_runtime::controller::is_ready(&s.conditions, Some(generation))
            });
            if ready
                && obj.metadata.generation == Some(generation)
                && !obj
                    .metadata
                    .finalizers
                    .clone()
                    .unwrap_or_default()
                    .is_empty()
            {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{name} never became Ready for generation {generation}: {obj:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    settled(&api, "nelson", 1).await;
    settled(&api, "drake", 1).await;
    assert_eq!(
        filtered.1.of("nelson"),
        1,
        "reconciles of nelson after its creation"
    );
    assert!(
        plain.1.of("drake") >= 2,
        "a plain controller is woken by its own writes: {} reconcile(s) of drake",
        plain.1.of("drake")
    );

    // a label edit leaves the generation: no reconcile
    let label = serde_json::json!({"metadata": {"labels": {"fleet": "channel"}}});
    api.patch("nelson", &PatchParams::default(), &Patch::Merge(&label))
        .await
        .expect("label nelson");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        filtered.1.of("nelson"),
        1,
        "reconciles of nelson after a label edit"
    );

    // a spec edit: one reconcile, Ready for generation 2
    let spec = serde_json::json!({"spec": {"foo": "temeraire"}});
    api.patch("nelson", &PatchParams::default(), &Patch::Merge(&spec))
        .await
        .expect("edit nelson's spec");
    settled(&api, "nelson", 2).await;
    assert_eq!(
        filtered.1.of("nelson"),
        2,
        "reconciles of nelson after a spec edit"
    );

    // deletion: the marking wakes one reconcile, which lets the finalizer go
    api.delete("nelson", &DeleteParams::default())
        .await
        .expect("delete nelson");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while api.get_opt("nelson").await.expect("get").is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "nelson was never deleted"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        filtered.1.of("nelson"),
        3,
        "reconciles of nelson after its deletion"
    );
    controllers.abort();
}

/// A CEL rule in the root's `#[k8s(doc)]` stands on the root object, where it reads
/// `self.metadata.name`: the apiserver enforces it.
#[tokio::test]
async fn a_rule_on_the_root_reads_the_name() {
    require_assets!();
    let source = r#"
use operator_gen_runtime::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]
#[k8s(group = "root.example.com", version = "v1", kind = "Named", required_metadata,
      doc = "Named has a short name.\n+kubebuilder:validation:XValidation:rule=\"self.metadata.name.size() <= 10\",message=\"the name has at most 10 characters\"")]
pub struct NamedSpec {
    pub size: i32,
}
"#;
    let universe = manifests::scan_source(std::path::Path::new("src/lib.rs"), source)
        .unwrap_or_else(|d| panic!("scans: {d:?}"));
    let outputs = manifests::outputs(&universe, &Default::default(), "manager-role")
        .unwrap_or_else(|d| panic!("emits: {d:?}"));
    let crd: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition =
        serde_saphyr::from_str(&outputs["config/crd/bases/root.example.com_nameds.yaml"])
            .expect("CRD");
    let plane = ControlPlane::start().await.expect("control plane starts");
    plane
        .install_crds(std::slice::from_ref(&crd), Duration::from_secs(60))
        .await
        .expect("Established");
    let gvk = GroupVersionKind::gvk("root.example.com", "v1", "Named");
    let api: Api<DynamicObject> =
        Api::namespaced_with(plane.client(), "default", &ApiResource::from_gvk(&gvk));
    let named = |name: &str| -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "root.example.com/v1", "kind": "Named",
            "metadata": {"name": name}, "spec": {"size": 1}
        }))
        .expect("object")
    };
    api.create(&PostParams::default(), &named("short"))
        .await
        .expect("a short name is accepted");
    let err = api
        .create(&PostParams::default(), &named("a-much-longer-name"))
        .await
        .expect_err("a long name is refused");
    assert!(
        err.to_string()
            .contains("the name has at most 10 characters"),
        "{err}"
    );
}
