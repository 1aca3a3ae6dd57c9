//! The controller's object cache (kube's reflector store), given back its room after a mass
//! deletion.
//!
//! kube's store is a hash table that keeps the capacity it grew to: once a thousand objects were
//! cached and deleted, it still holds the table for a thousand. The store cannot be shrunk from
//! outside, but a relist replaces its table with the one the relist filled. So when deletions
//! have left fewer than a quarter of the most objects it held, [`Compacting`] replays the
//! objects still cached as a relist of its own (no request is made): readers see the same
//! objects before and after, and the store's table is sized for what is left.

use std::hash::Hash;

use kube::Resource;
use kube::runtime::reflector::Store;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::Event;

/// Below this many objects, a store is never rebuilt: its table is small.
const MIN_ROOM: usize = 64;

/// Applies watch events to a store and rebuilds it when deletions have emptied three quarters
/// of it.
pub(crate) struct Compacting<K: Resource + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    writer: Writer<K>,
    reader: Store<K>,
    /// The most objects the store held since it was last built.
    most: usize,
    /// Inside a relist of the watch (between `Init` and `InitDone`), when nothing is rebuilt.
    relisting: bool,
}

impl<K> Compacting<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    pub(crate) fn new(writer: Writer<K>) -> Self {
        let reader = writer.as_reader();
        Compacting {
            writer,
            reader,
            most: 0,
            relisting: false,
        }
    }

    /// Applies `event` to the store, as kube's `reflect` does, then rebuilds the store when a
    /// deletion left it at under a quarter of its most objects; whether it rebuilt.
    pub(crate) fn apply(&mut self, event: &Event<K>) -> bool {
        self.writer.apply_watcher_event(event);
        match event {
            Event::Init => self.relisting = true,
            Event::InitDone => {
                self.relisting = false;
                self.most = self.reader.len();
            }
            Event::Apply(_) => self.most = self.most.max(self.reader.len()),
            Event::InitApply(_) => {}
            Event::Delete(_) => {
                let len = self.reader.len();
                if !self.relisting && self.most > MIN_ROOM && len < self.most / 4 {
                    self.rebuild();
                    return true;
                }
            }
        }
        false
    }

    /// Replays the cached objects as a relist: the store's table is replaced by a new one
    /// sized for them.
    fn rebuild(&mut self) {
        let objects = self.reader.state();
        self.writer.apply_watcher_event(&Event::Init);
        for obj in objects {
            self.writer
                .apply_watcher_event(&Event::InitApply(obj.as_ref().clone()));
        }
        self.writer.apply_watcher_event(&Event::InitDone);
        self.most = self.reader.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::tests::config_map;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::reflector::{self, ObjectRef};

    fn names(store: &Store<ConfigMap>) -> Vec<String> {
        let mut names: Vec<String> = store
            .state()
            .iter()
            .filter_map(|o| o.metadata.name.clone())
            .collect();
        names.sort();
        names
    }

    /// A store listed empty, then given `n` objects `o000`, `o001` ... by the watch.
    fn holding(n: usize) -> (Store<ConfigMap>, Compacting<ConfigMap>) {
        let (reader, writer) = reflector::store::<ConfigMap>();
        let mut store = Compacting::new(writer);
        store.apply(&Event::Init);
        store.apply(&Event::InitDone);
        for i in 0..n {
            assert!(!store.apply(&Event::Apply(config_map("ns", &format!("o{i:03}")))));
        }
        (reader, store)
    }

    fn delete(store: &mut Compacting<ConfigMap>, name: &str) -> bool {
        store.apply(&Event::Delete(config_map("ns", name)))
    }

    #[test]
    fn a_mass_deletion_rebuilds_the_store_with_what_is_left() {
        let (reader, mut store) = holding(200);
        let rebuilt: Vec<usize> = (0..198)
            .filter(|i| delete(&mut store, &format!("o{i:03}")))
            .collect();
        // 200 held: the deletion that leaves 49 (under a quarter) rebuilds; 49 is too few to
        // rebuild again
        assert_eq!(rebuilt, vec![150]);
        assert_eq!(names(&reader), vec!["o198", "o199"]);
        let key = ObjectRef::new("o199").within("ns");
        assert!(reader.get(&key).is_some(), "o199 is still found by its key");
        // the store goes on as before
        store.apply(&Event::Apply(config_map("ns", "p")));
        assert_eq!(names(&reader), vec!["o198", "o199", "p"]);
    }

    #[test]
    fn nothing_is_rebuilt_in_a_small_store() {
        let (reader, mut store) = holding(10);
        for i in 0..9 {
            assert!(!delete(&mut store, &format!("o{i:03}")));
        }
        assert_eq!(names(&reader), vec!["o009"]);
    }

    #[test]
    fn nothing_is_rebuilt_inside_a_relist() {
        let (reader, mut store) = holding(100);
        store.apply(&Event::Init);
        store.apply(&Event::InitApply(config_map("ns", "q")));
        for i in 0..99 {
            assert!(!delete(&mut store, &format!("o{i:03}")));
        }
        store.apply(&Event::InitDone);
        assert_eq!(
            names(&reader),
            vec!["q"],
            "the relist's objects replace the store's"
        );
    }
}
