//! Listers and informers, code-generator style, over kube-runtime's reflector `Store`: the
//! derive names them per kind (`CaptainLister`, `CaptainInformer`); the logic lives here once.

use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::StreamExt;
use kube::core::{ClusterResourceScope, NamespaceResourceScope, Selector, SelectorExt};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::shard::Shard;
use crate::watch::Source;

/// Reads objects of one kind from a local cache. Objects are shared with the cache: clone before
/// changing them.
pub struct Lister<K: Resource<DynamicType = ()> + 'static> {
    store: Store<K>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Lister {
            store: self.store.clone(),
        }
    }
}

impl<K> Lister<K>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    /// A lister over a reflector store.
    pub fn new(store: Store<K>) -> Self {
        Lister { store }
    }

    /// Every cached object whose labels match `selector`, in name order.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        sorted(self.store.state_filter_selector(selector))
    }

    /// The store behind this lister.
    pub fn store(&self) -> &Store<K> {
        &self.store
    }
}

impl<K> Lister<K>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope> + Clone + 'static,
{
    /// The objects of one namespace.
    pub fn namespace(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            store: self.store.clone(),
            namespace: namespace.to_string(),
        }
    }
}

impl<K> Lister<K>
where
    K: Resource<DynamicType = (), Scope = ClusterResourceScope> + Clone + 'static,
{
    /// A cluster-scoped object by name.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.store.get(&ObjectRef::new(name))
    }
}

/// Reads the objects of one namespace from a local cache.
pub struct NamespaceLister<K: Resource<DynamicType = ()> + 'static> {
    store: Store<K>,
    namespace: String,
}

impl<K> NamespaceLister<K>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    /// The object `name` of this namespace.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.store
            .get(&ObjectRef::new(name).within(&self.namespace))
    }

    /// The objects of this namespace whose labels match `selector`, in name order.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        let ns = self.namespace.as_str();
        sorted(self.store.state_filter(|o| {
            o.meta().namespace.as_deref() == Some(ns) && selector.matches(o.labels())
        }))
    }
}

fn sorted<K: Resource>(mut items: Vec<Arc<K>>) -> Vec<Arc<K>> {
    items.sort_by(|a, b| {
        (&a.meta().namespace, &a.meta().name).cmp(&(&b.meta().namespace, &b.meta().name))
    });
    items
}

/// Why an informer stopped before its cache was filled.
#[derive(Debug, thiserror::Error)]
#[error(
    "the informer stopped before its first list completed: check that the watch can reach the apiserver and that RBAC allows list and watch"
)]
pub struct NotSynced;

/// Keeps a local cache of one kind up to date with a watch, like client-go's informer.
pub struct Informer<K: Resource<DynamicType = ()> + 'static> {
    store: Store<K>,
    task: tokio::task::JoinHandle<()>,
    _kind: PhantomData<K>,
}

impl<K> Informer<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    /// Starts watching `api` with `config` on the current tokio runtime.
    pub fn start(api: Api<K>, config: watcher::Config) -> Self {
        Informer::start_in_shard(api, config, Shard::ALL)
    }

    /// [`start`](Self::start) for the objects of `shard` only: the cache holds no other
    /// shard's ([`shard::watcher`](crate::shard::watcher)).
    pub fn start_in_shard(api: Api<K>, config: watcher::Config, shard: Shard) -> Self {
        Informer::from_source(Source::new(api, config).shard(shard))
    }

    /// Starts watching what `source` says: its shard, how its lists are made (streamed by
    /// default) and the transforms its objects go through before the cache
    /// ([`Source::transform`]). The cached objects carry no `managedFields`.
    pub fn from_source(source: Source<K>) -> Self {
        let (store, writer) = reflector::store();
        let stream = reflector::reflector(writer, source.events())
            .default_backoff()
            .touched_objects();
        let task = tokio::spawn(async move {
            futures::pin_mut!(stream);
            while let Some(event) = stream.next().await {
                if let Err(e) = event {
                    tracing::warn!(error = %e, "informer watch error, retrying");
                }
            }
        });
        Informer {
            store,
            task,
            _kind: PhantomData,
        }
    }

    /// Waits until the first list has filled the cache.
    pub async fn wait_for_sync(&self) -> Result<(), NotSynced> {
        self.store.wait_until_ready().await.map_err(|_| NotSynced)
    }

    /// A lister over this informer's cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::new(self.store.clone())
    }

    /// The cache itself, e.g. for kube-runtime's `Controller::for_stream` or `Controller::store`.
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }
}

impl<K: Resource<DynamicType = ()> + 'static> Drop for Informer<K> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::core::{Expression, ObjectMeta};
    use kube::runtime::watcher::Event;

    fn cm(ns: &str, name: &str, app: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                labels: Some([("app".to_string(), app.to_string())].into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn listers_filter_by_namespace_and_selector() {
        let (store, mut writer) = reflector::store::<ConfigMap>();
        for o in [cm("a", "x", "web"), cm("a", "y", "db"), cm("b", "z", "web")] {
            writer.apply_watcher_event(&Event::Apply(o));
        }
        let lister = Lister::new(store);
        let web: Selector = Expression::Equal("app".into(), "web".into()).into();
        let names = |v: Vec<Arc<ConfigMap>>| v.iter().map(|o| o.name_any()).collect::<Vec<_>>();
        assert_eq!(names(lister.list(&web)), ["x", "z"]);
        assert_eq!(names(lister.list(&Selector::default())), ["x", "y", "z"]);
        assert_eq!(
            names(lister.namespace("a").list(&Selector::default())),
            ["x", "y"]
        );
        assert_eq!(
            lister
                .namespace("a")
                .get("y")
                .map(|o| o.name_any())
                .as_deref(),
            Some("y")
        );
        assert!(lister.namespace("b").get("y").is_none());
    }

    #[test]
    fn cluster_scoped_listers_get_by_name() {
        let (store, mut writer) = reflector::store::<Namespace>();
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some("team".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        writer.apply_watcher_event(&Event::Apply(ns));
        let lister = Lister::new(store);
        assert!(lister.get("team").is_some());
        assert!(lister.get("other").is_none());
    }

    #[tokio::test]
    async fn an_informer_of_one_shard_caches_only_its_objects() {
        use crate::shard::tests::{uid, with_uid};
        let fake = crate::fake::FakeApi::new();
        let shard = Shard::new(0, 2).expect("shard");
        let mut mine = Vec::new();
        for i in 0..20 {
            let cm = with_uid(&uid(i));
            if shard.owns(&cm) {
                mine.push(cm.name_any());
            }
            fake.seed(&cm);
        }
        mine.sort();
        assert!((2..18).contains(&mine.len()), "shard 0 of 2 owns {mine:?}");
        let api: Api<ConfigMap> = Api::namespaced(fake.client(), "default");
        let informer = Informer::start_in_shard(api, watcher::Config::default(), shard);
        informer.wait_for_sync().await.expect("synced");
        let cached: Vec<String> = informer
            .lister()
            .list(&Selector::default())
            .iter()
            .map(|o| o.name_any())
            .collect();
        assert_eq!(cached, mine);
    }
}
