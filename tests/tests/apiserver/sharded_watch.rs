//! Sharded controllers against a real kube-apiserver: the runtime's shards are the apiserver's
//! (hash, ranges and selector syntax, judged by the apiserver's own Go code), a replica's list
//! and watch requests carry its shard's `shardSelector` where the apiserver honours it (read
//! from the audit log), and each replica's cache holds exactly its shard's objects, whether the
//! apiserver or the client keeps to the shard.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ObjectMeta, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use operator_gen_envtest::{ControlPlane, Settings, require_assets};
use operator_gen_runtime::controller::generation_changed_from;
use operator_gen_runtime::shard::{self, Shard, ShardKey};
use operator_gen_runtime::watch::{Lists, Source};
use operator_gen_tests::{audit, cli, tools};

const SHARDS: u32 = 3;
const OBJECTS: usize = 60;

/// Audits every list and watch of ConfigMaps, nothing else.
const AUDIT_POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n\
- level: Metadata\n  resources: [{group: \"\", resources: [configmaps]}]\n  verbs: [list, watch]\n\
- level: None\n";

/// The `n`th of a fixed series of version 4 UUIDs (splitmix64), as the apiserver gives objects.
fn uuid(n: u64) -> String {
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let (a, b) = (
        mix(n.wrapping_mul(2).wrapping_add(0x9e37_79b9_7f4a_7c15)),
        mix(n.wrapping_mul(2).wrapping_add(1)),
    );
    let h = format!("{a:016x}{b:016x}");
    format!(
        "{}-{}-4{}-a{}-{}",
        &h[..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..]
    )
}

/// The shards the differential compares: every shard of 2 to 7 by uid, and of 3 by namespace.
fn judged_shards() -> Vec<Shard> {
    let mut shards: Vec<Shard> = (2..=7)
        .flat_map(|count| (0..count).filter_map(move |i| Shard::new(i, count)))
        .collect();
    shards.extend(
        (0..3)
            .filter_map(|i| Shard::new(i, 3))
            .map(|s| s.by(ShardKey::Namespace)),
    );
    shards
}

/// Hashes at and beside every shard's bounds, where rounding and inclusive ends would show.
fn boundary_hashes(shards: &[Shard]) -> BTreeSet<u64> {
    let mut hashes = BTreeSet::from([0, u64::MAX]);
    for shard in shards {
        let (start, end) = shard.range();
        for bound in [start, end] {
            for h in [bound.checked_sub(1), Some(bound), Some(bound + 1)]
                .into_iter()
                .flatten()
            {
                hashes.extend(u64::try_from(h).ok());
            }
        }
    }
    hashes
}

/// Runs `hack/shard` (the apiserver's parser and matcher) on `input`; one line out per line in.
fn go_judge(input: &str) -> Vec<String> {
    let dir = cli::workspace_root().join("hack/shard");
    let mut child = tools::offline_go(Command::new("go").args(["run", "."]))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("go run hack/shard");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), input.as_bytes())
        .expect("write to hack/shard");
    let out = child.wait_with_output().expect("hack/shard runs");
    assert!(
        out.status.success(),
        "hack/shard failed ({}); in CI, .ci/run fills the module cache it reads",
        out.status
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The indices of `shards` that own an object whose uid and namespace are both `value`.
fn owners(shards: &[Shard], value: &str) -> String {
    let obj = ConfigMap {
        metadata: ObjectMeta {
            uid: Some(value.to_owned()),
            namespace: Some(value.to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    let owning: Vec<String> = (0..shards.len())
        .filter(|&i| shards[i].owns(&obj))
        .map(|i| i.to_string())
        .collect();
    owning.join(",")
}

#[test]
fn the_runtime_s_shards_are_the_apiserver_s() {
    if !tools::go_available("hack/shard runs the apiserver's shard selector code") {
        return;
    }
    let shards = judged_shards();
    let values: Vec<String> = (0..500)
        .map(uuid)
        .chain(["", "default", "kube-system", "team-a", "a"].map(String::from))
        .collect();
    let hashes = boundary_hashes(&shards);
    let mut input = String::new();
    for shard in &shards {
        input += &format!("selector {}\n", shard.selector().expect("a selector"));
    }
    for value in &values {
        input += &format!("value {value}\n");
    }
    for hash in &hashes {
        input += &format!("hash 0x{hash:016x}\n");
    }
    let answers = go_judge(&input);
    let mut expected: Vec<String> = shards.iter().map(|_| "ok".to_owned()).collect();
    for value in &values {
        let hash = Shard::hash(value);
        expected.push(format!("0x{hash:016x} {}", owners(&shards, value)));
    }
    for hash in &hashes {
        let holding: Vec<String> = (0..shards.len())
            .filter(|&i| {
                let (start, end) = shards[i].range();
                (start..end).contains(&u128::from(*hash))
            })
            .map(|i| i.to_string())
            .collect();
        expected.push(holding.join(","));
    }
    let inputs: Vec<&str> = input.lines().collect();
    let differences: Vec<String> = (0..expected.len().max(answers.len()))
        .filter(|&i| answers.get(i) != expected.get(i))
        .map(|i| {
            format!(
                "{:?}: apiserver {:?}, runtime {:?}",
                inputs.get(i),
                answers.get(i),
                expected.get(i)
            )
        })
        .collect();
    println!(
        "differential: compared {} selectors, {} objects (hash and owning shards) and {} bound hashes with the apiserver's code; no exceptions",
        shards.len(),
        values.len(),
        hashes.len()
    );
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    tools::record_ran(tools::Ran::GoPeers);
}

/// One replica: a controller of one shard, its cache, and the objects it reconciled.
struct Replica {
    store: Store<ConfigMap>,
    reconciled: Arc<Mutex<BTreeSet<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn start_replica(api: Api<ConfigMap>, lists: Lists, shard: Shard) -> Replica {
    let source = Source::new(api, watcher::Config::default())
        .shard(shard)
        .lists(lists);
    let controller = generation_changed_from(source);
    let store = controller.store();
    let reconciled = Arc::new(Mutex::new(BTreeSet::new()));
    let run = controller.run(
        |obj: Arc<ConfigMap>, seen: Arc<Mutex<BTreeSet<String>>>| async move {
            seen.lock().expect("lock").insert(obj.name_any());
            Ok::<_, kube::Error>(Action::await_change())
        },
        |_, _, _| Action::await_change(),
        reconciled.clone(),
    );
    let task = tokio::spawn(run.for_each(|_| std::future::ready(())));
    Replica {
        store,
        reconciled,
        task,
    }
}

fn cached(replica: &Replica) -> BTreeSet<String> {
    replica.store.state().iter().map(|o| o.name_any()).collect()
}

fn reconciled(replica: &Replica) -> BTreeSet<String> {
    replica.reconciled.lock().expect("lock").clone()
}

/// Creates `namespace` and [`OBJECTS`] ConfigMaps in it; returns the names of each shard's,
/// by the hash of the uid the apiserver gave each.
async fn create_objects(client: &Client, namespace: &str) -> Vec<BTreeSet<String>> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut ns = Namespace::default();
    ns.metadata.name = Some(namespace.to_owned());
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("create the namespace");
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let mut shards = vec![BTreeSet::new(); SHARDS as usize];
    for i in 0..OBJECTS {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(format!("cm-{i:02}"));
        let created = api
            .create(&PostParams::default(), &cm)
            .await
            .expect("create a ConfigMap");
        let hash = Shard::hash(created.metadata.uid.as_deref().expect("a uid"));
        shards[Shard::index_of(hash, SHARDS) as usize].insert(created.name_any());
    }
    shards
}

/// Starts one replica per shard and waits until each has cached and reconciled exactly its
/// shard's objects; asserts that, and that together they hold every object once.
async fn each_replica_holds_its_shard(
    client: &Client,
    namespace: &str,
    lists: Lists,
    expected: &[BTreeSet<String>],
) -> Vec<Replica> {
    let replicas: Vec<Replica> = (0..SHARDS)
        .map(|i| {
            let api = Api::namespaced(client.clone(), namespace);
            start_replica(api, lists, Shard::new(i, SHARDS).expect("shard"))
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline
        && !replicas
            .iter()
            .zip(expected)
            .all(|(r, e)| cached(r) == *e && reconciled(r) == *e)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for (i, (replica, mine)) in replicas.iter().zip(expected).enumerate() {
        assert_eq!(cached(replica), *mine, "the cache of shard {i} of {SHARDS}");
        assert_eq!(reconciled(replica), *mine, "the reconciles of shard {i}");
    }
    let mut all = BTreeSet::new();
    for mine in expected {
        assert!(
            !mine.is_empty(),
            "every shard owns some of 60 objects: {expected:?}"
        );
        assert!(mine.is_disjoint(&all), "shards overlap: {expected:?}");
        all.extend(mine.iter().cloned());
    }
    let names: BTreeSet<String> = (0..OBJECTS).map(|i| format!("cm-{i:02}")).collect();
    assert_eq!(all, names);
    replicas
}

/// The list and watch requests of `namespace`'s ConfigMaps in the audit log, each with its
/// verb, the `shardSelector` it carried (empty when none), whether it was the probe (a list of
/// at most one object) and whether it asked for the initial events (a streamed list).
fn audited(plane: &ControlPlane, namespace: &str) -> Vec<(String, String, bool, bool)> {
    let path = plane.audit_log().expect("an audit log");
    let text = std::fs::read_to_string(path).expect("read the audit log");
    let requests = audit::parse_log(&text).expect("the audit log parses");
    requests
        .iter()
        .filter(|r| r.resource == "configmaps" && r.namespace == namespace)
        .map(|r| {
            let query = r.uri.split_once('?').map(|(_, q)| q).unwrap_or_default();
            let params: BTreeMap<String, String> = form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            let selector = params.get("shardSelector").cloned().unwrap_or_default();
            let probe = r.verb == "list" && params.get("limit").map(String::as_str) == Some("1");
            let streamed = params.get("sendInitialEvents").map(String::as_str) == Some("true");
            (r.verb.clone(), selector, probe, streamed)
        })
        .collect()
}

fn selectors() -> Vec<String> {
    (0..SHARDS)
        .map(|i| {
            Shard::new(i, SHARDS)
                .and_then(|s| s.selector())
                .expect("a selector")
        })
        .collect()
}

/// Starts a control plane with `args` and the audit policy, creates the objects in `namespace`,
/// checks that `honours_selector` answers `honoured`, and that 3 replicas filling their caches
/// as `lists` says each hold their shard.
async fn three_replicas(
    args: &[&str],
    namespace: &str,
    honoured: bool,
    lists: Lists,
) -> (ControlPlane, Vec<BTreeSet<String>>, Vec<Replica>) {
    let plane = ControlPlane::start_with(Settings {
        audit_policy: Some(AUDIT_POLICY.to_owned()),
        apiserver_args: args.iter().map(|a| (*a).to_owned()).collect(),
        ..Settings::default()
    })
    .await
    .expect("control plane starts");
    let client = plane.client();
    let expected = create_objects(&client, namespace).await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let shard0 = Shard::new(0, SHARDS).expect("shard");
    assert_eq!(shard::honours_selector(&api, &shard0).await, honoured);
    let replicas = each_replica_holds_its_shard(&client, namespace, lists, &expected).await;
    (plane, expected, replicas)
}

#[tokio::test(flavor = "multi_thread")]
async fn replicas_list_and_watch_only_their_shard_where_the_apiserver_honours_the_selector() {
    require_assets!();
    let namespace = "sharded";
    let (plane, expected, _replicas) = three_replicas(&[], namespace, true, Lists::Paged).await;
    let client = plane.client();

    let requests = audited(&plane, namespace);
    let unselected: Vec<_> = requests
        .iter()
        .filter(|(_, s, _, _)| s.is_empty())
        .collect();
    assert!(
        unselected.is_empty(),
        "list or watch requests without a shard selector: {unselected:?}"
    );
    for selector in selectors() {
        for verb in ["list", "watch"] {
            assert!(
                requests
                    .iter()
                    .any(|(v, s, probe, _)| v == verb && *s == selector && !probe),
                "no {verb} request (other than the probe) with {selector}: {requests:?}"
            );
        }
    }
    // and the apiserver, asked with each shard's selector, names the same objects
    for (selector, mine) in selectors().iter().zip(&expected) {
        assert_eq!(&listed_with(&client, namespace, selector).await, mine);
    }
}

/// The names the apiserver lists in `namespace` for `selector`.
async fn listed_with(client: &Client, namespace: &str, selector: &str) -> BTreeSet<String> {
    let query: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("shardSelector", selector)
        .finish();
    let request = http::Request::get(format!("/api/v1/namespaces/{namespace}/configmaps?{query}"))
        .body(Vec::new())
        .expect("a request");
    let list: serde_json::Value = client.request(request).await.expect("list with a selector");
    assert_eq!(list["metadata"]["shardInfo"]["selector"], selector);
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn replicas_keep_to_their_shard_on_the_client_where_the_apiserver_does_not() {
    require_assets!();
    let namespace = "unsharded";
    let gate_off = ["--feature-gates=ShardedListAndWatch=false"];
    let (plane, _, _replicas) = three_replicas(&gate_off, namespace, false, Lists::Paged).await;

    // only the probes carried a selector; the watchers then listed and watched everything
    let requests = audited(&plane, namespace);
    let selected: Vec<_> = requests
        .iter()
        .filter(|(_, s, probe, _)| !s.is_empty() && !probe)
        .collect();
    assert!(
        selected.is_empty(),
        "requests with a shard selector the apiserver ignores: {selected:?}"
    );
    for verb in ["list", "watch"] {
        assert!(
            requests
                .iter()
                .any(|(v, s, _, _)| v == verb && s.is_empty()),
            "no {verb} request: {requests:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn streamed_lists_carry_the_shard_selector_too() {
    require_assets!();
    let namespace = "streamed";
    let (plane, _, _replicas) = three_replicas(&[], namespace, true, Lists::Streamed).await;

    // the initial list is a watch asking for the initial events, with the shard's selector;
    // no list but the probes
    let requests = audited(&plane, namespace);
    let listed: Vec<_> = requests
        .iter()
        .filter(|(v, _, probe, _)| v == "list" && !probe)
        .collect();
    assert!(listed.is_empty(), "lists besides the probes: {listed:?}");
    for selector in selectors() {
        assert!(
            requests
                .iter()
                .any(|(v, s, _, streamed)| v == "watch" && *s == selector && *streamed),
            "no streamed list with {selector}: {requests:?}"
        );
    }
}
