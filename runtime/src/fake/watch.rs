//! Watches: the changes each open watch sees, sent as newline-delimited JSON events, and the
//! history a watch from a `resourceVersion` replays.

use futures::channel::mpsc;
use hyper::body::Bytes;
use serde_json::{Value, json};

use super::resource::{ResourceType, served};
use super::select::Selector;

/// One change, as watches see it.
#[derive(Debug, Clone)]
pub(super) struct Change {
    pub(super) revision: u64,
    pub(super) group: String,
    pub(super) plural: String,
    pub(super) kind: &'static str,
    pub(super) object: Value,
    /// The version a MODIFIED change replaced.
    pub(super) before: Option<Value>,
}

/// An open watch.
pub(super) struct Watch {
    ty: ResourceType,
    namespace: Option<String>,
    selector: Selector,
    lines: mpsc::UnboundedSender<Bytes>,
}

impl Watch {
    /// A watch of `ty`'s objects in `namespace` (all when `None`) that `selector` selects, and
    /// the stream its events go to.
    pub(super) fn new(
        ty: ResourceType,
        namespace: Option<String>,
        selector: Selector,
    ) -> (Self, mpsc::UnboundedReceiver<Bytes>) {
        let (lines, rx) = mpsc::unbounded();
        let watch = Watch {
            ty,
            namespace,
            selector,
            lines,
        };
        (watch, rx)
    }

    /// How this watch sees `change`, if at all: a modification that takes an object into its
    /// selector is ADDED, one that takes it out is DELETED, as the apiserver's watch sends them.
    pub(super) fn sees(&self, change: &Change) -> Option<&'static str> {
        let ours = change.group == self.ty.store_group
            && change.plural == self.ty.plural
            && self
                .namespace
                .as_deref()
                .is_none_or(|ns| change.object["metadata"]["namespace"].as_str() == Some(ns));
        if !ours {
            return None;
        }
        let now = self.selector.matches(&change.object);
        let was = change
            .before
            .as_ref()
            .is_some_and(|b| self.selector.matches(b));
        match (change.kind, was, now) {
            ("MODIFIED", true, true) => Some("MODIFIED"),
            ("MODIFIED", false, true) => Some("ADDED"),
            ("MODIFIED", true, false) => Some("DELETED"),
            ("MODIFIED", false, false) => None,
            (kind, _, true) => Some(kind),
            _ => None,
        }
    }
}

/// One line of a watch stream: `{"type": kind, "object": object}` and a newline.
pub(super) fn line(kind: &str, object: &Value) -> Bytes {
    let mut text =
        serde_json::to_vec(&json!({ "type": kind, "object": object })).unwrap_or_default();
    text.push(b'\n');
    Bytes::from(text)
}

/// The open watches and every change so far.
#[derive(Default)]
pub(super) struct Watches {
    history: Vec<Change>,
    open: Vec<Watch>,
}

impl Watches {
    /// The events of the changes after `revision` that `watch` sees, as its resource serves them.
    pub(super) fn since(&self, revision: u64, watch: &Watch) -> Vec<Bytes> {
        self.history
            .iter()
            .filter(|c| c.revision > revision)
            .filter_map(|change| {
                let kind = watch.sees(change)?;
                Some(line(kind, &served(&watch.ty, &change.object)))
            })
            .collect()
    }

    /// Sends `first` to `watch`, then keeps it open for the changes to come.
    pub(super) fn add(&mut self, watch: Watch, first: Vec<Bytes>) {
        for l in first {
            let _ = watch.lines.unbounded_send(l);
        }
        self.open.push(watch);
    }

    /// Sends `change` to every watch that sees it, closes the watches whose client left, and
    /// keeps the change for the watches opened from an earlier revision.
    pub(super) fn publish(&mut self, change: Change) {
        self.open.retain(|w| {
            let Some(kind) = w.sees(&change) else {
                return !w.lines.is_closed();
            };
            let object = served(&w.ty, &change.object);
            w.lines.unbounded_send(line(kind, &object)).is_ok()
        });
        self.history.push(change);
    }
}
