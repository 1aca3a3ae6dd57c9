//! Triggers from kinds a controller only owns or watches, cached as metadata only: kube's
//! `owns` and `watches` keep no cache of the other kind; these keep one of its
//! `PartialObjectMeta` (names, labels, owner references; no spec, data or status), filled by a
//! metadata watch ([`watch::metadata`](crate::watch::metadata)), for a reconcile to read.

use std::fmt::Debug;
use std::hash::Hash;

use futures::Stream;
use kube::Resource;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{Controller, WatchStreamExt, watcher};
use serde::de::DeserializeOwned;

use crate::watch::{self, Lists};

/// The cache of `Child`'s metadata and the stream of the objects it touched.
fn cached<Child>(
    api: Api<PartialObjectMeta<Child>>,
    config: watcher::Config,
) -> (
    Store<PartialObjectMeta<Child>>,
    impl Stream<Item = watcher::Result<PartialObjectMeta<Child>>> + Send,
)
where
    Child: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (store, writer) = reflector::store();
    let events = watch::metadata(api, config, Lists::Streamed);
    let touched = reflector::reflector(writer, events)
        .default_backoff()
        .touched_objects();
    (store, touched)
}

/// kube's `controller.owns(api, config)` with `api` an `Api<PartialObjectMeta<Child>>`
/// (`Api::namespaced`, `Api::all`, as for `Child`): each `Child` listed, changed or deleted
/// wakes the owner its controller owner reference names. The watch asks for metadata only, and
/// the returned store holds each `Child`'s `PartialObjectMeta`, without `managedFields`.
pub fn owns_metadata<K, Child>(
    controller: Controller<K>,
    api: Api<PartialObjectMeta<Child>>,
    config: watcher::Config,
) -> (Controller<K>, Store<PartialObjectMeta<Child>>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone,
    Child: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (store, touched) = cached(api, config);
    (controller.owns_stream(touched), store)
}

/// kube's `controller.watches(api, config, mapper)` with `api` an
/// `Api<PartialObjectMeta<Child>>`: each `Child` listed, changed or deleted
/// wakes the objects `mapper` names. The watch asks for metadata only, and the returned store
/// holds each `Child`'s `PartialObjectMeta`, without `managedFields`.
pub fn watches_metadata<K, Child, I>(
    controller: Controller<K>,
    api: Api<PartialObjectMeta<Child>>,
    config: watcher::Config,
    mapper: impl Fn(PartialObjectMeta<Child>) -> I + Sync + Send + 'static,
) -> (Controller<K>, Store<PartialObjectMeta<Child>>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Debug,
    Child: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    I: IntoIterator<Item = ObjectRef<K>> + 'static,
    I::IntoIter: Send,
{
    let (store, touched) = cached(api, config);
    (controller.watches_stream(touched, mapper), store)
}
