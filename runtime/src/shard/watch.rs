//! The list and watch of one shard: kube's watcher, whose requests carry the shard's
//! `shardSelector` when the apiserver honours it, and whose events of other shards' objects are
//! dropped before anything caches them (all of them when the apiserver does not filter; none
//! when it does, as it picks the same objects).

use std::fmt::Debug;
use std::time::Duration;

use futures::{Stream, StreamExt, TryStreamExt, future};
use hyper::{Request, Uri};
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

use super::range::{Selection, Shard};

/// The first wait before asking the apiserver again after a failed [`honours_selector`].
const FIRST_RETRY: Duration = Duration::from_secs(1);
/// The longest wait between two attempts.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// kube's `watcher(api, config)` for the objects of `shard` only. With more than one shard, it
/// first settles how ([`Shard::selection`]; [`Selection::Auto`] asks [`honours_selector`]):
/// by the server, every list and watch request then carrying the shard's
/// [`selector`](Shard::selector), or by the client. Either way the events of objects the shard
/// does not [own](Shard::owns) are dropped, so a cache fed by the stream holds the shard's
/// objects only.
pub fn watcher<K>(
    api: Api<K>,
    config: watcher::Config,
    shard: Shard,
) -> impl Stream<Item = watcher::Result<Event<K>>> + Send
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    K::DynamicType: Default,
{
    futures::stream::once(async move {
        let server = match (shard.selector(), shard.selection()) {
            (None, _) | (Some(_), Selection::Client) => false,
            (Some(_), Selection::Server) => true,
            (Some(_), Selection::Auto) => honours_selector(&api, &shard).await,
        };
        if shard.count() > 1 {
            tracing::info!(
                resource = api.resource_url(),
                shard = shard.index(),
                of = shard.count(),
                by = if server { "server" } else { "client" },
                "watching one shard"
            );
        }
        let api = match shard.selector() {
            Some(selector) if server => selecting(&api, &selector),
            _ => api,
        };
        kube::runtime::watcher(api, config)
    })
    .flatten()
    .try_filter_map(move |event| future::ready(Ok(keep(event, &shard))))
}

/// Whether the apiserver filters `api`'s lists by `shard`'s selector: it answers a list of at
/// most one object, asked with the selector, with `metadata.shardInfo` (Kubernetes 1.36 and
/// later with the feature gate `ShardedListAndWatch` on; an apiserver without the gate ignores
/// the parameter and sends every object). An error answer from the apiserver (the selector
/// refused) is a no; a failed request is tried again, after 1 s doubling up to 30 s. `false`
/// for a single shard.
pub async fn honours_selector<K>(api: &Api<K>, shard: &Shard) -> bool
where
    K: Resource + Clone,
    K::DynamicType: Default,
{
    let Some(selector) = shard.selector() else {
        return false;
    };
    let client = selecting(api, &selector).into_client();
    let url = format!("{}?limit=1", all_url::<K>());
    let mut wait = FIRST_RETRY;
    loop {
        match probe(&client, &url).await {
            Ok(answer) => return answer,
            Err(kube::Error::Api(status)) => {
                tracing::warn!(%status, %selector, "the apiserver refused the shard selector; the client keeps to the shard");
                return false;
            }
            Err(error) => {
                tracing::warn!(%error, ?wait, "cannot ask the apiserver whether it filters by shard; retrying");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(MAX_RETRY);
            }
        }
    }
}

async fn probe(client: &Client, url: &str) -> kube::Result<bool> {
    let request = Request::get(url)
        .body(Vec::new())
        .map_err(kube::Error::HttpError)?;
    let list: serde_json::Value = client.request(request).await?;
    Ok(list["metadata"]["shardInfo"]["selector"].is_string())
}

/// `event`, unless it is of an object `shard` does not own.
fn keep<K: Resource>(event: Event<K>, shard: &Shard) -> Option<Event<K>> {
    match &event {
        Event::Apply(obj) | Event::InitApply(obj) | Event::Delete(obj) if !shard.owns(obj) => None,
        _ => Some(event),
    }
}

/// The collection URL of `K` in every namespace.
fn all_url<K: Resource>() -> String
where
    K::DynamicType: Default,
{
    K::url_path(&K::DynamicType::default(), None)
}

/// `api` with a client that sends each request for [`all_url`] to `api`'s own collection URL
/// (its namespace's, for a namespaced `api`) with `shardSelector=<selector>` added to the query.
fn selecting<K>(api: &Api<K>, selector: &str) -> Api<K>
where
    K: Resource + Clone,
    K::DynamicType: Default,
{
    let inner = api.clone().into_client();
    let namespace = inner.default_namespace().to_owned();
    let from = all_url::<K>();
    let to = api.resource_url().to_owned();
    let parameter: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("shardSelector", selector)
        .finish();
    let service = tower::service_fn(move |request: Request<kube::client::Body>| {
        let request = redirect(request, &from, &to, &parameter);
        let inner = inner.clone();
        async move { inner.send(request).await }
    });
    Api::all_with(Client::new(service, namespace), &K::DynamicType::default())
}

/// `request` sent to `to` with `parameter` added to its query, when its path is `from`.
fn redirect<B>(mut request: Request<B>, from: &str, to: &str, parameter: &str) -> Request<B> {
    if request.uri().path() != from {
        return request;
    }
    let target = match request.uri().query() {
        Some(query) if !query.is_empty() => format!("{to}?{query}&{parameter}"),
        _ => format!("{to}?{parameter}"),
    };
    if let Ok(uri) = target.parse::<Uri>() {
        *request.uri_mut() = uri;
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::tests::{uid, with_uid};
    use k8s_openapi::api::core::v1::ConfigMap;
    use std::sync::{Arc, Mutex};

    #[test]
    fn requests_for_every_namespace_go_to_the_api_s_own_with_the_selector() {
        let parameter = "shardSelector=shardRange%28x%29";
        let request = Request::get("/api/v1/configmaps?limit=500&watch=true")
            .body(())
            .expect("request");
        let moved = redirect(
            request,
            "/api/v1/configmaps",
            "/api/v1/namespaces/a/configmaps",
            parameter,
        );
        assert_eq!(
            moved.uri().to_string(),
            "/api/v1/namespaces/a/configmaps?limit=500&watch=true&shardSelector=shardRange%28x%29"
        );
        let bare = Request::get("/api/v1/configmaps")
            .body(())
            .expect("request");
        let moved = redirect(bare, "/api/v1/configmaps", "/api/v1/configmaps", parameter);
        assert_eq!(
            moved.uri().to_string(),
            "/api/v1/configmaps?shardSelector=shardRange%28x%29"
        );
        let other = Request::get("/api/v1/namespaces")
            .body(())
            .expect("request");
        let kept = redirect(other, "/api/v1/configmaps", "/x", parameter);
        assert_eq!(kept.uri().to_string(), "/api/v1/namespaces");
    }

    #[test]
    fn events_of_other_shards_objects_are_dropped() {
        let shard = Shard::new(0, 2).expect("shard");
        let uids: Vec<String> = (0..64).map(uid).collect();
        let mine = uids
            .iter()
            .find(|u| Shard::hash(u) < 1 << 63)
            .expect("shard 0's");
        let theirs = uids
            .iter()
            .find(|u| Shard::hash(u) >= 1 << 63)
            .expect("shard 1's");
        for event in [
            Event::Apply(with_uid(mine)),
            Event::InitApply(with_uid(mine)),
            Event::Delete(with_uid(mine)),
            Event::Init,
            Event::InitDone,
        ] {
            assert!(keep(event, &shard).is_some());
        }
        for event in [
            Event::Apply(with_uid(theirs)),
            Event::InitApply(with_uid(theirs)),
            Event::Delete(with_uid(theirs)),
        ] {
            assert!(keep(event, &shard).is_none());
        }
    }

    /// A client whose apiserver answers each request with the next of `answers` (status and
    /// body; status 0: the connection fails), and records the requests' URIs.
    fn scripted(answers: Vec<(u16, &'static str)>) -> (Client, Arc<Mutex<Vec<String>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answers = Arc::new(Mutex::new(answers.into_iter()));
        let record = seen.clone();
        let service = tower::service_fn(move |request: Request<kube::client::Body>| {
            record.lock().expect("lock").push(request.uri().to_string());
            let next = answers.lock().expect("lock").next();
            async move {
                match next {
                    Some((0, _)) | None => Err("connection refused".into()),
                    Some((status, body)) => hyper::Response::builder()
                        .status(status)
                        .body(http_body_util::Full::new(hyper::body::Bytes::from(body)))
                        .map_err(|e| -> Box<dyn std::error::Error + Send + Sync> { e.into() }),
                }
            }
        });
        (Client::new(service, "default"), seen)
    }

    const SHARDED_LIST: &str = r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"shardInfo":{"selector":"x"}},"items":[]}"#;
    const LIST: &str = r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[]}"#;
    const REFUSED: &str = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"invalid shard selector","reason":"BadRequest","code":400}"#;

    #[tokio::test(start_paused = true)]
    async fn the_probe_asks_with_the_selector_and_reads_shard_info() {
        let shard = Shard::new(2, 4).expect("shard");
        let (client, seen) = scripted(vec![(0, ""), (0, ""), (0, ""), (200, SHARDED_LIST)]);
        let api: Api<ConfigMap> = Api::namespaced(client, "a");
        let start = tokio::time::Instant::now();
        assert!(honours_selector(&api, &shard).await);
        // a failed request is asked again after 1 s, then 2 s, then 4 s
        assert_eq!(start.elapsed(), Duration::from_secs(7));
        let uris = seen.lock().expect("lock").clone();
        let asked = "/api/v1/namespaces/a/configmaps?limit=1&shardSelector=shardRange%28object.metadata.uid%2C+%270x8000000000000000%27%2C+%270xc000000000000000%27%29";
        assert_eq!(uris, [asked; 4]);

        let (client, _) = scripted(vec![(200, LIST)]);
        let api: Api<ConfigMap> = Api::namespaced(client, "a");
        assert!(!honours_selector(&api, &shard).await);

        let (client, _) = scripted(vec![(400, REFUSED)]);
        let api: Api<ConfigMap> = Api::namespaced(client, "a");
        assert!(!honours_selector(&api, &shard).await);

        assert!(!honours_selector(&api, &Shard::ALL).await);
    }
}
