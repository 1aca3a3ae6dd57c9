//! Safe hand-off between the Leases of shards that overlap: of the replicas holding the Leases of
//! one group (every shard Lease of one `--leader-election-id`, whatever the shard count), two
//! whose shards can hold one object never run their controllers at once.
//!
//! Each Lease of the group carries the label [`GROUP_LABEL`] and annotations naming its group, its
//! shard key and its hash range. A replica that holds its Lease does not start its controllers
//! yet: it lists the group's Leases (no mark is written while an overlapping one visibly
//! blocks), marks its Lease as reconciling ([`RECONCILING_ANNOTATION`], its identity, written with
//! the Lease's `resourceVersion`), then lists the group's Leases. If another Lease that overlaps
//! its own is held, marked by its current holder, and not expired (unchanged for its lease
//! duration, on this replica's monotonic clock, since this replica first saw it so), it clears
//! its mark and tries again after a (jittered) retry period, or when that Lease would expire if
//! sooner, renewing its own Lease meanwhile. Otherwise it starts its controllers, and its mark
//! stays on its Lease until it releases it.
//!
//! Of two replicas marking at once, the one whose mark was written later lists after both marks
//! are stored, so it sees the other's and backs off: at most one proceeds (both may back off,
//! and the jitter parts them). A mark counts only while its value is the Lease's holder, so a
//! replica taking over a dead holder's Lease does not inherit it; releasing the Lease clears it.
//!
//! This module stamps and judges the Leases; the elector (`LeaderElector::gate`) runs the steps.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use tokio::time::Instant;

use crate::shard::{Shard, ShardKey, overlap, parse_range};

/// The label every Lease of a group carries, so that one list finds them: the group's name
/// (the base Lease name) when it is a valid label value, else `g-` and its FNV-1a hash.
pub(crate) const GROUP_LABEL: &str = "operator-gen.dev/lease-group";
/// The annotation naming a Lease's group exactly.
pub(crate) const GROUP_ANNOTATION: &str = "operator-gen.dev/lease-group";
/// The annotation naming the shard key of a Lease's shard: `uid` or `namespace`.
pub(crate) const KEY_ANNOTATION: &str = "operator-gen.dev/shard-key";
/// The annotation holding the hash range of a Lease's shard ([`Shard::range_text`]).
pub(crate) const RANGE_ANNOTATION: &str = "operator-gen.dev/shard-range";
/// The annotation by which a Lease's holder says it reconciles (or is about to): its identity.
pub(crate) const RECONCILING_ANNOTATION: &str = "operator-gen.dev/reconciling";

/// The group a Lease belongs to: the base Lease name, and the shard the Lease is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    pub base: String,
    pub shard: Shard,
}

impl Group {
    /// The value of [`GROUP_LABEL`].
    pub fn label_value(&self) -> String {
        let valid = |v: &str| {
            v.len() <= 63
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
                && v.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
                && v.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric())
        };
        if valid(&self.base) {
            self.base.clone()
        } else {
            format!("g-{:016x}", Shard::hash(&self.base))
        }
    }

    /// Writes the group's label and annotations on `meta`, and the mark `reconciling` (or
    /// removes it).
    pub fn stamp(&self, meta: &mut ObjectMeta, reconciling: Option<&str>) {
        meta.labels
            .get_or_insert_with(BTreeMap::new)
            .insert(GROUP_LABEL.to_owned(), self.label_value());
        let annotations = meta.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(GROUP_ANNOTATION.to_owned(), self.base.clone());
        annotations.insert(
            KEY_ANNOTATION.to_owned(),
            self.shard.key().name().to_owned(),
        );
        annotations.insert(RANGE_ANNOTATION.to_owned(), self.shard.range_text());
        match reconciling {
            Some(me) => annotations.insert(RECONCILING_ANNOTATION.to_owned(), me.to_owned()),
            None => annotations.remove(RECONCILING_ANNOTATION),
        };
    }
}

/// An overlapping Lease whose holder marked it reconciling, not expired when judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Blocker {
    pub lease: String,
    pub holder: String,
    /// When it would expire, if it stays as it is.
    pub expires_in: Duration,
}

/// Each other Lease's `resourceVersion` as last seen, and when it was first seen with it.
#[derive(Default, Debug)]
pub(crate) struct Sightings(HashMap<String, (String, Instant)>);

impl Sightings {
    /// When the Lease `name` was first seen at `version`; `at` if that is now.
    pub fn first_seen(&mut self, name: &str, version: &str, at: Instant) -> Instant {
        match self.0.get(name) {
            Some((seen, first)) if seen == version => *first,
            _ => {
                self.0.insert(name.to_owned(), (version.to_owned(), at));
                at
            }
        }
    }
}

/// The Leases of `leases` that keep the holder of `own` (a Lease of `group`) from reconciling:
/// of the same group (by annotation), not `own`, overlapping (a Lease whose shard cannot be
/// read overlaps), held, marked by their holder, and not expired at `now`, the time the list
/// was asked for. A `resourceVersion` not seen before counts as first seen at `seen_at`, when
/// the answer came; a Lease that declares no duration has `fallback`.
pub(crate) fn blockers(
    group: &Group,
    own: &str,
    leases: &[Lease],
    seen: &mut Sightings,
    seen_at: Instant,
    now: Instant,
    fallback: Duration,
) -> Vec<Blocker> {
    let mine = (group.shard.key(), group.shard.range());
    let mut found = Vec::new();
    for lease in leases {
        let Some(name) = lease.metadata.name.as_deref() else {
            continue;
        };
        let annotation = |key: &str| {
            lease
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .map(String::as_str)
        };
        if name == own || annotation(GROUP_ANNOTATION) != Some(group.base.as_str()) {
            continue;
        }
        let theirs = annotation(KEY_ANNOTATION)
            .and_then(ShardKey::from_name)
            .zip(annotation(RANGE_ANNOTATION).and_then(parse_range));
        if theirs.is_some_and(|theirs| !overlap(mine, theirs)) {
            continue;
        }
        let spec = lease.spec.as_ref();
        let Some(holder) = spec
            .and_then(|s| s.holder_identity.clone())
            .filter(|h| !h.is_empty())
        else {
            continue;
        };
        if annotation(RECONCILING_ANNOTATION) != Some(holder.as_str()) {
            continue;
        }
        let version = lease
            .metadata
            .resource_version
            .as_deref()
            .unwrap_or_default();
        let first = seen.first_seen(name, version, seen_at);
        let duration = match spec.and_then(|s| s.lease_duration_seconds) {
            Some(seconds) if seconds > 0 => Duration::from_secs(u64::from(seconds.unsigned_abs())),
            _ => fallback,
        };
        // as the elector judges its own Lease: unchanged for its duration since first seen
        if now.saturating_duration_since(first) >= duration {
            continue;
        }
        found.push(Blocker {
            lease: name.to_owned(),
            holder,
            expires_in: (first + duration).saturating_duration_since(now),
        });
    }
    found
}

/// How the wait for overlapping shards ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Gate {
    /// No overlapping shard reconciles, and this replica's Lease is marked: start.
    Proceed,
    /// Shutdown was asked for while waiting.
    Stopped,
    /// This replica lost its own Lease while waiting.
    Lost,
}

pub(crate) fn names(blockers: &[Blocker]) -> String {
    let named: Vec<String> = blockers
        .iter()
        .map(|b| format!("{} (held by {})", b.lease, b.holder))
        .collect();
    named.join(", ")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use k8s_openapi::api::coordination::v1::LeaseSpec;

    use super::*;
    use crate::manager::fake_api::FakeApi;
    use crate::manager::{Manager, ManagerOptions};
    use tokio_util::sync::CancellationToken;

    const D: Duration = Duration::from_secs(15);

    fn shard(index: u32, count: u32) -> Shard {
        Shard::new(index, count).expect("shard")
    }

    fn group(shard: Shard) -> Group {
        Group {
            base: "p-leader".into(),
            shard,
        }
    }

    /// The Lease of `shard` in the group `p-leader`, held by `holder`, marked by `mark`.
    fn lease(shard: Shard, holder: Option<&str>, mark: Option<&str>, version: &str) -> Lease {
        let mut meta = ObjectMeta {
            name: Some(shard.lease_name("p-leader")),
            resource_version: Some(version.into()),
            ..ObjectMeta::default()
        };
        group(shard).stamp(&mut meta, mark);
        Lease {
            metadata: meta,
            spec: Some(LeaseSpec {
                holder_identity: holder.map(str::to_owned),
                lease_duration_seconds: Some(15),
                ..LeaseSpec::default()
            }),
        }
    }

    fn blocking(me: Shard, leases: &[Lease], seen: &mut Sightings, now: Instant) -> Vec<String> {
        blockers(
            &group(me),
            &me.lease_name("p-leader"),
            leases,
            seen,
            now,
            now,
            D,
        )
        .into_iter()
        .map(|b| b.lease)
        .collect()
    }

    #[test]
    fn only_overlapping_leases_marked_by_a_live_holder_block() {
        let me = shard(0, 3);
        let t0 = Instant::now();
        let mut unreadable = lease(shard(1, 4), Some("e"), Some("e"), "1");
        let annotations = unreadable
            .metadata
            .annotations
            .as_mut()
            .expect("annotations");
        annotations.insert(RANGE_ANNOTATION.into(), "nonsense".into());
        unreadable.metadata.name = Some("p-leader-shard-x".into());
        let mut elsewhere = lease(shard(0, 2), Some("f"), Some("f"), "1");
        elsewhere.metadata.name = Some("q-leader-shard-0-of-2".into());
        elsewhere
            .metadata
            .annotations
            .as_mut()
            .expect("annotations")
            .insert(GROUP_ANNOTATION.into(), "q-leader".into());
        let leases = [
            // overlapping, held and marked by its holder: blocks
            lease(shard(0, 2), Some("a"), Some("a"), "1"),
            // the single shard overlaps every shard
            lease(Shard::ALL, Some("b"), Some("b"), "1"),
            // disjoint
            lease(shard(1, 2).by(ShardKey::Uid), Some("c"), Some("c"), "1"),
            // marked by a holder before the current one: that mark does not count
            lease(shard(0, 4), Some("d"), Some("old"), "1"),
            // held but not marked (its holder waits)
            lease(shard(0, 5), Some("g"), None, "1"),
            // released
            lease(shard(0, 6), None, Some("h"), "1"),
            // by namespace: any object may be in both
            lease(
                shard(2, 3).by(ShardKey::Namespace),
                Some("i"),
                Some("i"),
                "1",
            ),
            // its own Lease never blocks it
            lease(me, Some("me"), Some("me"), "1"),
            unreadable,
            elsewhere,
        ];
        let mut seen = Sightings::default();
        let found = blocking(me, &leases, &mut seen, t0);
        assert_eq!(
            found,
            [
                "p-leader-shard-0-of-2",
                "p-leader",
                "p-leader-shard-2-of-3",
                "p-leader-shard-x"
            ]
        );
        // unchanged for the lease duration since first seen: expired, blocks no more
        assert_eq!(blocking(me, &leases, &mut seen, t0 + D).len(), 0);
        // a renewal (a new resourceVersion) is seen anew
        let renewed = [lease(shard(0, 2), Some("a"), Some("a"), "2")];
        assert_eq!(
            blocking(me, &renewed, &mut seen, t0 + D),
            ["p-leader-shard-0-of-2"]
        );
        let b = blockers(&group(me), "own", &renewed, &mut seen, t0 + D, t0 + D, D);
        assert_eq!(b[0].expires_in, D);
        assert_eq!(b[0].holder, "a");
    }

    #[test]
    fn the_group_label_is_the_base_name_or_its_hash() {
        assert_eq!(group(Shard::ALL).label_value(), "p-leader");
        let long = Group {
            base: format!("{}.example.com", "a".repeat(60)),
            shard: Shard::ALL,
        };
        let value = long.label_value();
        assert!(value.starts_with("g-") && value.len() == 18, "{value}");
        let mut meta = ObjectMeta::default();
        group(shard(1, 2)).stamp(&mut meta, Some("me"));
        let annotations = meta.annotations.clone().expect("annotations");
        assert_eq!(annotations[KEY_ANNOTATION], "uid");
        assert_eq!(
            annotations[RANGE_ANNOTATION],
            "0x8000000000000000-0x10000000000000000"
        );
        assert_eq!(annotations[RECONCILING_ANNOTATION], "me");
        group(shard(1, 2)).stamp(&mut meta, None);
        let annotations = meta.annotations.expect("annotations");
        assert!(!annotations.contains_key(RECONCILING_ANNOTATION));
        assert_eq!(meta.labels.expect("labels")[GROUP_LABEL], "p-leader");
    }

    /// A replica of `shard` electing on the fake API with short timings.
    fn options(shard: Shard) -> ManagerOptions {
        let mut options = ManagerOptions {
            metrics_bind_address: "0".into(),
            health_probe_bind_address: "0".into(),
            leader_elect: true,
            leader_election_namespace: Some("ns".into()),
            leader_election_lease_duration: Duration::from_secs(1),
            leader_election_renew_deadline: Duration::from_millis(500),
            leader_election_retry_period: Duration::from_millis(100),
            graceful_shutdown_timeout: Duration::from_secs(1),
            ..ManagerOptions::default()
        };
        options.shard_index = shard.index();
        options.shard_count = shard.count();
        options
    }

    /// How many replicas run controllers now, and the most that ever did at once.
    #[derive(Clone, Default)]
    struct Running {
        now: Arc<AtomicUsize>,
        most: Arc<AtomicUsize>,
        started: Arc<AtomicUsize>,
    }

    struct Replica {
        started: Arc<AtomicUsize>,
        token: CancellationToken,
        task: tokio::task::JoinHandle<crate::error::Result<()>>,
    }

    impl Replica {
        fn start(api: &FakeApi, shard: Shard, running: &Running) -> Replica {
            let mut mgr = Manager::with_client(options(shard), "p", api.client()).expect("manager");
            let signal = mgr.shutdown_signal();
            let started = Arc::new(AtomicUsize::new(0));
            let (mine, running) = (started.clone(), running.clone());
            mgr.add_controller("c", async move {
                mine.fetch_add(1, Ordering::SeqCst);
                running.started.fetch_add(1, Ordering::SeqCst);
                let now = running.now.fetch_add(1, Ordering::SeqCst) + 1;
                running.most.fetch_max(now, Ordering::SeqCst);
                signal.await;
                running.now.fetch_sub(1, Ordering::SeqCst);
            });
            let token = mgr.shutdown_token();
            let task = tokio::spawn(mgr.run());
            Replica {
                started,
                token,
                task,
            }
        }

        fn leads(&self) -> bool {
            self.started.load(Ordering::SeqCst) > 0
        }

        async fn stop(self) {
            self.token.cancel();
            let result = tokio::time::timeout(Duration::from_secs(5), self.task)
                .await
                .expect("stops")
                .expect("join");
            assert!(result.is_ok(), "{result:?}");
        }
    }

    async fn wait_until(what: &str, within: Duration, done: impl Fn() -> bool) -> Duration {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < within, "{what} not within {within:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        start.elapsed()
    }

    fn annotation(api: &FakeApi, name: &str, key: &str) -> Option<String> {
        api.lease("ns", name)
            .and_then(|l| l.metadata.annotations)
            .and_then(|a| a.get(key).cloned())
    }

    fn holder(api: &FakeApi, name: &str) -> Option<String> {
        api.lease("ns", name)
            .and_then(|l| l.spec)
            .and_then(|s| s.holder_identity)
    }

    /// The old protocol (one Lease per shard, nothing more) let a replica of shard 0 of 3 start
    /// while one of shard 0 of 2 ran: both reconcile the objects of the first third.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_new_shard_count_waits_for_the_overlapping_old_shard() {
        let api = FakeApi::default();
        let running = Running::default();
        let old = Replica::start(&api, shard(0, 2), &running);
        wait_until("shard 0 of 2 leads", Duration::from_secs(3), || old.leads()).await;
        assert_eq!(
            annotation(&api, "p-leader-shard-0-of-2", RECONCILING_ANNOTATION),
            holder(&api, "p-leader-shard-0-of-2"),
            "a running replica's Lease is marked with its identity"
        );
        let new = Replica::start(&api, shard(0, 3), &running);
        let disjoint = Replica::start(&api, shard(1, 2), &running);
        wait_until(
            "shard 1 of 2 leads beside 0 of 2",
            Duration::from_secs(3),
            || disjoint.leads(),
        )
        .await;
        // longer than the lease duration: the old shard's renewals keep the new one waiting,
        // though it holds its own Lease, unmarked
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!new.leads(), "shard 0 of 3 started while shard 0 of 2 ran");
        assert!(holder(&api, "p-leader-shard-0-of-3").is_some());
        assert_eq!(
            annotation(&api, "p-leader-shard-0-of-3", RECONCILING_ANNOTATION),
            None
        );
        old.stop().await;
        assert_eq!(
            annotation(&api, "p-leader-shard-0-of-2", RECONCILING_ANNOTATION),
            None,
            "releasing the Lease clears the mark"
        );
        let took = wait_until("shard 0 of 3 leads", Duration::from_secs(3), || new.leads()).await;
        // at its next attempt (a jittered retry period, at most 0.22 s, and the requests): the
        // release freed it, sooner than the lease duration (1 s)
        assert!(took < Duration::from_secs(1), "{took:?}");
        assert_eq!(
            running.most.load(Ordering::SeqCst),
            2,
            "0/2 with 1/2, then 0/3 with 1/2"
        );
        new.stop().await;
        disjoint.stop().await;
    }

    /// A holder that dies (no release) keeps its mark; it stops counting once its Lease expires.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dead_holder_blocks_until_its_lease_expires() {
        let api = FakeApi::default();
        let running = Running::default();
        let old = Replica::start(&api, Shard::ALL, &running);
        wait_until("the single shard leads", Duration::from_secs(3), || {
            old.leads()
        })
        .await;
        old.task.abort();
        let killed = Instant::now();
        let new = Replica::start(&api, shard(1, 2), &running);
        wait_until("shard 1 of 2 leads", Duration::from_secs(5), || new.leads()).await;
        let took = killed.elapsed();
        // the lease duration (1 s) after it first saw the dead holder's last renewal (after
        // the kill), and then at once, give or take the requests
        assert!(
            took >= Duration::from_millis(950) && took < Duration::from_secs(3),
            "{took:?}"
        );
        new.stop().await;
    }

    /// Replicas of three overlapping shards started together: one at a time runs, and each
    /// stop lets exactly one more start, until all three ran.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn overlapping_replicas_started_together_run_one_at_a_time() {
        let api = FakeApi::default();
        let running = Running::default();
        let mut replicas: Vec<Replica> = [Shard::ALL, shard(0, 2), shard(0, 3)]
            .into_iter()
            .map(|s| Replica::start(&api, s, &running))
            .collect();
        for round in 1..=3 {
            wait_until("a replica leads", Duration::from_secs(3), || {
                running.started.load(Ordering::SeqCst) == round
            })
            .await;
            tokio::time::sleep(Duration::from_millis(1200)).await;
            assert_eq!(running.started.load(Ordering::SeqCst), round);
            let leading = replicas.iter().position(Replica::leads).expect("one leads");
            replicas.remove(leading).stop().await;
        }
        assert_eq!(running.most.load(Ordering::SeqCst), 1);
    }
}
