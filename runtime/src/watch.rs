//! The list and watch behind the runtime's caches (a controller's, an informer's, a
//! metadata-only one's), made to hold less:
//!
//! - the initial list is streamed by a watch (`sendInitialEvents=true`, the apiserver's
//!   WatchList) where the apiserver offers it, so neither side builds the whole collection as one
//!   list; where the apiserver refuses such a watch (the `WatchList` feature gate off), the
//!   watch falls back to a list in pages, once and for good, and an apiserver older than the
//!   parameter (before Kubernetes 1.27, [`streams_lists`]) gets pages from the start
//!   ([`Lists`]);
//! - objects reach the cache without `managedFields`, then through the user's transforms
//!   ([`Source::transform`]);
//! - a kind a controller only owns or watches can be watched for its metadata alone
//!   ([`metadata`]): the apiserver sends `PartialObjectMetadata`, and the cache holds no spec,
//!   data or status.

use std::fmt::Debug;
use std::pin::Pin;
use std::sync::Arc;

use futures::{Stream, StreamExt, TryStreamExt};
use kube::Resource;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::watcher::{self, Event, InitialListStrategy};
use serde::de::DeserializeOwned;

use crate::manager::Queue;
use crate::shard::Shard;

/// How a watch fills its cache, first and after each relist.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lists {
    /// By a watch that sends the initial objects one by one (`sendInitialEvents=true`), where
    /// the apiserver offers it; else by [`Paged`](Self::Paged). The default.
    #[default]
    Streamed,
    /// By a list in pages of the config's `page_size`, then a watch (kube's default).
    Paged,
}

/// A function applied to each object before it enters the cache (after `managedFields` are
/// dropped): clear what no reconcile reads, so the cache does not hold it.
pub type Transform<K> = Arc<dyn Fn(&mut K) + Send + Sync>;

/// What a cache of `K` watches and how: the `Api` and kube's `watcher::Config`, the [`Shard`],
/// [`Lists`] and the transforms. Give it to
/// [`controller::generation_changed_from`](crate::controller::generation_changed_from) or
/// [`Informer::from_source`](crate::cache::Informer::from_source).
pub struct Source<K: Resource> {
    api: Api<K>,
    config: watcher::Config,
    shard: Shard,
    lists: Lists,
    transforms: Vec<Transform<K>>,
    standby: bool,
    queue: Option<Queue>,
}

impl<K> Source<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    K::DynamicType: Default,
{
    /// Every object of `api` that `config`'s selectors pick, initial list streamed.
    pub fn new(api: Api<K>, config: watcher::Config) -> Self {
        Source {
            api,
            config,
            shard: Shard::ALL,
            lists: Lists::default(),
            transforms: Vec::new(),
            standby: true,
            queue: None,
        }
    }

    /// Only the objects of `shard` ([`shard::watcher`](crate::shard::watcher)).
    pub fn shard(mut self, shard: Shard) -> Self {
        self.shard = shard;
        self
    }

    /// How the cache is filled: streamed (the default) or paged.
    pub fn lists(mut self, lists: Lists) -> Self {
        self.lists = lists;
        self
    }

    /// Adds `transform`, applied to every object the watch delivers (listed, changed or
    /// deleted) before the cache and the controller see it; transforms run in the order added.
    /// What a transform clears is gone from the cache and from the objects a reconcile gets:
    /// clear only what the reconcile does not read.
    pub fn transform(mut self, transform: impl Fn(&mut K) + Send + Sync + 'static) -> Self {
        self.transforms.push(Arc::new(transform));
        self
    }

    /// For a controller: whether its cache is filled and kept in sync from the moment the
    /// controller is made, on every replica, leading or not (on, the default), or only once
    /// the controller runs (off). See
    /// [`generation_changed_from`](crate::controller::generation_changed_from); an informer
    /// starts watching when it is started, either way.
    pub fn standby(mut self, on: bool) -> Self {
        self.standby = on;
        self
    }

    /// Whether the cache is kept on standby ([`standby`](Self::standby)).
    pub fn is_standby(&self) -> bool {
        self.standby
    }

    /// For a controller: counts the keys its watch wakes it for in `queue`'s work-queue metrics
    /// ([`Metrics::queue`](crate::manager::Metrics::queue)); its reconciles go through
    /// [`Retries::in_queue`](crate::controller::Retries::in_queue) of the same queue. An
    /// informer has no queue and ignores it.
    pub fn queue(mut self, queue: Queue) -> Self {
        self.queue = Some(queue);
        self
    }

    /// The queue given to [`queue`](Self::queue), taken out of the source.
    pub(crate) fn take_queue(&mut self) -> Option<Queue> {
        self.queue.take()
    }

    /// The watch events, objects without `managedFields` and transformed.
    pub fn events(self) -> impl Stream<Item = watcher::Result<Event<K>>> + Send {
        let Source {
            api,
            config,
            shard,
            lists,
            transforms,
            standby: _,
            queue: _,
        } = self;
        let client = api.clone().into_client();
        let start = move |config| crate::shard::watcher(api.clone(), config, shard);
        for_apiserver(client, lists, move |lists| {
            streamed_or_paged(config, lists, start)
        })
        .map_ok(move |event| {
            event.modify(|obj| {
                obj.meta_mut().managed_fields = None;
                for transform in &transforms {
                    transform(obj);
                }
            })
        })
    }
}

/// The metadata of `api`'s objects: an `Api` of `PartialObjectMeta<K>` (kube's
/// `Api::<PartialObjectMeta<K>>::namespaced(client, namespace)` and kin) asks the apiserver for
/// `PartialObjectMetadata` only. Without `managedFields`, filled as `lists` says.
pub fn metadata<K>(
    api: Api<PartialObjectMeta<K>>,
    config: watcher::Config,
    lists: Lists,
) -> impl Stream<Item = watcher::Result<Event<PartialObjectMeta<K>>>> + Send
where
    K: Resource + Clone + Debug + Send + 'static,
    K::DynamicType: Default,
{
    let client = api.clone().into_client();
    let start = move |config| kube::runtime::watcher(api.clone(), config);
    for_apiserver(client, lists, move |lists| {
        streamed_or_paged(config, lists, start)
    })
    .map_ok(|event| event.modify(|obj| obj.meta_mut().managed_fields = None))
}

/// The watch `watch` makes for `lists`, [`Lists::Paged`] when `client`'s apiserver is older
/// than streamed lists ([`streams_lists`]).
fn for_apiserver<S, T>(
    client: kube::Client,
    lists: Lists,
    watch: impl FnOnce(Lists) -> S + Send + 'static,
) -> impl Stream<Item = watcher::Result<Event<T>>> + Send
where
    S: Stream<Item = watcher::Result<Event<T>>> + Send,
{
    futures::stream::once(async move {
        if lists == Lists::Streamed && !streams_lists(&client).await {
            tracing::info!("the apiserver is older than streamed lists; listing in pages");
            return watch(Lists::Paged);
        }
        watch(lists)
    })
    .flatten()
}

/// Whether `client`'s apiserver knows `sendInitialEvents` (Kubernetes 1.27 and later), by its
/// `/version`; an answer that cannot be had or read is a yes, and a refusal of the parameter
/// still falls back to pages ([`refused_streaming`]).
pub async fn streams_lists(client: &kube::Client) -> bool {
    match client.apiserver_version().await {
        Ok(info) => knows_streaming(&info.major, &info.minor),
        Err(_) => true,
    }
}

/// Whether version `major`.`minor` (as `/version` gives them: the minor may end in `+`) is
/// Kubernetes 1.27 or later; unreadable numbers are a yes.
fn knows_streaming(major: &str, minor: &str) -> bool {
    let number = |text: &str| -> Option<u32> {
        let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    match (number(major), number(minor)) {
        (Some(1), Some(minor)) => minor >= 27,
        _ => true,
    }
}

/// The watch `start` makes from `config`: with [`Lists::Streamed`], first with the initial
/// list streamed, and, should the apiserver refuse that watch ([`refused_streaming`]), again
/// with a paged list, for good; with [`Lists::Paged`], paged.
pub fn streamed_or_paged<T, S>(
    config: watcher::Config,
    lists: Lists,
    start: impl Fn(watcher::Config) -> S + Send + 'static,
) -> impl Stream<Item = watcher::Result<Event<T>>> + Send
where
    S: Stream<Item = watcher::Result<Event<T>>> + Send + 'static,
    T: Send + 'static,
{
    let paged = watcher::Config {
        initial_list_strategy: InitialListStrategy::ListWatch,
        ..config.clone()
    };
    let streaming = lists == Lists::Streamed;
    let first = if streaming {
        config.streaming_lists()
    } else {
        paged.clone()
    };
    let state = Watching {
        stream: Box::pin(start(first)),
        streaming,
        paged,
        start,
    };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            let item = state.stream.next().await?;
            if state.streaming && refused_streaming(&item) {
                if let Err(error) = &item {
                    tracing::info!(%error, "the apiserver does not stream lists; listing in pages");
                }
                state.streaming = false;
                state.stream = Box::pin((state.start)(state.paged.clone()));
                continue;
            }
            return Some((item, state));
        }
    })
}

struct Watching<S, F> {
    stream: Pin<Box<S>>,
    streaming: bool,
    paged: watcher::Config,
    start: F,
}

/// Whether `item` is the apiserver refusing a watch with `sendInitialEvents`: a 400 or 422
/// answer naming the parameter (the `WatchList` gate off answers 422 "sendInitialEvents is
/// forbidden for watch unless the WatchList feature gate is enabled").
pub fn refused_streaming<T>(item: &watcher::Result<T>) -> bool {
    match item {
        Err(watcher::Error::WatchStartFailed(kube::Error::Api(status))) => {
            matches!(status.code, 400 | 422) && status.message.contains("sendInitialEvents")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::tests::config_map;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::ResourceExt;
    use kube::core::Status;
    use std::sync::Mutex;

    fn refusal(code: u16, message: &str) -> watcher::Result<Event<ConfigMap>> {
        let status = Status::failure(message, "Invalid").with_code(code);
        Err(watcher::Error::WatchStartFailed(kube::Error::Api(
            Box::new(status),
        )))
    }

    const GATE_OFF: &str = "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled";

    #[test]
    fn apiservers_from_1_27_know_streamed_lists() {
        assert!(knows_streaming("1", "37"));
        assert!(knows_streaming("1", "27+"));
        assert!(!knows_streaming("1", "26"));
        assert!(!knows_streaming("1", "22+"));
        assert!(knows_streaming("2", "0"));
        assert!(knows_streaming("", ""));
    }

    #[test]
    fn only_a_refusal_naming_send_initial_events_is_one() {
        assert!(refused_streaming(&refusal(422, GATE_OFF)));
        assert!(refused_streaming(&refusal(
            400,
            "unknown sendInitialEvents"
        )));
        assert!(!refused_streaming(&refusal(403, GATE_OFF)));
        assert!(!refused_streaming(&refusal(422, "labelSelector: Invalid")));
        assert!(!refused_streaming(&Ok(Event::<ConfigMap>::Init)));
    }

    /// The strategies `streamed_or_paged` started its watches with, and what each delivered.
    fn run(
        lists: Lists,
        streamed: Vec<watcher::Result<Event<ConfigMap>>>,
    ) -> (Vec<InitialListStrategy>, Vec<String>) {
        let started = Arc::new(Mutex::new(Vec::new()));
        let seen = started.clone();
        let streamed = Arc::new(Mutex::new(Some(streamed)));
        let start = move |config: watcher::Config| {
            let strategy = config.initial_list_strategy;
            let items = match &strategy {
                InitialListStrategy::StreamingList => {
                    streamed.lock().expect("lock").take().unwrap_or_default()
                }
                InitialListStrategy::ListWatch => vec![
                    Ok(Event::Init),
                    Ok(Event::InitApply(config_map("ns", "paged"))),
                    Ok(Event::InitDone),
                ],
            };
            seen.lock().expect("lock").push(strategy);
            futures::stream::iter(items)
        };
        let items = futures::executor::block_on(
            streamed_or_paged(watcher::Config::default(), lists, start).collect::<Vec<_>>(),
        );
        let delivered = items
            .iter()
            .map(|item| match item {
                Ok(Event::InitApply(obj)) => obj.name_any(),
                Ok(_) => "-".to_owned(),
                Err(_) => "error".to_owned(),
            })
            .collect();
        let started = started.lock().expect("lock").clone();
        (started, delivered)
    }

    #[test]
    fn a_refused_streamed_list_falls_back_to_pages() {
        use InitialListStrategy::{ListWatch, StreamingList};
        let streamed = vec![
            Ok(Event::Init),
            Ok(Event::InitApply(config_map("ns", "streamed"))),
            Ok(Event::InitDone),
        ];
        let (started, delivered) = run(Lists::Streamed, streamed);
        assert_eq!(started, [StreamingList]);
        assert_eq!(delivered, ["-", "streamed", "-"]);

        let (started, delivered) = run(Lists::Streamed, vec![refusal(422, GATE_OFF)]);
        assert_eq!(started, [StreamingList, ListWatch]);
        assert_eq!(
            delivered,
            ["-", "paged", "-"],
            "the refusal is not passed on"
        );

        // another error is the watch's to retry, not a reason to page
        let (started, delivered) = run(Lists::Streamed, vec![refusal(403, "forbidden")]);
        assert_eq!(started, [StreamingList]);
        assert_eq!(delivered, ["error"]);

        let (started, delivered) = run(Lists::Paged, Vec::new());
        assert_eq!(started, [ListWatch]);
        assert_eq!(delivered, ["-", "paged", "-"]);
    }
}
