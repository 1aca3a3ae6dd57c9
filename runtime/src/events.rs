//! Events about reconciled objects: `events.k8s.io/v1` Events as kube-runtime's `Recorder`
//! publishes them, with a series cache that keeps only what a later publish needs.
//!
//! [`Recorder::publish`] creates an Event the first time an event is published about an
//! object, and patches its `series` (count and last time) when the same event (same type,
//! action, reason, reporter, `regarding` and `related` references) is published again within
//! [`SERIES_WINDOW`] of the last time, as kube-runtime's and client-go's recorders do: the same
//! requests, and the same Event names (`<object name>.<nanoseconds, hex>`).
//!
//! Where kube's recorder keeps every Event it published in the window, whole, under a key
//! holding copies of its references and strings, this one keeps, per event, a 64-bit digest of
//! what identifies it, when it was first published (which gives the Event's name) and last
//! published, and its count: 32 bytes, whatever the object, the first event of an object in
//! its table's slot, later ones beside it. An object's entries go with
//! [`Recorder::forget`], which a controller calls once the object is gone (the scaffold's does
//! after removing its finalizer); entries older than the window are dropped by a later publish.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use smallvec::SmallVec;
use xxhash_rust::xxh3::Xxh3Default;

use crate::tables::{feed, shrink_emptied};

pub use kube::runtime::events::{Event, EventType, Reporter};

/// How long after its last publish an event is still patched as a series rather than created
/// anew: kube-runtime's and client-go's six minutes.
pub const SERIES_WINDOW: Duration = WINDOW.unsigned_abs();

const WINDOW: SignedDuration = SignedDuration::from_mins(6);

/// How often a publish drops the entries older than [`SERIES_WINDOW`]; an older entry found
/// before that is ignored all the same.
const PRUNE_EVERY: SignedDuration = SignedDuration::from_secs(60);

/// The namespace of the Events about cluster-scoped objects.
const CLUSTER_EVENTS_NAMESPACE: &str = "default";

/// Publishes `events.k8s.io/v1` Events as `reporter`; cheap to clone (clones share the series
/// cache).
///
/// ```no_run
/// # async fn demo(client: operator_gen_runtime::kube::Client, obj: operator_gen_runtime::k8s_openapi::api::core::v1::ConfigMap) -> operator_gen_runtime::kube::Result<()> {
/// use operator_gen_runtime::events::{Recorder, Reporter};
/// use operator_gen_runtime::kube::Resource;
///
/// let reporter = Reporter { controller: "settings".into(), instance: None };
/// let recorder = Recorder::new(client, reporter);
/// let event = operator_gen_runtime::controller::normal_event("Reconciled", "ready".into(), "Reconcile");
/// recorder.publish(&event, &obj.object_ref(&())).await?;
/// // once the object is gone:
/// recorder.forget(&obj.object_ref(&()));
/// # Ok(())
/// # }
/// ```
///
/// It needs `create` and `patch` on `events.k8s.io` `events`, the RBAC the scaffold's
/// controller markers grant.
#[derive(Clone)]
pub struct Recorder {
    client: Client,
    reporter: Reporter,
    series: Arc<Mutex<Series>>,
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder")
            .field("reporter", &self.reporter)
            .field("cached", &self.cached())
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder reporting as `reporter`; its Events name `reporter.instance`, or the
    /// controller when there is none, as their reporting instance.
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Self {
            client,
            reporter,
            series: Arc::default(),
        }
    }

    /// Publishes `event` about the object `regarding`: creates an Event, or patches the
    /// series of the one published last for the same event when that was within
    /// [`SERIES_WINDOW`]. The Event goes to the object's namespace (`default` for a
    /// cluster-scoped object). Should that Event be gone when it is patched, a new one is
    /// created.
    ///
    /// # Errors
    ///
    /// The API server's refusal of the create or the patch.
    pub async fn publish(&self, event: &Event, regarding: &ObjectReference) -> kube::Result<()> {
        self.publish_at(event, regarding, Timestamp::now()).await
    }

    /// Drops what the recorder keeps about the events of the object `regarding` (whatever its
    /// `resourceVersion`): call it once the object is gone, after which none of its events can
    /// be repeated (an object made again under the same name has another `uid`).
    pub fn forget(&self, regarding: &ObjectReference) {
        self.lock().forget(object_digest(regarding));
    }

    /// How many events the series cache holds.
    pub fn cached(&self) -> usize {
        self.lock().len
    }

    fn lock(&self) -> MutexGuard<'_, Series> {
        self.series.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn publish_at(
        &self,
        event: &Event,
        regarding: &ObjectReference,
        now: Timestamp,
    ) -> kube::Result<()> {
        let object = object_digest(regarding);
        let key = event_digest(event, regarding);
        let previous = self.lock().lookup(object, key, now);
        let namespace = regarding
            .namespace
            .as_deref()
            .unwrap_or(CLUSTER_EVENTS_NAMESPACE);
        let events: Api<K8sEvent> = Api::namespaced(self.client.clone(), namespace);
        let entry = match previous {
            Some(previous) => {
                let count = previous.count.saturating_add(1);
                let patch = serde_json::json!({
                    "series": EventSeries { count, last_observed_time: MicroTime(now) },
                });
                let name = self.event_name(regarding, previous.first);
                match events
                    .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                {
                    Ok(_) => Entry {
                        key,
                        first: previous.first,
                        last: nanoseconds(now),
                        count,
                    },
                    Err(kube::Error::Api(e)) if e.code == 404 => {
                        self.create(&events, event, regarding, key, now).await?
                    }
                    Err(e) => return Err(e),
                }
            }
            None => self.create(&events, event, regarding, key, now).await?,
        };
        self.lock().store(object, entry, now);
        Ok(())
    }

    async fn create(
        &self,
        events: &Api<K8sEvent>,
        event: &Event,
        regarding: &ObjectReference,
        key: u64,
        now: Timestamp,
    ) -> kube::Result<Entry> {
        let body = K8sEvent {
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            note: event.note.clone(),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            related: event.secondary.clone(),
            metadata: ObjectMeta {
                name: Some(self.event_name(regarding, nanoseconds(now))),
                namespace: regarding.namespace.clone(),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(self.reporter.controller.clone()),
            reporting_instance: Some(
                self.reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| self.reporter.controller.clone()),
            ),
            type_: Some(
                match event.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            ..K8sEvent::default()
        };
        events.create(&PostParams::default(), &body).await?;
        Ok(Entry {
            key,
            first: nanoseconds(now),
            last: nanoseconds(now),
            count: 1,
        })
    }

    /// `<object name>.<nanoseconds of the first publish, hex>`, as kube and client-go name
    /// them; the controller's name stands in for an object without one.
    fn event_name(&self, regarding: &ObjectReference, first: i64) -> String {
        let name = regarding
            .name
            .as_deref()
            .unwrap_or(&self.reporter.controller);
        format!("{name}.{first:x}")
    }
}

/// One event published within the window: what a later publish of it needs.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// [`event_digest`] of the event.
    key: u64,
    /// When the Event was created, in nanoseconds since 1970 ([`nanoseconds`]); its name holds
    /// it.
    first: i64,
    /// When it was last published, the same way.
    last: i64,
    /// How many times it was published (1 until its series starts at 2).
    count: i32,
}

impl Entry {
    fn live(&self, now: Timestamp) -> bool {
        self.last.saturating_add(WINDOW_NANOSECONDS) > nanoseconds(now)
    }
}

/// [`SERIES_WINDOW`] in nanoseconds.
const WINDOW_NANOSECONDS: i64 = WINDOW.as_secs() * 1_000_000_000;

/// `t` in nanoseconds since 1970, as an Event's name writes it: exact until the year 2262, the
/// last (or first) nanosecond there is after (or before) that.
fn nanoseconds(t: Timestamp) -> i64 {
    let ns = t.as_nanosecond();
    i64::try_from(ns).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

/// `t + d`, or the last time there is.
fn later(t: Timestamp, d: SignedDuration) -> Timestamp {
    t.checked_add(d).unwrap_or(Timestamp::MAX)
}

/// The series cache: entries by object ([`object_digest`]), so that an object's go at once.
#[derive(Default)]
struct Series {
    objects: HashMap<u64, SmallVec<[Entry; 1]>>,
    /// Entries in all objects.
    len: usize,
    /// When a publish next drops the expired entries.
    next_prune: Option<Timestamp>,
}

impl Series {
    /// The live entry of the event `key` about `object`.
    fn lookup(&self, object: u64, key: u64, now: Timestamp) -> Option<Entry> {
        self.objects
            .get(&object)?
            .iter()
            .find(|e| e.key == key && e.live(now))
            .copied()
    }

    /// Records `entry` about `object`, replacing the one of the same event; drops the expired
    /// entries when it is time to.
    fn store(&mut self, object: u64, entry: Entry, now: Timestamp) {
        let entries = self.objects.entry(object).or_default();
        match entries.iter_mut().find(|e| e.key == entry.key) {
            Some(old) => *old = entry,
            None => {
                entries.push(entry);
                self.len += 1;
            }
        }
        if self.next_prune.is_none_or(|at| at <= now) {
            self.prune(now);
            self.next_prune = Some(later(now, PRUNE_EVERY));
        }
    }

    fn prune(&mut self, now: Timestamp) {
        let mut len = 0;
        self.objects.retain(|_, entries| {
            entries.retain(|e| e.live(now));
            len += entries.len();
            !entries.is_empty()
        });
        self.len = len;
        shrink_emptied(&mut self.objects);
    }

    fn forget(&mut self, object: u64) {
        if let Some(entries) = self.objects.remove(&object) {
            self.len -= entries.len();
            shrink_emptied(&mut self.objects);
        }
    }
}

/// What identifies an object across its versions: API version, kind, namespace, name, uid.
fn object_digest(r: &ObjectReference) -> u64 {
    let mut h = Xxh3Default::new();
    for field in [&r.api_version, &r.kind, &r.namespace, &r.name, &r.uid] {
        feed(&mut h, field.as_deref());
    }
    h.digest()
}

/// What, with the object, makes two publishes one event (kube's and client-go's key): the
/// type, action and reason, the rest of the `regarding` reference (`resourceVersion`,
/// `fieldPath`) and the whole `related` one. The reporter is the recorder's own.
fn event_digest(event: &Event, regarding: &ObjectReference) -> u64 {
    let mut h = Xxh3Default::new();
    feed(
        &mut h,
        Some(match event.type_ {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }),
    );
    feed(&mut h, Some(&event.action));
    feed(&mut h, Some(&event.reason));
    feed(&mut h, regarding.resource_version.as_deref());
    feed(&mut h, regarding.field_path.as_deref());
    match &event.secondary {
        None => h.update(&[0]),
        Some(r) => {
            h.update(&[1]);
            for field in [
                &r.api_version,
                &r.kind,
                &r.namespace,
                &r.name,
                &r.uid,
                &r.resource_version,
                &r.field_path,
            ] {
                feed(&mut h, field.as_deref());
            }
        }
    }
    h.digest()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::FakeApi;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{DeleteParams, ListParams};
    use kube::{Resource, ResourceExt};

    fn recorder(fake: &FakeApi) -> Recorder {
        let reporter = Reporter {
            controller: "settings".into(),
            instance: None,
        };
        Recorder::new(fake.client(), reporter)
    }

    fn config_map(name: &str, uid: &str) -> ObjectReference {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        cm.metadata.namespace = Some("default".into());
        cm.metadata.uid = Some(uid.into());
        cm.metadata.resource_version = Some("7".into());
        cm.object_ref(&())
    }

    fn ready() -> Event {
        crate::controller::normal_event("Reconciled", "settings is ready".into(), "Reconcile")
    }

    async fn events(fake: &FakeApi) -> Vec<K8sEvent> {
        let api: Api<K8sEvent> = Api::namespaced(fake.client(), "default");
        api.list(&ListParams::default()).await.expect("list").items
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).expect("a time")
    }

    #[test]
    fn an_event_costs_32_bytes_whatever_the_object_and_the_first_is_kept_in_its_slot() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
        // one event of an object takes no allocation of its own beside the table's slot
        assert_eq!(std::mem::size_of::<SmallVec<[Entry; 1]>>(), 40);
    }

    #[tokio::test]
    async fn the_first_publish_creates_the_event_as_kube_does() {
        let fake = FakeApi::new();
        let recorder = recorder(&fake);
        let cm = config_map("settings", "u1");
        recorder
            .publish_at(&ready(), &cm, at(0))
            .await
            .expect("publish");
        let all = events(&fake).await;
        let [event] = all.as_slice() else {
            panic!("one event expected: {all:?}");
        };
        assert_eq!(
            event.metadata.name.as_deref(),
            Some(format!("settings.{:x}", at(0).as_nanosecond()).as_str())
        );
        assert_eq!(event.regarding.as_ref(), Some(&cm));
        assert_eq!(event.reason.as_deref(), Some("Reconciled"));
        assert_eq!(event.action.as_deref(), Some("Reconcile"));
        assert_eq!(event.note.as_deref(), Some("settings is ready"));
        assert_eq!(event.type_.as_deref(), Some("Normal"));
        assert_eq!(event.reporting_controller.as_deref(), Some("settings"));
        assert_eq!(event.reporting_instance.as_deref(), Some("settings"));
        assert_eq!(event.event_time, Some(MicroTime(at(0))));
        assert_eq!(event.series, None);
        assert_eq!(recorder.cached(), 1);
    }

    #[tokio::test]
    async fn a_repeat_within_the_window_patches_the_series() {
        let fake = FakeApi::new();
        let recorder = recorder(&fake);
        let cm = config_map("settings", "u1");
        recorder.publish_at(&ready(), &cm, at(0)).await.expect("1");
        let before = fake.revision();
        recorder
            .publish_at(&ready(), &cm, at(100))
            .await
            .expect("2");
        assert_eq!(fake.revision(), before + 1, "one write");
        recorder
            .publish_at(&ready(), &cm, at(400))
            .await
            .expect("3");
        let all = events(&fake).await;
        let [event] = all.as_slice() else {
            panic!("one event expected: {all:?}");
        };
        let series = event.series.as_ref().expect("a series");
        assert_eq!(series.count, 3);
        assert_eq!(series.last_observed_time, MicroTime(at(400)));
        assert_eq!(event.event_time, Some(MicroTime(at(0))), "kept");
        assert_eq!(event.note.as_deref(), Some("settings is ready"));
        assert_eq!(recorder.cached(), 1);

        // another reason, or the object at another resourceVersion, is another event
        let deleting =
            crate::controller::normal_event("Deleting", "settings goes".into(), "Cleanup");
        recorder
            .publish_at(&deleting, &cm, at(401))
            .await
            .expect("4");
        let mut changed = cm.clone();
        changed.resource_version = Some("8".into());
        recorder
            .publish_at(&ready(), &changed, at(402))
            .await
            .expect("5");
        assert_eq!(events(&fake).await.len(), 3);
        assert_eq!(recorder.cached(), 3);
    }

    #[tokio::test]
    async fn after_the_window_a_new_event_is_created() {
        let fake = FakeApi::new();
        let recorder = recorder(&fake);
        let cm = config_map("settings", "u1");
        recorder.publish_at(&ready(), &cm, at(0)).await.expect("1");
        recorder.publish_at(&ready(), &cm, at(60)).await.expect("2");
        // six minutes after the last publish, not the first
        recorder
            .publish_at(&ready(), &cm, at(60 + 360))
            .await
            .expect("3");
        let mut all = events(&fake).await;
        all.sort_by_key(|e| e.event_time.clone().map(|t| t.0));
        let counts: Vec<_> = all
            .iter()
            .map(|e| e.series.as_ref().map(|s| s.count))
            .collect();
        assert_eq!(counts, [Some(2), None]);
        assert_eq!(
            all[1].metadata.name.as_deref(),
            Some(format!("settings.{:x}", at(420).as_nanosecond()).as_str())
        );
        // a later publish drops the expired entries of other objects
        let other = config_map("other", "u2");
        recorder
            .publish_at(&ready(), &other, at(420 + 360))
            .await
            .expect("4");
        assert_eq!(recorder.cached(), 1);
    }

    #[tokio::test]
    async fn forget_drops_an_objects_events_and_only_its() {
        let fake = FakeApi::new();
        let recorder = recorder(&fake);
        let deleting =
            crate::controller::normal_event("Deleting", "settings goes".into(), "Cleanup");
        let objects: Vec<_> = (0..100)
            .map(|i| config_map(&format!("cm-{i}"), &format!("u{i}")))
            .collect();
        for cm in &objects {
            recorder
                .publish_at(&ready(), cm, at(0))
                .await
                .expect("ready");
            recorder
                .publish_at(&deleting, cm, at(1))
                .await
                .expect("deleting");
        }
        assert_eq!(recorder.cached(), 200);
        let mut gone = objects[0].clone();
        gone.resource_version = Some("9".into());
        recorder.forget(&gone);
        assert_eq!(recorder.cached(), 198);
        // forgotten: published again, it is a new event, not a series
        recorder
            .publish_at(&ready(), &objects[0], at(2))
            .await
            .expect("again");
        let cm0: Vec<_> = events(&fake)
            .await
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("cm-0"))
            .map(|e| (e.reason.unwrap_or_default(), e.series.map(|s| s.count)))
            .collect();
        assert_eq!(cm0.iter().filter(|(_, s)| s.is_some()).count(), 0);
        assert_eq!(cm0.len(), 3);
        // the others' series go on
        recorder
            .publish_at(&ready(), &objects[1], at(3))
            .await
            .expect("series");
        assert_eq!(recorder.cached(), 199);
        for cm in &objects {
            recorder.forget(cm);
        }
        assert_eq!(recorder.cached(), 0);
        let series = recorder.lock();
        assert_eq!(series.objects.capacity(), 0, "the table gave back its room");
    }

    #[tokio::test]
    async fn an_event_deleted_meanwhile_is_created_again() {
        let fake = FakeApi::new();
        let recorder = recorder(&fake);
        let cm = config_map("settings", "u1");
        recorder.publish_at(&ready(), &cm, at(0)).await.expect("1");
        let api: Api<K8sEvent> = Api::namespaced(fake.client(), "default");
        let name = events(&fake).await[0].name_any();
        api.delete(&name, &DeleteParams::default())
            .await
            .expect("deleted");
        recorder.publish_at(&ready(), &cm, at(10)).await.expect("2");
        let all = events(&fake).await;
        let [event] = all.as_slice() else {
            panic!("one event expected: {all:?}");
        };
        assert_eq!(event.series, None);
        assert_eq!(event.event_time, Some(MicroTime(at(10))));
        // and its series goes on from there
        recorder.publish_at(&ready(), &cm, at(20)).await.expect("3");
        let all = events(&fake).await;
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].series.as_ref().map(|s| s.count), Some(2));
    }

    #[tokio::test]
    async fn a_cluster_scoped_objects_events_go_to_default() {
        let fake = FakeApi::new();
        let recorder = recorder(&fake);
        let mut ns = k8s_openapi::api::core::v1::Namespace::default();
        ns.metadata.name = Some("team".into());
        ns.metadata.uid = Some("u9".into());
        let reference = ns.object_ref(&());
        recorder
            .publish(&ready(), &reference)
            .await
            .expect("publish");
        let all = events(&fake).await;
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].regarding.as_ref(), Some(&reference));
    }

    #[tokio::test]
    async fn a_refused_publish_is_an_error_and_caches_nothing() {
        let fake = FakeApi::new();
        let recorder = recorder(&fake);
        let mut cm = config_map("settings", "u1");
        cm.namespace = Some("missing".into());
        let result = recorder.publish_at(&ready(), &cm, at(0)).await;
        assert!(
            matches!(&result, Err(kube::Error::Api(e)) if e.code == 404),
            "{result:?}"
        );
        assert_eq!(recorder.cached(), 0);
    }
}
