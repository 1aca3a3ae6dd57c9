//! The fake/real behaviour table: one list of cases, each a few calls through `kube::Api` with
//! the outcome it expects (object fields, error code and reason, watch events), run against
//! `operator_gen_runtime::fake::FakeApi` and against a real kube-apiserver with the same CRD.
//! Both must meet every expectation, and record the same observations, case for case; where the
//! fake deliberately differs, [`EXCEPTIONS`] says so with the reason.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Event as CoreEvent, Namespace, ObjectReference};
use k8s_openapi::api::events::v1::Event;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions, WatchEvent,
    WatchParams,
};
use kube::{Client, Resource, ResourceExt};
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_runtime::events::{Recorder, Reporter};
use operator_gen_runtime::fake::FakeApi;
use operator_gen_tests::tools::{Ran, record_ran};
use serde_json::{Value, json};

mod kinds {
    use operator_gen_runtime::prelude::*;
    use serde::{Deserialize, Serialize};

    /// The custom kind of the table: a spec, and a status subresource.
    ///
    /// +kubebuilder:subresource:status
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
    #[k8s(
        group = "fake.operator-gen.io",
        version = "v1",
        kind = "Widget",
        status = "WidgetStatus"
    )]
    #[serde(rename_all = "camelCase")]
    pub struct WidgetSpec {
        /// How many.
        pub size: i32,
        /// +optional
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub color: Option<String>,
        /// +optional
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub tags: Vec<String>,
    }

    /// What was observed.
    #[derive(Schema, Serialize, Deserialize, Clone, Debug, Default)]
    #[serde(rename_all = "camelCase")]
    pub struct WidgetStatus {
        /// +optional
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub phase: Option<String>,
        /// +listType=map
        /// +listMapKey=type
        /// +optional
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub conditions: Vec<Condition>,
    }
}

use kinds::{Widget, WidgetSpec, WidgetStatus};

/// The namespace every case works in.
const NS: &str = "default";

/// What one case saw, and the expectations it missed.
#[derive(Default)]
struct Rec {
    seen: Vec<(String, Value)>,
    wrong: Vec<String>,
}

impl Rec {
    /// Records `actual` under `label`; a mismatch with `expected` is a failed expectation.
    fn check(&mut self, label: &str, actual: Value, expected: Value) {
        if actual != expected {
            self.wrong
                .push(format!("{label}: expected {expected}, got {actual}"));
        }
        self.seen.push((label.to_owned(), actual));
    }

    /// Records that `holds` (e.g. a value is set but differs between backends, like a uid).
    fn holds(&mut self, label: &str, holds: bool) {
        self.check(label, json!(holds), json!(true));
    }
}

/// What the cases use: a client, typed `Api`s in [`NS`], and a prefix naming the case's objects.
#[derive(Clone)]
struct Apis {
    client: Client,
    widgets: Api<Widget>,
    maps: Api<ConfigMap>,
    prefix: String,
}

impl Apis {
    fn new(client: Client, case: &str) -> Self {
        Apis {
            widgets: Api::namespaced(client.clone(), NS),
            maps: Api::namespaced(client.clone(), NS),
            client,
            prefix: case.replace('_', "-"),
        }
    }

    fn name(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.prefix)
    }

    fn widget(&self, suffix: &str, size: i32) -> Widget {
        let mut w = Widget::new(
            &self.name(suffix),
            WidgetSpec {
                size,
                ..WidgetSpec::default()
            },
        );
        w.metadata.labels = Some([("case".to_owned(), self.prefix.clone())].into());
        w
    }

    fn map(&self, suffix: &str, labels: &[(&str, &str)]) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(self.name(suffix));
        let mut all: std::collections::BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        all.insert("case".into(), self.prefix.clone());
        cm.metadata.labels = Some(all);
        cm.data = Some([("k".to_owned(), "v".to_owned())].into());
        cm
    }

    async fn create(&self, w: &Widget) -> Widget {
        self.widgets
            .create(&PostParams::default(), w)
            .await
            .expect("create")
    }
}

/// `{code, reason}` of a failed call, or `"ok"`.
fn outcome<T>(result: &kube::Result<T>) -> Value {
    match result {
        Ok(_) => json!("ok"),
        Err(kube::Error::Api(s)) => json!({ "code": s.code, "reason": s.reason }),
        Err(other) => json!(format!("client error: {other}")),
    }
}

fn message<T>(result: &kube::Result<T>) -> Value {
    match result {
        Err(kube::Error::Api(s)) => json!(s.message),
        _ => Value::Null,
    }
}

fn generation(w: &Widget) -> Value {
    json!(w.metadata.generation)
}

fn rv(w: &impl Resource) -> u64 {
    w.meta()
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn sorted_names<K: Resource>(items: impl IntoIterator<Item = K>) -> Value {
    let mut names: Vec<String> = items.into_iter().map(|o| o.name_any()).collect();
    names.sort();
    json!(names)
}

type CaseFuture = Pin<Box<dyn Future<Output = Rec> + Send>>;

/// One row: its name and what it does.
struct Case {
    name: &'static str,
    run: fn(Apis) -> CaseFuture,
}

/// Cases where the fake deliberately differs from the apiserver, with why. A row whose case
/// agrees again fails the test, so the table cannot keep a stale excuse.
const EXCEPTIONS: &[(&str, &str)] = &[];

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "create_sets_server_fields_and_drops_status",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let mut w = a.widget("a", 1);
                    w.status = Some(WidgetStatus {
                        phase: Some("Set".into()),
                        ..Default::default()
                    });
                    let created = a.create(&w).await;
                    r.check("name", json!(created.name_any()), json!(a.name("a")));
                    r.check("namespace", json!(created.namespace()), json!(NS));
                    r.check("generation", generation(&created), json!(1));
                    r.holds("uid set", created.uid().is_some_and(|u| !u.is_empty()));
                    r.holds("resourceVersion set", rv(&created) > 0);
                    r.holds(
                        "creationTimestamp set",
                        created.metadata.creation_timestamp.is_some(),
                    );
                    r.check(
                        "status dropped on create",
                        json!(created.status.is_none()),
                        json!(true),
                    );
                    let got = a.widgets.get(&a.name("a")).await.expect("get");
                    r.check("get size", json!(got.spec.size), json!(1));
                    r.check("get uid", json!(got.uid() == created.uid()), json!(true));
                    r
                })
            },
        },
        Case {
            name: "create_with_generate_name",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let mut w = a.widget("unused", 1);
                    w.metadata.name = None;
                    w.metadata.generate_name = Some(a.name("gen-"));
                    let one = a.create(&w).await;
                    let two = a.create(&w).await;
                    let prefix = a.name("gen-");
                    for (label, got) in [("first", &one), ("second", &two)] {
                        let name = got.name_any();
                        r.holds(
                            &format!("{label} name is the prefix and five characters"),
                            name.starts_with(&prefix) && name.len() == prefix.len() + 5,
                        );
                    }
                    r.holds("names differ", one.name_any() != two.name_any());
                    let mut nameless = a.widget("unused", 1);
                    nameless.metadata.name = None;
                    let refused = a.widgets.create(&PostParams::default(), &nameless).await;
                    r.check(
                        "no name",
                        outcome(&refused),
                        json!({"code": 422, "reason": "Invalid"}),
                    );
                    r
                })
            },
        },
        Case {
            name: "create_existing_is_already_exists",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    a.create(&a.widget("a", 1)).await;
                    let again = a
                        .widgets
                        .create(&PostParams::default(), &a.widget("a", 2))
                        .await;
                    r.check(
                        "error",
                        outcome(&again),
                        json!({"code": 409, "reason": "AlreadyExists"}),
                    );
                    r.check(
                        "message",
                        message(&again),
                        json!(format!(
                            "widgets.fake.operator-gen.io \"{}\" already exists",
                            a.name("a")
                        )),
                    );
                    let cm = a.map("m", &[]);
                    a.maps
                        .create(&PostParams::default(), &cm)
                        .await
                        .expect("map");
                    let again = a.maps.create(&PostParams::default(), &cm).await;
                    r.check(
                        "configmap message",
                        message(&again),
                        json!(format!("configmaps \"{}\" already exists", a.name("m"))),
                    );
                    r
                })
            },
        },
        Case {
            name: "get_missing_is_not_found",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let missing = a.widgets.get(&a.name("none")).await;
                    r.check(
                        "error",
                        outcome(&missing),
                        json!({"code": 404, "reason": "NotFound"}),
                    );
                    r.check(
                        "message",
                        message(&missing),
                        json!(format!(
                            "widgets.fake.operator-gen.io \"{}\" not found",
                            a.name("none")
                        )),
                    );
                    let missing = a.maps.get(&a.name("none")).await;
                    r.check(
                        "configmap message",
                        message(&missing),
                        json!(format!("configmaps \"{}\" not found", a.name("none"))),
                    );
                    let opt = a.widgets.get_opt(&a.name("none")).await.expect("get_opt");
                    r.check("get_opt", json!(opt.is_none()), json!(true));
                    r
                })
            },
        },
        Case {
            name: "list_with_label_selectors",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    for (suffix, labels) in [
                        ("a", vec![("tier", "front")]),
                        ("b", vec![("tier", "back")]),
                        ("c", vec![]),
                    ] {
                        a.maps
                            .create(&PostParams::default(), &a.map(suffix, &labels))
                            .await
                            .expect("map");
                    }
                    let case = format!("case={}", a.prefix);
                    for (label, selector, expected) in [
                        ("equals", format!("{case},tier=front"), vec!["a"]),
                        ("not equals", format!("{case},tier!=front"), vec!["b", "c"]),
                        ("in", format!("{case},tier in (front,back)"), vec!["a", "b"]),
                        (
                            "notin",
                            format!("{case},tier notin (front)"),
                            vec!["b", "c"],
                        ),
                        ("exists", format!("{case},tier"), vec!["a", "b"]),
                        ("not exists", format!("{case},!tier"), vec!["c"]),
                    ] {
                        let list = a
                            .maps
                            .list(&ListParams::default().labels(&selector))
                            .await
                            .expect("list");
                        let expected: Vec<String> = expected.iter().map(|s| a.name(s)).collect();
                        r.check(label, sorted_names(list.items), json!(expected));
                    }
                    r
                })
            },
        },
        Case {
            name: "list_with_field_selectors",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    a.create(&a.widget("a", 1)).await;
                    a.create(&a.widget("b", 2)).await;
                    let by_name = a
                        .widgets
                        .list(
                            &ListParams::default()
                                .fields(&format!("metadata.name={}", a.name("b"))),
                        )
                        .await
                        .expect("list");
                    r.check("by name", sorted_names(by_name.items), json!([a.name("b")]));
                    let all: Api<Widget> = Api::all(a.client.clone());
                    let case = format!("case={}", a.prefix);
                    let in_ns = all
                        .list(
                            &ListParams::default()
                                .labels(&case)
                                .fields(&format!("metadata.namespace={NS}")),
                        )
                        .await
                        .expect("list");
                    r.check(
                        "by namespace, all namespaces",
                        sorted_names(in_ns.items),
                        json!([a.name("a"), a.name("b")]),
                    );
                    let elsewhere = all
                        .list(
                            &ListParams::default()
                                .labels(&case)
                                .fields("metadata.namespace=kube-system"),
                        )
                        .await
                        .expect("list");
                    r.check("other namespace", sorted_names(elsewhere.items), json!([]));
                    let not_b = a
                        .widgets
                        .list(
                            &ListParams::default()
                                .labels(&case)
                                .fields(&format!("metadata.name!={}", a.name("b"))),
                        )
                        .await
                        .expect("list");
                    r.check(
                        "name not equal",
                        sorted_names(not_b.items),
                        json!([a.name("a")]),
                    );
                    let list_rv = a.widgets.list(&ListParams::default()).await.expect("list");
                    r.holds(
                        "list has a resourceVersion",
                        list_rv
                            .metadata
                            .resource_version
                            .is_some_and(|v| v.parse::<u64>().is_ok()),
                    );
                    r
                })
            },
        },
        Case {
            name: "list_in_pages",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    for suffix in ["a", "b", "c"] {
                        a.maps
                            .create(&PostParams::default(), &a.map(suffix, &[]))
                            .await
                            .expect("map");
                    }
                    let case = format!("case={}", a.prefix);
                    let first = a
                        .maps
                        .list(&ListParams::default().labels(&case).limit(2))
                        .await
                        .expect("first page");
                    let token = first.metadata.continue_.clone();
                    r.check(
                        "first page",
                        sorted_names(first.items),
                        json!([a.name("a"), a.name("b")]),
                    );
                    r.holds(
                        "a continue token",
                        token.as_deref().is_some_and(|t| !t.is_empty()),
                    );
                    r.check(
                        "no remaining count with a selector",
                        json!(first.metadata.remaining_item_count),
                        Value::Null,
                    );
                    let rest = a
                        .maps
                        .list(
                            &ListParams::default()
                                .labels(&case)
                                .limit(2)
                                .continue_token(token.as_deref().unwrap_or_default()),
                        )
                        .await
                        .expect("second page");
                    r.check(
                        "the last page's continue",
                        json!(rest.metadata.continue_.as_deref().unwrap_or_default()),
                        json!(""),
                    );
                    r.check(
                        "second page",
                        sorted_names(rest.items),
                        json!([a.name("c")]),
                    );
                    let namespaces: Api<Namespace> = Api::all(a.client.clone());
                    let mut ns = Namespace::default();
                    ns.metadata.name = Some(a.name("ns"));
                    namespaces
                        .create(&PostParams::default(), &ns)
                        .await
                        .expect("namespace");
                    let own: Api<ConfigMap> = Api::namespaced(a.client.clone(), &a.name("ns"));
                    for suffix in ["x", "y", "z"] {
                        own.create(&PostParams::default(), &a.map(suffix, &[]))
                            .await
                            .expect("map");
                    }
                    let unselected = own
                        .list(&ListParams::default().limit(1))
                        .await
                        .expect("page without selectors");
                    r.check(
                        "remaining count without selectors",
                        json!(unselected.metadata.remaining_item_count),
                        json!(2),
                    );
                    let bad = a
                        .maps
                        .list(
                            &ListParams::default()
                                .labels(&case)
                                .continue_token("nonsense"),
                        )
                        .await;
                    r.check(
                        "a token the server did not issue",
                        outcome(&bad),
                        json!({"code": 400, "reason": "BadRequest"}),
                    );
                    r
                })
            },
        },
        Case {
            name: "namespaces_must_exist",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let missing = a.name("missing");
                    let elsewhere: Api<ConfigMap> = Api::namespaced(a.client.clone(), &missing);
                    let refused = elsewhere
                        .create(&PostParams::default(), &a.map("m", &[]))
                        .await;
                    r.check(
                        "create in a missing namespace",
                        outcome(&refused),
                        json!({"code": 404, "reason": "NotFound"}),
                    );
                    r.check(
                        "message",
                        message(&refused),
                        json!(format!("namespaces \"{missing}\" not found")),
                    );
                    let namespaces: Api<Namespace> = Api::all(a.client.clone());
                    let mut ns = Namespace::default();
                    ns.metadata.name = Some(a.name("ns"));
                    let made = namespaces
                        .create(&PostParams::default(), &ns)
                        .await
                        .expect("namespace");
                    r.check(
                        "phase",
                        json!(made.status.as_ref().and_then(|s| s.phase.clone())),
                        json!("Active"),
                    );
                    r.check(
                        "spec finalizers",
                        json!(made.spec.as_ref().and_then(|s| s.finalizers.clone())),
                        json!(["kubernetes"]),
                    );
                    r.check(
                        "name label",
                        json!(made.labels().get("kubernetes.io/metadata.name")),
                        json!(a.name("ns")),
                    );
                    let inside: Api<ConfigMap> = Api::namespaced(a.client.clone(), &a.name("ns"));
                    let created = inside
                        .create(&PostParams::default(), &a.map("m", &[]))
                        .await;
                    r.check(
                        "create in the new namespace",
                        outcome(&created),
                        json!("ok"),
                    );
                    let system = namespaces.get("kube-system").await;
                    r.check("kube-system exists", outcome(&system), json!("ok"));
                    r
                })
            },
        },
        Case {
            name: "update_bumps_generation_and_refuses_a_stale_resource_version",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let created = a.create(&a.widget("a", 1)).await;
                    let mut bigger = created.clone();
                    bigger.spec.size = 2;
                    let updated = a
                        .widgets
                        .replace(&a.name("a"), &PostParams::default(), &bigger)
                        .await
                        .expect("update");
                    r.check(
                        "generation after spec update",
                        generation(&updated),
                        json!(2),
                    );
                    r.holds("resourceVersion grows", rv(&updated) > rv(&created));
                    let mut labelled = updated.clone();
                    labelled.labels_mut().insert("x".into(), "y".into());
                    let labelled = a
                        .widgets
                        .replace(&a.name("a"), &PostParams::default(), &labelled)
                        .await
                        .expect("update");
                    r.check(
                        "generation after label update",
                        generation(&labelled),
                        json!(2),
                    );
                    let stale = a
                        .widgets
                        .replace(&a.name("a"), &PostParams::default(), &bigger)
                        .await;
                    r.check(
                        "stale update",
                        outcome(&stale),
                        json!({"code": 409, "reason": "Conflict"}),
                    );
                    r.check(
                        "stale message",
                        message(&stale),
                        json!(format!(
                            "Operation cannot be fulfilled on widgets.fake.operator-gen.io \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                            a.name("a")
                        )),
                    );
                    let mut unconditional = labelled.clone();
                    unconditional.metadata.resource_version = None;
                    let refused = a
                        .widgets
                        .replace(&a.name("a"), &PostParams::default(), &unconditional)
                        .await;
                    r.check(
                        "custom resource update without resourceVersion",
                        outcome(&refused),
                        json!({"code": 422, "reason": "Invalid"}),
                    );
                    let cm = a
                        .maps
                        .create(&PostParams::default(), &a.map("m", &[]))
                        .await
                        .expect("map");
                    let mut cm2 = cm.clone();
                    cm2.metadata.resource_version = None;
                    cm2.data = Some([("k".to_owned(), "w".to_owned())].into());
                    let replaced = a
                        .maps
                        .replace(&a.name("m"), &PostParams::default(), &cm2)
                        .await;
                    r.check(
                        "configmap update without resourceVersion",
                        outcome(&replaced),
                        json!("ok"),
                    );
                    r.check(
                        "configmap has no generation",
                        json!(replaced.ok().and_then(|c| c.metadata.generation)),
                        Value::Null,
                    );
                    r
                })
            },
        },
        Case {
            name: "status_subresource_is_written_apart",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    a.create(&a.widget("a", 1)).await;
                    let name = a.name("a");
                    let status = a
                        .widgets
                        .patch_status(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(
                                json!({"status": {"phase": "Ready"}, "spec": {"size": 9}}),
                            ),
                        )
                        .await
                        .expect("patch status");
                    r.check(
                        "status written",
                        json!(status.status.as_ref().and_then(|s| s.phase.clone())),
                        json!("Ready"),
                    );
                    r.check(
                        "spec kept by a status write",
                        json!(status.spec.size),
                        json!(1),
                    );
                    r.check(
                        "generation kept by a status write",
                        generation(&status),
                        json!(1),
                    );
                    let main = a
                        .widgets
                        .patch(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"status": {"phase": "Ignored"}})),
                        )
                        .await
                        .expect("patch");
                    r.check(
                        "status kept by an object write",
                        json!(main.status.as_ref().and_then(|s| s.phase.clone())),
                        json!("Ready"),
                    );
                    r.holds(
                        "a no-op write keeps the resourceVersion",
                        rv(&main) == rv(&status),
                    );
                    let mut replaced = main.clone();
                    replaced.status = Some(WidgetStatus {
                        phase: Some("Done".into()),
                        ..Default::default()
                    });
                    let replaced = a
                        .widgets
                        .replace_status(&name, &PostParams::default(), &replaced)
                        .await
                        .expect("replace status");
                    r.check(
                        "status replaced",
                        json!(replaced.status.as_ref().and_then(|s| s.phase.clone())),
                        json!("Done"),
                    );
                    let no_status = a
                        .maps
                        .create(&PostParams::default(), &a.map("m", &[]))
                        .await
                        .expect("map");
                    let missing = a
                        .maps
                        .patch_status(
                            &no_status.name_any(),
                            &PatchParams::default(),
                            &Patch::Merge(json!({"data": {"k": "x"}})),
                        )
                        .await;
                    r.check(
                        "configmaps have no status subresource",
                        outcome(&missing),
                        json!({"code": 404, "reason": "NotFound"}),
                    );
                    r
                })
            },
        },
        Case {
            name: "merge_patch_sets_and_removes_fields",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let mut w = a.widget("a", 1);
                    w.spec.color = Some("red".into());
                    let created = a.create(&w).await;
                    let name = a.name("a");
                    let patched = a
                        .widgets
                        .patch(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"spec": {"size": 3, "color": null}, "metadata": {"labels": {"p": "q"}}})),
                        )
                        .await
                        .expect("patch");
                    r.check("size", json!(patched.spec.size), json!(3));
                    r.check("color removed", json!(patched.spec.color), Value::Null);
                    r.check("label", json!(patched.labels().get("p")), json!("q"));
                    r.check("generation", generation(&patched), json!(2));
                    let stale = a
                        .widgets
                        .patch(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"metadata": {"resourceVersion": created.resource_version()}, "spec": {"size": 4}})),
                        )
                        .await;
                    r.check(
                        "stale resourceVersion in a patch",
                        outcome(&stale),
                        json!({"code": 409, "reason": "Conflict"}),
                    );
                    let missing = a
                        .widgets
                        .patch(
                            &a.name("none"),
                            &PatchParams::default(),
                            &Patch::Merge(json!({"spec": {"size": 4}})),
                        )
                        .await;
                    r.check(
                        "patch of a missing object",
                        outcome(&missing),
                        json!({"code": 404, "reason": "NotFound"}),
                    );
                    r
                })
            },
        },
        Case {
            name: "json_patch_operations",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let mut w = a.widget("a", 1);
                    w.spec.tags = vec!["x".into()];
                    a.create(&w).await;
                    let name = a.name("a");
                    let ops: json_patch::Patch = serde_json::from_value(json!([
                        {"op": "test", "path": "/spec/size", "value": 1},
                        {"op": "replace", "path": "/spec/size", "value": 5},
                        {"op": "add", "path": "/spec/tags/-", "value": "y"},
                        {"op": "add", "path": "/spec/color", "value": "blue"},
                        {"op": "copy", "from": "/spec/color", "path": "/metadata/labels/color"},
                        {"op": "move", "from": "/spec/tags/0", "path": "/spec/tags/1"},
                        {"op": "remove", "path": "/metadata/labels/case"},
                    ]))
                    .expect("ops");
                    let patched = a
                        .widgets
                        .patch(&name, &PatchParams::default(), &Patch::Json::<()>(ops))
                        .await
                        .expect("json patch");
                    r.check("size", json!(patched.spec.size), json!(5));
                    r.check("tags", json!(patched.spec.tags), json!(["y", "x"]));
                    r.check("color", json!(patched.spec.color), json!("blue"));
                    r.check("labels", json!(patched.labels()), json!({"color": "blue"}));
                    let failing: json_patch::Patch = serde_json::from_value(json!([
                        {"op": "test", "path": "/spec/size", "value": 1},
                        {"op": "replace", "path": "/spec/size", "value": 6},
                    ]))
                    .expect("ops");
                    let refused = a
                        .widgets
                        .patch(&name, &PatchParams::default(), &Patch::Json::<()>(failing))
                        .await;
                    r.check(
                        "failing test",
                        outcome(&refused),
                        json!({"code": 422, "reason": "Invalid"}),
                    );
                    let kept = a.widgets.get(&name).await.expect("get");
                    r.check(
                        "nothing written by a failed patch",
                        json!(kept.spec.size),
                        json!(5),
                    );
                    let absent: json_patch::Patch = serde_json::from_value(json!([
                        {"op": "test", "path": "/metadata/finalizers", "value": null},
                        {"op": "add", "path": "/metadata/finalizers", "value": ["fake.operator-gen.io/f"]},
                    ]))
                    .expect("ops");
                    let added = a
                        .widgets
                        .patch(&name, &PatchParams::default(), &Patch::Json::<()>(absent))
                        .await;
                    r.check(
                        "test of an absent field against null",
                        json!(added.map(|w| w.finalizers().to_vec()).ok()),
                        json!(["fake.operator-gen.io/f"]),
                    );
                    let present: json_patch::Patch = serde_json::from_value(json!([
                        {"op": "test", "path": "/metadata/finalizers", "value": null},
                    ]))
                    .expect("ops");
                    let refused = a
                        .widgets
                        .patch(&name, &PatchParams::default(), &Patch::Json::<()>(present))
                        .await;
                    r.check(
                        "test of a present field against null",
                        outcome(&refused),
                        json!({"code": 422, "reason": "Invalid"}),
                    );
                    let cleared: json_patch::Patch = serde_json::from_value(json!([
                        {"op": "remove", "path": "/metadata/finalizers"},
                    ]))
                    .expect("ops");
                    a.widgets
                        .patch(&name, &PatchParams::default(), &Patch::Json::<()>(cleared))
                        .await
                        .expect("finalizer removed");
                    r
                })
            },
        },
        Case {
            name: "server_side_apply_owns_and_conflicts",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let name = a.name("a");
                    let applied = |size: i32, color: Option<&str>| {
                        let mut spec = json!({"size": size});
                        if let Some(c) = color {
                            spec["color"] = json!(c);
                        }
                        Patch::Apply(json!({
                            "apiVersion": "fake.operator-gen.io/v1", "kind": "Widget",
                            "metadata": {"name": name},
                            "spec": spec,
                        }))
                    };
                    let first = a
                        .widgets
                        .patch(
                            &name,
                            &PatchParams::apply("owner-a"),
                            &applied(1, Some("red")),
                        )
                        .await;
                    r.check("apply creates", outcome(&first), json!("ok"));
                    let first = first.expect("apply");
                    r.check("created generation", generation(&first), json!(1));
                    r.check(
                        "managers",
                        json!(
                            first
                                .managed_fields()
                                .iter()
                                .map(|m| (m.manager.clone(), m.operation.clone()))
                                .collect::<Vec<_>>()
                        ),
                        json!([["owner-a", "Apply"]]),
                    );
                    let shared = a
                        .widgets
                        .patch(&name, &PatchParams::apply("owner-b"), &applied(1, None))
                        .await;
                    r.check("same value is shared", outcome(&shared), json!("ok"));
                    let clash = a
                        .widgets
                        .patch(&name, &PatchParams::apply("owner-b"), &applied(2, None))
                        .await;
                    r.check(
                        "conflict",
                        outcome(&clash),
                        json!({"code": 409, "reason": "Conflict"}),
                    );
                    r.check(
                        "conflict message",
                        message(&clash),
                        json!(
                            "Apply failed with 1 conflict: conflict with \"owner-a\": .spec.size"
                        ),
                    );
                    let forced = a
                        .widgets
                        .patch(
                            &name,
                            &PatchParams::apply("owner-b").force(),
                            &applied(2, None),
                        )
                        .await
                        .expect("forced apply");
                    r.check("forced size", json!(forced.spec.size), json!(2));
                    r.check("color kept", json!(forced.spec.color), json!("red"));
                    let dropped = a
                        .widgets
                        .patch(&name, &PatchParams::apply("owner-a"), &applied(2, None))
                        .await
                        .expect("apply without color");
                    r.check(
                        "a field its manager stops applying goes",
                        json!(dropped.spec.color),
                        Value::Null,
                    );
                    let back = a
                        .widgets
                        .patch(&name, &PatchParams::apply("owner-a"), &applied(3, None))
                        .await;
                    r.check(
                        "conflict the other way",
                        message(&back),
                        json!(
                            "Apply failed with 1 conflict: conflict with \"owner-b\": .spec.size"
                        ),
                    );
                    a.widgets
                        .patch(
                            &name,
                            &PatchParams {
                                field_manager: Some("editor".into()),
                                ..Default::default()
                            },
                            &Patch::Merge(json!({"spec": {"tags": ["t"]}})),
                        )
                        .await
                        .expect("merge patch");
                    let tags = Patch::Apply(json!({
                        "apiVersion": "fake.operator-gen.io/v1", "kind": "Widget",
                        "metadata": {"name": name}, "spec": {"size": 2, "tags": ["u"]},
                    }));
                    let clash = a
                        .widgets
                        .patch(&name, &PatchParams::apply("owner-b"), &tags)
                        .await;
                    r.check(
                        "conflict with an update's manager",
                        message(&clash),
                        json!("Apply failed with 1 conflict: conflict with \"editor\" using fake.operator-gen.io/v1: .spec.tags"),
                    );
                    r
                })
            },
        },
        Case {
            name: "server_side_apply_merges_conditions_by_type",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    a.create(&a.widget("a", 1)).await;
                    let name = a.name("a");
                    let condition = |type_: &str, status: &str| {
                        json!({"type": type_, "status": status, "reason": "Test",
                               "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"})
                    };
                    let apply = |manager: &'static str, status: Value, force: bool| {
                        let widgets = a.widgets.clone();
                        let name = name.clone();
                        async move {
                            let mut params = PatchParams::apply(manager);
                            params.force = force;
                            widgets
                                .patch_status(
                                    &name,
                                    &params,
                                    &Patch::Apply(json!({
                                        "apiVersion": "fake.operator-gen.io/v1", "kind": "Widget",
                                        "status": status,
                                    })),
                                )
                                .await
                        }
                    };
                    let seen = |w: &kube::Result<Widget>| {
                        json!(w.as_ref().ok().map(|w| {
                            w.status
                                .iter()
                                .flat_map(|s| s.conditions.iter())
                                .map(|c| (c.type_.clone(), c.status.clone()))
                                .collect::<Vec<_>>()
                        }))
                    };
                    let one = apply(
                        "ctrl-a",
                        json!({"conditions": [condition("Ready", "True")]}),
                        false,
                    )
                    .await;
                    r.check(
                        "first manager's condition",
                        seen(&one),
                        json!([["Ready", "True"]]),
                    );
                    let two = apply(
                        "ctrl-b",
                        json!({"conditions": [condition("Synced", "False")]}),
                        false,
                    )
                    .await;
                    r.check(
                        "a second manager's condition beside it",
                        seen(&two),
                        json!([["Ready", "True"], ["Synced", "False"]]),
                    );
                    let three = apply(
                        "ctrl-a",
                        json!({"conditions": [condition("Ready", "False")]}),
                        false,
                    )
                    .await;
                    r.check(
                        "the first manager changes its own",
                        seen(&three),
                        json!([["Ready", "False"], ["Synced", "False"]]),
                    );
                    let clash = apply(
                        "ctrl-b",
                        json!({"conditions": [condition("Synced", "False"), condition("Ready", "True")]}),
                        false,
                    )
                    .await;
                    r.check(
                        "the other's condition conflicts",
                        outcome(&clash),
                        json!({"code": 409, "reason": "Conflict"}),
                    );
                    r.check("conflict message", message(&clash), json!("Apply failed with 1 conflict: conflict with \"ctrl-a\" with subresource \"status\": .status.conditions[type=\"Ready\"].status"));
                    let dropped = apply("ctrl-a", json!({"phase": "Up"}), false).await;
                    r.check(
                        "a condition its manager stops applying goes, the other's stays",
                        seen(&dropped),
                        json!([["Synced", "False"]]),
                    );
                    r
                })
            },
        },
        Case {
            name: "server_side_apply_of_status",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    a.create(&a.widget("a", 1)).await;
                    let name = a.name("a");
                    let applied = a
                        .widgets
                        .patch_status(
                            &name,
                            &PatchParams::apply("ctrl").force(),
                            &Patch::Apply(json!({
                                "apiVersion": "fake.operator-gen.io/v1", "kind": "Widget",
                                "status": {"phase": "Ready"}, "spec": {"size": 7},
                            })),
                        )
                        .await
                        .expect("apply status");
                    r.check(
                        "phase",
                        json!(applied.status.as_ref().and_then(|s| s.phase.clone())),
                        json!("Ready"),
                    );
                    r.check("spec untouched", json!(applied.spec.size), json!(1));
                    r.check("generation untouched", generation(&applied), json!(1));
                    let missing = a
                        .widgets
                        .patch_status(
                            &a.name("none"),
                            &PatchParams::apply("ctrl").force(),
                            &Patch::Apply(json!({
                                "apiVersion": "fake.operator-gen.io/v1", "kind": "Widget",
                                "status": {"phase": "Ready"},
                            })),
                        )
                        .await;
                    r.check(
                        "status apply to a missing object",
                        outcome(&missing),
                        json!({"code": 404, "reason": "NotFound"}),
                    );
                    r
                })
            },
        },
        Case {
            name: "delete_without_finalizers_removes_at_once",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    a.create(&a.widget("a", 1)).await;
                    let name = a.name("a");
                    let gone = a.widgets.delete(&name, &DeleteParams::default()).await;
                    r.check(
                        "answer is a Status naming the object",
                        json!(
                            gone.ok()
                                .and_then(|e| e.right())
                                .and_then(|s| s.details)
                                .map(|d| (d.name, d.group, d.kind))
                        ),
                        json!([name, "fake.operator-gen.io", "widgets"]),
                    );
                    r.check(
                        "get after delete",
                        outcome(&a.widgets.get(&name).await),
                        json!({"code": 404, "reason": "NotFound"}),
                    );
                    r.check(
                        "delete again",
                        outcome(&a.widgets.delete(&name, &DeleteParams::default()).await),
                        json!({"code": 404, "reason": "NotFound"}),
                    );
                    let cm = a
                        .maps
                        .create(&PostParams::default(), &a.map("m", &[]))
                        .await
                        .expect("map");
                    let stale = DeleteParams {
                        preconditions: Some(Preconditions {
                            resource_version: Some("1".into()),
                            uid: None,
                        }),
                        ..Default::default()
                    };
                    let refused = a.maps.delete(&cm.name_any(), &stale).await;
                    r.check(
                        "stale precondition",
                        outcome(&refused),
                        json!({"code": 409, "reason": "Conflict"}),
                    );
                    let gone = a
                        .maps
                        .delete(&cm.name_any(), &DeleteParams::default())
                        .await;
                    r.check(
                        "configmap delete answers a Status",
                        json!(gone.as_ref().map(|e| e.is_right()).ok()),
                        json!(true),
                    );
                    r
                })
            },
        },
        Case {
            name: "delete_with_finalizers_waits_for_them",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let mut w = a.widget("a", 1);
                    w.metadata.finalizers = Some(vec!["fake.operator-gen.io/hold".into()]);
                    a.create(&w).await;
                    let name = a.name("a");
                    let marked = a
                        .widgets
                        .delete(&name, &DeleteParams::default())
                        .await
                        .expect("delete");
                    let marked = marked.left().expect("the object, still there");
                    r.holds(
                        "deletionTimestamp set",
                        marked.metadata.deletion_timestamp.is_some(),
                    );
                    r.check(
                        "deletionGracePeriodSeconds",
                        json!(marked.metadata.deletion_grace_period_seconds),
                        json!(0),
                    );
                    r.check(
                        "generation bumped by the marking",
                        generation(&marked),
                        json!(2),
                    );
                    let still = a.widgets.get(&name).await;
                    r.check("still there", outcome(&still), json!("ok"));
                    let ops: json_patch::Patch = serde_json::from_value(json!([
                        {"op": "remove", "path": "/metadata/finalizers/0"},
                    ]))
                    .expect("ops");
                    let released = a
                        .widgets
                        .patch(&name, &PatchParams::default(), &Patch::Json::<()>(ops))
                        .await;
                    r.check("finalizer removed", outcome(&released), json!("ok"));
                    r.check(
                        "gone once the last finalizer goes",
                        outcome(&a.widgets.get(&name).await),
                        json!({"code": 404, "reason": "NotFound"}),
                    );
                    r
                })
            },
        },
        Case {
            name: "delete_collection_by_selector",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let mut held = a.widget("held", 1);
                    held.metadata.finalizers = Some(vec!["fake.operator-gen.io/hold".into()]);
                    a.create(&held).await;
                    a.create(&a.widget("free", 1)).await;
                    let mut kept = a.widget("kept", 1);
                    kept.metadata.labels =
                        Some([("case".to_owned(), "elsewhere".to_owned())].into());
                    a.create(&kept).await;
                    let case = format!("case={}", a.prefix);
                    let answer = a
                        .widgets
                        .delete_collection(
                            &DeleteParams::default(),
                            &ListParams::default().labels(&case),
                        )
                        .await;
                    r.check(
                        "answer lists the deleted objects",
                        json!(
                            answer
                                .ok()
                                .and_then(|e| e.left())
                                .map(|l| sorted_names(l.items))
                        ),
                        json!([a.name("free"), a.name("held")]),
                    );
                    let left = a
                        .widgets
                        .list(&ListParams::default().labels(&case))
                        .await
                        .expect("list");
                    r.check(
                        "what the finalizer holds stays, marked",
                        json!(
                            left.items
                                .iter()
                                .map(|w| (w.name_any(), w.metadata.deletion_timestamp.is_some()))
                                .collect::<Vec<_>>()
                        ),
                        json!([[a.name("held"), true]]),
                    );
                    r.check(
                        "an object the selector leaves out stays",
                        outcome(&a.widgets.get(&a.name("kept")).await),
                        json!("ok"),
                    );
                    let cleared: json_patch::Patch = serde_json::from_value(json!([
                        {"op": "remove", "path": "/metadata/finalizers"},
                    ]))
                    .expect("ops");
                    a.widgets
                        .patch(
                            &a.name("held"),
                            &PatchParams::default(),
                            &Patch::Json::<()>(cleared),
                        )
                        .await
                        .expect("released");
                    r
                })
            },
        },
        Case {
            name: "watch_sees_added_modified_deleted",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let name = a.name("a");
                    let from = a
                        .widgets
                        .list(&ListParams::default().labels(&format!("case={}", a.prefix)))
                        .await
                        .expect("list")
                        .metadata
                        .resource_version
                        .unwrap_or_default();
                    let params = WatchParams::default().fields(&format!("metadata.name={name}"));
                    let events = a.widgets.watch(&params, &from).await.expect("watch");
                    let mut w = a.widget("a", 1);
                    w.metadata.finalizers = Some(vec!["fake.operator-gen.io/hold".into()]);
                    a.create(&w).await;
                    a.widgets
                        .patch(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"spec": {"size": 2}})),
                        )
                        .await
                        .expect("patch");
                    a.widgets
                        .delete(&name, &DeleteParams::default())
                        .await
                        .expect("delete");
                    a.widgets
                        .patch(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
                        )
                        .await
                        .expect("release");
                    a.create(&a.widget("other", 1)).await;
                    let seen: Vec<(String, i64, bool)> = tokio::time::timeout(
                        Duration::from_secs(20),
                        events
                            .filter_map(|e| async move {
                                match e {
                                    Ok(WatchEvent::Added(w)) => Some(("ADDED", w)),
                                    Ok(WatchEvent::Modified(w)) => Some(("MODIFIED", w)),
                                    Ok(WatchEvent::Deleted(w)) => Some(("DELETED", w)),
                                    _ => None,
                                }
                            })
                            .map(|(kind, w)| {
                                (
                                    kind.to_owned(),
                                    w.spec.size as i64,
                                    w.metadata.deletion_timestamp.is_some(),
                                )
                            })
                            .take(4)
                            .collect(),
                    )
                    .await
                    .unwrap_or_default();
                    r.check(
                        "events: type, spec.size, being deleted",
                        json!(seen),
                        json!([
                            ["ADDED", 1, false],
                            ["MODIFIED", 2, false],
                            ["MODIFIED", 2, true],
                            ["DELETED", 2, true],
                        ]),
                    );
                    let replay = a.widgets.watch(&params, &from).await.expect("watch");
                    let again: Vec<String> = tokio::time::timeout(
                        Duration::from_secs(20),
                        replay
                            .try_filter_map(|e| async move {
                                Ok(match e {
                                    WatchEvent::Added(_) => Some("ADDED".to_owned()),
                                    WatchEvent::Modified(_) => Some("MODIFIED".to_owned()),
                                    WatchEvent::Deleted(_) => Some("DELETED".to_owned()),
                                    _ => None,
                                })
                            })
                            .take(4)
                            .try_collect(),
                    )
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or_default();
                    r.check(
                        "replayed from the list's resourceVersion",
                        json!(again),
                        json!(["ADDED", "MODIFIED", "MODIFIED", "DELETED"]),
                    );
                    r
                })
            },
        },
        Case {
            name: "dry_run_stores_nothing",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let name = a.name("a");
                    let dry = PostParams {
                        dry_run: true,
                        ..Default::default()
                    };
                    let answered = a.widgets.create(&dry, &a.widget("a", 1)).await;
                    r.check("dry-run create answers", outcome(&answered), json!("ok"));
                    r.check(
                        "dry-run create stored nothing",
                        outcome(&a.widgets.get(&name).await),
                        json!({"code": 404, "reason": "NotFound"}),
                    );
                    a.create(&a.widget("a", 1)).await;
                    let patched = a
                        .widgets
                        .patch(
                            &name,
                            &PatchParams::default().dry_run(),
                            &Patch::Merge(json!({"spec": {"size": 8}})),
                        )
                        .await
                        .expect("dry-run patch");
                    r.check(
                        "dry-run patch answers the change",
                        json!(patched.spec.size),
                        json!(8),
                    );
                    let kept = a.widgets.get(&name).await.expect("get");
                    r.check(
                        "dry-run patch stored nothing",
                        json!(kept.spec.size),
                        json!(1),
                    );
                    r
                })
            },
        },
        Case {
            name: "watch_from_zero_lists_current_objects_first",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    a.create(&a.widget("a", 1)).await;
                    a.create(&a.widget("b", 2)).await;
                    let params = WatchParams::default().labels(&format!("case={}", a.prefix));
                    let events = a.widgets.watch(&params, "0").await.expect("watch");
                    let mut seen: Vec<(String, String)> = tokio::time::timeout(
                        Duration::from_secs(20),
                        events
                            .filter_map(|e| async move {
                                match e {
                                    Ok(WatchEvent::Added(w)) => {
                                        Some(("ADDED".to_owned(), w.name_any()))
                                    }
                                    _ => None,
                                }
                            })
                            .take(2)
                            .collect::<Vec<_>>(),
                    )
                    .await
                    .unwrap_or_default();
                    seen.sort();
                    r.check(
                        "initial events",
                        json!(seen),
                        json!([["ADDED", a.name("a")], ["ADDED", a.name("b")]]),
                    );
                    r
                })
            },
        },
        Case {
            name: "watch_by_label_sees_objects_enter_and_leave",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let name = a.name("m");
                    let cm = a
                        .maps
                        .create(&PostParams::default(), &a.map("m", &[]))
                        .await
                        .expect("map");
                    let selector = format!("case={},phase=on", a.prefix);
                    let params = WatchParams::default().labels(&selector);
                    let events = a
                        .maps
                        .watch(&params, cm.resource_version().as_deref().unwrap_or("0"))
                        .await
                        .expect("watch");
                    for phase in [json!("on"), json!("on"), json!(null)] {
                        let patch = json!({"metadata": {"labels": {"phase": phase}},
                                           "data": {"n": format!("{}", rv(&cm))}});
                        a.maps
                            .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                            .await
                            .expect("label change");
                        a.maps
                            .patch(
                                &name,
                                &PatchParams::default(),
                                &Patch::Merge(
                                    json!({"data": {"touch": phase.is_null().to_string()}}),
                                ),
                            )
                            .await
                            .expect("touch");
                    }
                    let seen: Vec<String> = tokio::time::timeout(
                        Duration::from_secs(20),
                        events
                            .filter_map(|e| async move {
                                match e {
                                    Ok(WatchEvent::Added(_)) => Some("ADDED".to_owned()),
                                    Ok(WatchEvent::Modified(_)) => Some("MODIFIED".to_owned()),
                                    Ok(WatchEvent::Deleted(_)) => Some("DELETED".to_owned()),
                                    _ => None,
                                }
                            })
                            .take(3)
                            .collect(),
                    )
                    .await
                    .unwrap_or_default();
                    r.check(
                        "events as the labels enter and leave the selector",
                        json!(seen),
                        json!(["ADDED", "MODIFIED", "DELETED"]),
                    );
                    r
                })
            },
        },
        Case {
            name: "server_side_apply_conflicts_on_several_fields",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let name = a.name("a");
                    let applied = |size: i32, color: &str| {
                        Patch::Apply(json!({
                            "apiVersion": "fake.operator-gen.io/v1", "kind": "Widget",
                            "metadata": {"name": name},
                            "spec": {"size": size, "color": color},
                        }))
                    };
                    a.widgets
                        .patch(&name, &PatchParams::apply("owner-a"), &applied(1, "red"))
                        .await
                        .expect("apply");
                    let clash = a
                        .widgets
                        .patch(&name, &PatchParams::apply("owner-b"), &applied(2, "blue"))
                        .await;
                    r.check(
                        "conflict",
                        outcome(&clash),
                        json!({"code": 409, "reason": "Conflict"}),
                    );
                    r.check(
                        "conflict message",
                        message(&clash),
                        json!("Apply failed with 2 conflicts: conflicts with \"owner-a\":\n- .spec.color\n- .spec.size"),
                    );
                    r
                })
            },
        },
        Case {
            name: "a_deployment_has_generation_and_status",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let deployments: Api<Deployment> = Api::namespaced(a.client.clone(), NS);
                    let name = a.name("d");
                    let deployment: Deployment = serde_json::from_value(json!({
                        "metadata": {"name": name},
                        "spec": {
                            "replicas": 1,
                            "selector": {"matchLabels": {"app": name}},
                            "template": {
                                "metadata": {"labels": {"app": name}},
                                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                            },
                        },
                    }))
                    .expect("deployment");
                    let made = deployments
                        .create(&PostParams::default(), &deployment)
                        .await
                        .expect("create");
                    r.check("generation", json!(made.metadata.generation), json!(1));
                    let scaled = deployments
                        .patch(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"spec": {"replicas": 2}})),
                        )
                        .await
                        .expect("scale");
                    r.check(
                        "generation after a spec patch",
                        json!(scaled.metadata.generation),
                        json!(2),
                    );
                    let status = deployments
                        .patch_status(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(
                                json!({"status": {"observedGeneration": 2, "replicas": 2}}),
                            ),
                        )
                        .await
                        .expect("status");
                    r.check(
                        "status written, generation kept",
                        json!([
                            status.metadata.generation,
                            status.status.as_ref().and_then(|s| s.observed_generation)
                        ]),
                        json!([2, 2]),
                    );
                    r
                })
            },
        },
        Case {
            name: "events_of_both_groups",
            run: |a| {
                Box::pin(async move {
                    let mut r = Rec::default();
                    let widget = a.create(&a.widget("a", 1)).await;
                    let reporter = Reporter {
                        controller: "fake-table".into(),
                        instance: None,
                    };
                    let recorder = Recorder::new(a.client.clone(), reporter);
                    let note = format!("{} is ready", widget.name_any());
                    let event = operator_gen_runtime::controller::normal_event(
                        "Reconciled",
                        note.clone(),
                        "Reconcile",
                    );
                    recorder
                        .publish(&event, &widget.object_ref(&()))
                        .await
                        .expect("publish");
                    let events: Api<Event> = Api::namespaced(a.client.clone(), NS);
                    // the events.k8s.io Events about the widget
                    let widget_events = async || {
                        events
                            .list(&ListParams::default())
                            .await
                            .expect("list events")
                            .items
                            .into_iter()
                            .filter(|e| {
                                e.regarding.as_ref().and_then(|o| o.name.clone())
                                    == Some(widget.name_any())
                            })
                    };
                    let found: Vec<Value> = widget_events()
                        .await
                        .map(|e| json!([e.reason, e.note, e.type_, e.reporting_controller]))
                        .collect();
                    r.check(
                        "published event",
                        json!(found),
                        json!([["Reconciled", note, "Normal", "fake-table"]]),
                    );
                    // published again within six minutes: the same Event, its series patched
                    recorder
                        .publish(&event, &widget.object_ref(&()))
                        .await
                        .expect("publish again");
                    let series: Vec<Value> = widget_events()
                        .await
                        .map(|e| {
                            json!([
                                e.reason,
                                e.series.as_ref().map(|s| s.count),
                                e.series.is_some_and(
                                    |s| Some(&s.last_observed_time) >= e.event_time.as_ref()
                                )
                            ])
                        })
                        .collect();
                    r.check(
                        "a repeat is the event's series",
                        json!(series),
                        json!([["Reconciled", 2, true]]),
                    );
                    let core: Api<CoreEvent> = Api::namespaced(a.client.clone(), NS);
                    let as_core: Vec<Value> = core
                        .list(&ListParams::default())
                        .await
                        .expect("list core events")
                        .items
                        .into_iter()
                        .filter(|e| e.involved_object.name.as_deref() == Some(&widget.name_any()))
                        .map(|e| {
                            json!([
                                e.reason,
                                e.message,
                                e.type_,
                                e.reporting_component,
                                e.involved_object.kind
                            ])
                        })
                        .collect();
                    r.check(
                        "the published event read as a core Event",
                        json!(as_core),
                        json!([["Reconciled", note, "Normal", "fake-table", "Widget"]]),
                    );
                    let mut old = CoreEvent {
                        involved_object: ObjectReference {
                            name: Some(widget.name_any()),
                            namespace: Some(NS.into()),
                            kind: Some("Widget".into()),
                            ..Default::default()
                        },
                        reason: Some("Legacy".into()),
                        message: Some("core v1".into()),
                        type_: Some("Normal".into()),
                        ..Default::default()
                    };
                    old.metadata.name = Some(a.name("core"));
                    core.create(&PostParams::default(), &old)
                        .await
                        .expect("core event");
                    let got = core.get(&a.name("core")).await.expect("get core event");
                    r.check(
                        "core event",
                        json!([got.reason, got.message, got.involved_object.name]),
                        json!(["Legacy", "core v1", widget.name_any()]),
                    );
                    let as_new = events.get(&a.name("core")).await;
                    r.check(
                        "the core Event read through events.k8s.io",
                        json!(as_new.ok().map(|e| json!([
                            e.reason,
                            e.note,
                            e.regarding.and_then(|o| o.name)
                        ]))),
                        json!(["Legacy", "core v1", widget.name_any()]),
                    );
                    r
                })
            },
        },
    ]
}

/// Runs every case against `client`; returns each case's record.
async fn run_table(client: &Client) -> Vec<(&'static str, Rec)> {
    let mut out = Vec::new();
    for case in cases() {
        let rec = (case.run)(Apis::new(client.clone(), case.name)).await;
        out.push((case.name, rec));
    }
    out
}

fn excused(case: &str) -> Option<&'static str> {
    EXCEPTIONS
        .iter()
        .find(|(name, _)| *name == case)
        .map(|(_, why)| *why)
}

fn fake() -> FakeApi {
    FakeApi::new().with_crd(&Widget::crd())
}

/// Every case's expectations hold on the fake (needs no control plane, so it always runs).
#[tokio::test]
async fn the_fake_meets_the_behaviour_table() {
    let fake = fake();
    let results = run_table(&fake.client()).await;
    let mut failures = Vec::new();
    for (name, rec) in &results {
        if !rec.wrong.is_empty() && excused(name).is_none() {
            failures.push(format!("{name}:\n  {}", rec.wrong.join("\n  ")));
        }
    }
    assert!(
        failures.is_empty(),
        "the fake misses:\n{}",
        failures.join("\n")
    );
    let names: Vec<&str> = results.iter().map(|(n, _)| *n).collect();
    for verb in [
        "create_with_generate_name",
        "list_with_label_selectors",
        "list_with_field_selectors",
        "merge_patch_sets_and_removes_fields",
        "json_patch_operations",
        "server_side_apply_owns_and_conflicts",
        "status_subresource_is_written_apart",
        "delete_with_finalizers_waits_for_them",
        "watch_sees_added_modified_deleted",
    ] {
        assert!(names.contains(&verb), "the table lost the case {verb}");
    }
}

/// The same table against a real kube-apiserver: every expectation holds there too, and the
/// fake records what the apiserver records, case for case, except the rows of [`EXCEPTIONS`].
#[tokio::test]
async fn the_fake_and_the_apiserver_agree_on_the_behaviour_table() {
    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    record_ran(Ran::Apiserver);
    plane
        .install_crds(&[Widget::crd()], Duration::from_secs(60))
        .await
        .expect("the table's CRD is Established");
    let real = run_table(&plane.client()).await;
    let fake = run_table(&fake().client()).await;
    let mut failures = Vec::new();
    let mut compared = 0;
    for ((name, real), (_, fake)) in real.iter().zip(&fake) {
        if !real.wrong.is_empty() {
            failures.push(format!(
                "{name}: the apiserver misses the table's expectations (the table is wrong):\n  {}",
                real.wrong.join("\n  ")
            ));
        }
        let agree = real.seen == fake.seen && fake.wrong.is_empty();
        match (excused(name), agree) {
            (Some(why), true) => failures.push(format!(
                "{name}: excused ({why}) but the fake agrees now: drop the exception"
            )),
            (Some(why), false) => eprintln!("exception {name}: {why}"),
            (None, true) => compared += 1,
            (None, false) => {
                let diff: Vec<String> = real
                    .seen
                    .iter()
                    .zip(&fake.seen)
                    .filter(|(r, f)| r != f)
                    .map(|(r, f)| format!("{}: apiserver {}, fake {}", r.0, r.1, f.1))
                    .collect();
                failures.push(format!(
                    "{name}: the fake differs from the apiserver:\n  {}\n  {}",
                    diff.join("\n  "),
                    fake.wrong.join("\n  ")
                ));
            }
        }
    }
    eprintln!(
        "fake/real behaviour table: {compared} cases compared, {} exceptions",
        EXCEPTIONS.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(compared + EXCEPTIONS.len(), cases().len());
}
