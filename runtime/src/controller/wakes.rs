//! Which watch events wake a controller made by `generation_changed`: an object first seen,
//! or seen with another generation (another resource version, for kinds without one).
//!
//! kube's `predicate_filter` does this with a cache that keeps, for every object it saw, its
//! name, namespace and uid as strings, for an hour after it last saw it: deleted objects too.
//! Here each object is one pair of numbers (a 128-bit digest of its namespace, name and uid, and
//! the hash of its generation), dropped when the watch reports the object deleted or a relist
//! no longer holds it.

use std::collections::HashMap;

use kube::Resource;
use kube::runtime::watcher::Event;
use kube::runtime::{Predicate, predicates};
use xxhash_rust::xxh3::Xxh3Default;

use crate::tables::{feed, shrink_emptied};

/// The last generation seen of each object.
#[derive(Debug, Default)]
pub(crate) struct Wakes {
    seen: HashMap<u128, u64>,
    /// What a relist has listed so far; it replaces `seen` when the relist is done.
    relisted: Option<HashMap<u128, u64>>,
}

impl Wakes {
    /// The object `event` should wake the controller for, if any.
    pub(crate) fn wake<K: Resource>(&mut self, event: Event<K>) -> Option<K> {
        match event {
            Event::Apply(obj) => {
                let (key, value) = Self::entry(&obj);
                let Some(value) = value else {
                    return Some(obj);
                };
                let before = self.seen.insert(key, value);
                (before != Some(value)).then_some(obj)
            }
            Event::InitApply(obj) => {
                let (key, value) = Self::entry(&obj);
                let Some(value) = value else {
                    return Some(obj);
                };
                match self.relisted.as_mut() {
                    Some(relisted) => {
                        relisted.insert(key, value);
                        (self.seen.get(&key) != Some(&value)).then_some(obj)
                    }
                    // the tail of a relist begun before this stream was followed (a standby
                    // controller subscribes while its watch's first list streams in): no
                    // relist to complete, so an update like any other
                    None => {
                        let before = self.seen.insert(key, value);
                        (before != Some(value)).then_some(obj)
                    }
                }
            }
            Event::Delete(obj) => {
                let (key, _) = Self::entry(&obj);
                self.seen.remove(&key);
                shrink_emptied(&mut self.seen);
                None
            }
            Event::Init => {
                self.relisted = Some(HashMap::new());
                None
            }
            Event::InitDone => {
                // objects deleted while the watch was down are not listed again: forgotten,
                // by a relist this stream saw begin
                if let Some(relisted) = self.relisted.take() {
                    self.seen = relisted;
                }
                None
            }
        }
    }

    /// The object's key and the hash of its generation (`None`: it has neither generation nor
    /// resource version, and wakes the controller every time).
    fn entry<K: Resource>(obj: &K) -> (u128, Option<u64>) {
        let value = predicates::generation
            .fallback(predicates::resource_version)
            .hash_property(obj);
        (object_digest(obj), value)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.seen.len()
    }
}

/// A 128-bit digest of the object's namespace, name and uid: one object, not another of its
/// name made after it was deleted.
pub(crate) fn object_digest<K: Resource>(obj: &K) -> u128 {
    let meta = obj.meta();
    let mut h = Xxh3Default::new();
    for field in [&meta.namespace, &meta.name, &meta.uid] {
        feed(&mut h, field.as_deref());
    }
    h.digest128()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn deployment(name: &str, uid: &str, generation: i64, version: &str) -> Deployment {
        let mut d = Deployment::default();
        d.metadata.name = Some(name.into());
        d.metadata.namespace = Some("default".into());
        d.metadata.uid = Some(uid.into());
        d.metadata.generation = Some(generation);
        d.metadata.resource_version = Some(version.into());
        d
    }

    fn woke(w: &mut Wakes, event: Event<Deployment>) -> bool {
        w.wake(event).is_some()
    }

    #[test]
    fn an_object_wakes_when_new_and_when_its_generation_changes() {
        let mut w = Wakes::default();
        assert!(woke(&mut w, Event::Apply(deployment("a", "u1", 1, "10"))));
        // its own status and finalizer writes: another version, the same generation
        assert!(!woke(&mut w, Event::Apply(deployment("a", "u1", 1, "11"))));
        assert!(woke(&mut w, Event::Apply(deployment("a", "u1", 2, "12"))));
        assert!(!woke(&mut w, Event::Apply(deployment("a", "u1", 2, "13"))));
        // another object of the same name (deleted and made again) is new
        assert!(woke(&mut w, Event::Apply(deployment("a", "u2", 2, "14"))));
    }

    #[test]
    fn a_deleted_object_is_forgotten() {
        let mut w = Wakes::default();
        for i in 0..1000 {
            let name = format!("d-{i}");
            assert!(woke(&mut w, Event::Apply(deployment(&name, &name, 1, "1"))));
        }
        assert_eq!(w.len(), 1000);
        for i in 0..1000 {
            let name = format!("d-{i}");
            assert!(!woke(
                &mut w,
                Event::Delete(deployment(&name, &name, 1, "2"))
            ));
        }
        assert_eq!(w.len(), 0);
        assert_eq!(w.seen.capacity(), 0, "the table gave back its room");
        assert!(woke(&mut w, Event::Apply(deployment("d-0", "d-0", 1, "3"))));
    }

    #[test]
    fn a_relist_wakes_what_changed_and_forgets_what_is_gone() {
        let mut w = Wakes::default();
        assert!(!woke(&mut w, Event::Init));
        assert!(woke(
            &mut w,
            Event::InitApply(deployment("a", "ua", 1, "1"))
        ));
        assert!(woke(
            &mut w,
            Event::InitApply(deployment("b", "ub", 1, "2"))
        ));
        assert!(!woke(&mut w, Event::InitDone));
        assert_eq!(w.len(), 2);
        // the watch restarts: `a` unchanged, `c` new, `b` not listed
        assert!(!woke(&mut w, Event::Init));
        assert!(!woke(
            &mut w,
            Event::InitApply(deployment("a", "ua", 1, "5"))
        ));
        assert!(woke(
            &mut w,
            Event::InitApply(deployment("c", "uc", 1, "6"))
        ));
        assert!(!woke(&mut w, Event::InitDone));
        // `b` was deleted while the watch was down: forgotten
        assert_eq!(w.len(), 2);
        assert!(woke(&mut w, Event::Apply(deployment("b", "ub", 1, "7"))));
    }

    /// A standby controller may start following its watch in the middle of the first list:
    /// the rest of that list, without its `Init`, neither wakes what it has seen again nor makes
    /// it forget the objects listed before it followed.
    #[test]
    fn the_tail_of_a_relist_begun_earlier_forgets_nothing() {
        let mut w = Wakes::default();
        assert!(!woke(&mut w, Event::Init));
        for (name, uid) in [("a", "ua"), ("b", "ub")] {
            assert!(woke(
                &mut w,
                Event::InitApply(deployment(name, uid, 1, "1"))
            ));
        }
        assert!(!woke(&mut w, Event::InitDone));
        // the watch's own first list, from `b` on, then its end
        assert!(!woke(
            &mut w,
            Event::InitApply(deployment("b", "ub", 1, "1"))
        ));
        assert!(!woke(&mut w, Event::InitDone));
        assert_eq!(w.len(), 2);
        // `a` updated without a new generation (a finalizer added): no wake
        assert!(!woke(&mut w, Event::Apply(deployment("a", "ua", 1, "9"))));
        assert!(woke(&mut w, Event::Apply(deployment("a", "ua", 2, "10"))));
    }

    #[test]
    fn a_kind_without_generation_wakes_on_every_version() {
        let mut w = Wakes::default();
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("settings".into());
        cm.metadata.uid = Some("u".into());
        cm.metadata.resource_version = Some("1".into());
        assert!(w.wake(Event::Apply(cm.clone())).is_some());
        assert!(w.wake(Event::Apply(cm.clone())).is_none());
        cm.metadata.resource_version = Some("2".into());
        assert!(w.wake(Event::Apply(cm.clone())).is_some());
        // neither generation nor version: every event wakes it, and nothing is kept
        cm.metadata.resource_version = None;
        cm.metadata.uid = Some("other".into());
        assert!(w.wake(Event::Apply(cm.clone())).is_some());
        assert!(w.wake(Event::Apply(cm)).is_some());
    }
}
