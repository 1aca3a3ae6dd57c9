//! The runtime's caches hold less, against a real kube-apiserver: a kind the controller only
//! owns is cached as `PartialObjectMetadata` (the apiserver's metadata-only answer), a
//! transform's effect is what the cache holds and what the reconcile gets, and the initial list
//! is a watch with `sendInitialEvents=true` (read from the audit log), or, where the apiserver
//! refuses that (`WatchList` gate off), a list in pages.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Action;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use operator_gen_envtest::{ControlPlane, Settings, require_assets};
use operator_gen_runtime::controller::{generation_changed_from, owns_metadata};
use operator_gen_runtime::watch::Source;
use operator_gen_tests::{audit, standby};

/// How many ConfigMaps (the controller's kind) each test creates.
const OWNERS: usize = 40;
/// How many Secrets (the owned kind), each owned by the ConfigMap of the same number.
const OWNED: usize = 5;
/// The data key the transform drops.
const BIG: &str = "big";

/// Audits every list and watch of ConfigMaps and Secrets, nothing else.
const AUDIT_POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n\
- level: Metadata\n  resources: [{group: \"\", resources: [configmaps, secrets]}]\n  verbs: [list, watch]\n\
- level: None\n";

fn owner_name(i: usize) -> String {
    format!("cm-{i:02}")
}

fn owned_name(i: usize) -> String {
    format!("secret-{i:02}")
}

/// Creates `namespace`, [`OWNERS`] ConfigMaps with the keys `big` and `keep`, and [`OWNED`]
/// Secrets, `secret-NN` owned (controller reference) by `cm-NN`.
async fn create_objects(client: &Client, namespace: &str) {
    standby::create_namespace(client, namespace).await;
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    for i in 0..OWNERS {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(owner_name(i));
        cm.data = Some(BTreeMap::from([
            (BIG.to_owned(), "x".repeat(2000)),
            ("keep".to_owned(), "k".to_owned()),
        ]));
        let created = configmaps
            .create(&PostParams::default(), &cm)
            .await
            .expect("create a ConfigMap");
        if i < OWNED {
            let mut secret = Secret::default();
            secret.metadata.name = Some(owned_name(i));
            secret.metadata.owner_references = Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                name: owner_name(i),
                uid: created.metadata.uid.clone().expect("a uid"),
                controller: Some(true),
                ..OwnerReference::default()
            }]);
            secret.string_data = Some(BTreeMap::from([("password".into(), "hunter2".into())]));
            secrets
                .create(&PostParams::default(), &secret)
                .await
                .expect("create a Secret");
        }
    }
}

/// A controller of `namespace`'s ConfigMaps whose transform drops the key `big`, owning its
/// Secrets by a metadata-only watch; what each reconcile saw.
struct Running {
    configmaps: Store<ConfigMap>,
    secrets: Store<PartialObjectMeta<Secret>>,
    /// Per ConfigMap, the data keys each of its reconciles saw.
    reconciles: Arc<Mutex<BTreeMap<String, Vec<Vec<String>>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn start(client: &Client, namespace: &str) -> Running {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let source = Source::new(api, watcher::Config::default()).transform(|cm: &mut ConfigMap| {
        if let Some(data) = cm.data.as_mut() {
            data.remove(BIG);
        }
    });
    let controller = generation_changed_from(source);
    let configmaps = controller.store();
    let owned = Api::<PartialObjectMeta<Secret>>::namespaced(client.clone(), namespace);
    let (controller, secrets) = owns_metadata(controller, owned, watcher::Config::default());
    let reconciles = Arc::new(Mutex::new(BTreeMap::new()));
    let run = controller.run(
        |cm: Arc<ConfigMap>, seen: Arc<Mutex<BTreeMap<String, Vec<Vec<String>>>>>| async move {
            let keys = cm.data.iter().flat_map(|d| d.keys().cloned()).collect();
            seen.lock()
                .expect("lock")
                .entry(cm.name_any())
                .or_default()
                .push(keys);
            Ok::<_, kube::Error>(Action::await_change())
        },
        |_, _, _| Action::await_change(),
        reconciles.clone(),
    );
    let task = tokio::spawn(run.for_each(|_| std::future::ready(())));
    Running {
        configmaps,
        secrets,
        reconciles,
        task,
    }
}

impl Running {
    fn reconciled(&self) -> BTreeMap<String, Vec<Vec<String>>> {
        self.reconciles.lock().expect("lock").clone()
    }

    fn cached_owners(&self) -> BTreeSet<String> {
        self.configmaps
            .state()
            .iter()
            .map(|o| o.name_any())
            .collect()
    }

    fn cached_owned(&self) -> BTreeSet<String> {
        self.secrets.state().iter().map(|o| o.name_any()).collect()
    }

    /// Waits up to 60 s for `done`.
    async fn wait_for(&self, what: &str, done: impl Fn(&Self) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done(self) {
            assert!(
                Instant::now() < deadline,
                "{what}: reconciled {:?}, cached {:?} and {:?}",
                self.reconciled().keys().collect::<Vec<_>>(),
                self.cached_owners(),
                self.cached_owned()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until every ConfigMap is cached and reconciled and every Secret cached.
    async fn synced(&self) {
        let owners: BTreeSet<String> = (0..OWNERS).map(owner_name).collect();
        let owned: BTreeSet<String> = (0..OWNED).map(owned_name).collect();
        self.wait_for("the initial sync", |r| {
            r.cached_owners() == owners
                && r.reconciled().keys().cloned().collect::<BTreeSet<_>>() == owners
                && r.cached_owned() == owned
        })
        .await;
    }
}

/// The list and watch requests of `namespace`'s `resource` in the audit log: verb, whether it
/// asked for the initial events (a streamed list), and the response code.
fn audited(plane: &ControlPlane, namespace: &str, resource: &str) -> Vec<(String, bool, u16)> {
    let path = plane.audit_log().expect("an audit log");
    let text = std::fs::read_to_string(path).expect("read the audit log");
    let requests = audit::parse_log(&text).expect("the audit log parses");
    requests
        .iter()
        .filter(|r| r.resource == resource && r.namespace == namespace)
        .map(|r| {
            let query = r.uri.split_once('?').map(|(_, q)| q).unwrap_or_default();
            let streamed = form_urlencoded::parse(query.as_bytes())
                .any(|(k, v)| k == "sendInitialEvents" && v == "true");
            (r.verb.clone(), streamed, r.code.unwrap_or_default())
        })
        .collect()
}

async fn plane_with(args: &[&str]) -> ControlPlane {
    ControlPlane::start_with(Settings {
        audit_policy: Some(AUDIT_POLICY.to_owned()),
        apiserver_args: args.iter().map(|a| (*a).to_owned()).collect(),
        ..Settings::default()
    })
    .await
    .expect("control plane starts")
}

#[tokio::test(flavor = "multi_thread")]
async fn owned_kinds_cache_metadata_transforms_shape_the_cache_and_lists_are_streamed() {
    require_assets!();
    let namespace = "lean";
    let plane = plane_with(&[]).await;
    let client = plane.client();
    create_objects(&client, namespace).await;
    let running = start(&client, namespace);
    running.synced().await;

    // the owned kind: the apiserver's metadata-only objects, no data, no managedFields
    for secret in running.secrets.state() {
        let types = secret
            .types
            .as_ref()
            .expect("the answer's apiVersion and kind");
        assert_eq!(
            (types.api_version.as_str(), types.kind.as_str()),
            ("meta.k8s.io/v1", "PartialObjectMetadata"),
            "{secret:?}"
        );
        let json = serde_json::to_value(secret.as_ref()).expect("serialize");
        let fields: BTreeSet<&str> = json
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(fields, BTreeSet::from(["apiVersion", "kind", "metadata"]));
        assert!(secret.metadata.managed_fields.is_none(), "{secret:?}");
        assert_eq!(secret.owner_references().len(), 1, "{secret:?}");
    }
    // the transform: the cache and every reconcile have `keep` only; the apiserver has both
    for cm in running.configmaps.state() {
        let keys: Vec<&String> = cm.data.iter().flat_map(|d| d.keys()).collect();
        assert_eq!(keys, ["keep"], "{}", cm.name_any());
        assert!(cm.metadata.managed_fields.is_none());
    }
    for (name, seen) in running.reconciled() {
        assert!(
            seen.iter().all(|keys| keys == &["keep"]),
            "{name}: {seen:?}"
        );
    }
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let stored = configmaps.get(&owner_name(2)).await.expect("get cm-02");
    assert!(stored.data.is_some_and(|d| d.contains_key(BIG)));

    // a change of an owned Secret wakes its owner; a changed ConfigMap is transformed too
    let before = running.reconciled()[&owner_name(1)].len();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let label = serde_json::json!({ "metadata": { "labels": { "touched": "yes" } } });
    secrets
        .patch(
            &owned_name(1),
            &PatchParams::default(),
            &Patch::Merge(&label),
        )
        .await
        .expect("label a Secret");
    let edit = serde_json::json!({ "metadata": { "labels": { "touched": "yes" } }, "data": { "big": "y" } });
    configmaps
        .patch(
            &owner_name(7),
            &PatchParams::default(),
            &Patch::Merge(&edit),
        )
        .await
        .expect("edit a ConfigMap");
    running
        .wait_for("the owner woken by its Secret", |r| {
            r.reconciled()[&owner_name(1)].len() > before
        })
        .await;
    running
        .wait_for("the edited ConfigMap cached", |r| {
            r.configmaps
                .state()
                .iter()
                .any(|cm| cm.name_any() == owner_name(7) && !cm.labels().is_empty())
        })
        .await;
    let edited = running
        .configmaps
        .state()
        .into_iter()
        .find(|cm| cm.name_any() == owner_name(7))
        .expect("cm-07 cached");
    let keys: Vec<&String> = edited.data.iter().flat_map(|d| d.keys()).collect();
    assert_eq!(keys, ["keep"]);

    // both initial lists were watches asking for the initial events; no list at all
    for resource in ["configmaps", "secrets"] {
        let requests = audited(&plane, namespace, resource);
        assert!(
            requests
                .iter()
                .any(|(verb, streamed, code)| verb == "watch" && *streamed && *code == 200),
            "no streamed list of {resource}: {requests:?}"
        );
        let listed: Vec<_> = requests.iter().filter(|(v, _, _)| v == "list").collect();
        assert!(listed.is_empty(), "{resource} listed: {listed:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn lists_fall_back_to_pages_where_the_apiserver_does_not_stream_them() {
    require_assets!();
    let namespace = "paged";
    let plane = plane_with(&["--feature-gates=WatchList=false"]).await;
    let client = plane.client();
    create_objects(&client, namespace).await;
    let running = start(&client, namespace);
    running.synced().await;

    // each watch asked for the initial events once, was refused, and listed instead
    for resource in ["configmaps", "secrets"] {
        let requests = audited(&plane, namespace, resource);
        let refused: Vec<_> = requests
            .iter()
            .filter(|(verb, streamed, _)| verb == "watch" && *streamed)
            .collect();
        assert_eq!(
            refused,
            [&("watch".to_owned(), true, 422)],
            "{resource}: {requests:?}"
        );
        for verb in ["list", "watch"] {
            assert!(
                requests
                    .iter()
                    .any(|(v, streamed, code)| v == verb && !streamed && *code == 200),
                "no plain {verb} of {resource}: {requests:?}"
            );
        }
    }
}
