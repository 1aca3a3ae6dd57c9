//! The HTTP side of the fake: request bodies and query strings in, JSON documents and watch
//! streams out, refusals as `metav1.Status` bodies.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame};
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

use super::failure::{Failure, Result};

/// The body of every answer: a whole JSON document, or a watch's stream of lines.
pub(super) type Body = UnsyncBoxBody<Bytes, Infallible>;

pub(super) fn parse(body: &[u8]) -> Result<Value> {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) if v.is_object() || v.is_array() => Ok(v),
        Ok(_) => Err(Failure::bad_request("the body is not a JSON object".into())),
        Err(e) => Err(Failure::bad_request(format!(
            "the body is not valid JSON: {e}"
        ))),
    }
}

pub(super) fn answer(code: StatusCode, body: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut resp = Response::new(Full::new(Bytes::from(bytes)).boxed_unsync());
    *resp.status_mut() = code;
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    resp
}

pub(super) fn stream(lines: mpsc::UnboundedReceiver<Bytes>, timeout: Duration) -> Response<Body> {
    let frames = lines
        .take_until(tokio::time::sleep(timeout))
        .map(|line| Ok::<_, Infallible>(Frame::data(line)));
    let mut resp = Response::new(BodyExt::boxed_unsync(StreamBody::new(frames)));
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    resp
}

/// The query string, percent-decoded.
pub(super) struct Query(BTreeMap<String, String>);

impl Query {
    pub(super) fn parse(text: &str) -> Self {
        Query(
            text.split('&')
                .filter(|p| !p.is_empty())
                .map(|pair| {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    (decode(k), decode(v))
                })
                .collect(),
        )
    }

    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
}

pub(super) fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'+', _) => out.push(b' '),
            (b'%', Some(b)) => {
                out.push(b);
                i += 2;
            }
            (b, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An opaque `continue` token: the list's revision and the last key served, hex-encoded.
pub(super) fn write_continue(revision: u64, namespace: &str, name: &str) -> String {
    format!("{revision}\0{namespace}\0{name}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(super) fn read_continue(token: &str) -> Option<(u64, String, String)> {
    let bytes: Option<Vec<u8>> = (0..token.len())
        .step_by(2)
        .map(|i| {
            token
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect();
    let text = String::from_utf8(bytes?).ok()?;
    let mut parts = text.split('\0');
    let revision = parts.next()?.parse().ok()?;
    let namespace = parts.next()?.to_owned();
    let name = parts.next()?.to_owned();
    Some((revision, namespace, name))
}

impl From<Failure> for Response<Body> {
    fn from(f: Failure) -> Self {
        let mut body = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f.message, "reason": f.reason, "code": f.code,
        });
        if let Some(details) = f.details {
            body["details"] = details;
        }
        let code = StatusCode::from_u16(f.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        answer(code, &body)
    }
}
