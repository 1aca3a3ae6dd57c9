//! Refusals: the apiserver's `metav1.Status` codes, reasons and messages.

use serde_json::{Value, json};

use crate::admission::Invalid;

use super::resource::ResourceType;

/// A refusal, answered as a `metav1.Status`.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) code: u16,
    pub(super) reason: &'static str,
    pub(super) message: String,
    pub(super) details: Option<Value>,
}

pub(super) type Result<T, E = Failure> = std::result::Result<T, E>;

impl Failure {
    pub(super) fn new(code: u16, reason: &'static str, message: String) -> Self {
        Failure {
            code,
            reason,
            message,
            details: None,
        }
    }

    pub(super) fn details(mut self, ty: &ResourceType, name: &str) -> Self {
        let mut details = json!({ "name": name, "kind": ty.plural });
        if !ty.group.is_empty() {
            details["group"] = json!(ty.group);
        }
        self.details = Some(details);
        self
    }

    pub(super) fn bad_request(message: String) -> Self {
        Failure::new(400, "BadRequest", message)
    }

    pub(super) fn not_found(ty: &ResourceType, name: &str) -> Self {
        Failure::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", ty.qualified()),
        )
        .details(ty, name)
    }

    pub(super) fn no_resource() -> Self {
        Failure::new(
            404,
            "NotFound",
            "the server could not find the requested resource".into(),
        )
    }

    pub(super) fn already_exists(ty: &ResourceType, name: &str) -> Self {
        Failure::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", ty.qualified()),
        )
        .details(ty, name)
    }

    pub(super) fn conflict(ty: &ResourceType, name: &str, why: &str) -> Self {
        Failure::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                ty.qualified()
            ),
        )
        .details(ty, name)
    }

    pub(super) fn stale(ty: &ResourceType, name: &str) -> Self {
        Failure::conflict(
            ty,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// The apiserver's answer to an object its CRD's schema does not admit.
    pub(super) fn refused(invalid: &Invalid) -> Self {
        let status = invalid.status();
        Failure {
            code: 422,
            reason: "Invalid",
            message: invalid.message(),
            details: Some(status["details"].clone()),
        }
    }

    pub(super) fn invalid(ty: &ResourceType, name: &str, cause: &str) -> Self {
        let mut failure = Failure::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {cause}", ty.qualified_kind()),
        );
        let mut details = json!({ "name": name, "kind": ty.kind });
        if !ty.group.is_empty() {
            details["group"] = json!(ty.group);
        }
        failure.details = Some(details);
        failure
    }
}
