//! Admission webhooks registered with the fake: defaulters run as mutating webhooks and
//! validators as validating webhooks on the creates and updates of their kind, as the
//! apiserver calls the webhooks the scaffold configures (`m<kind>-<version>.kb.io` and
//! `v<kind>-<version>.kb.io`, operations CREATE and UPDATE, not the status subresource).

use std::sync::Arc;

use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::webhook::{Defaulter, Validator as WebhookValidator};

use super::failure::{Failure, Result};
use super::resource::ResourceType;

/// A defaulter on JSON: the object defaulted, or why it could not be read.
type Mutate = Arc<dyn Fn(Value) -> std::result::Result<Value, String> + Send + Sync>;

/// A validator on JSON: the new object and the old one on an update; `Err` is a denial.
type Check = Arc<dyn Fn(&Value, Option<&Value>) -> Verdict + Send + Sync>;

/// A validating webhook's answer: admitted, denied with a message, or an object it cannot read.
enum Verdict {
    Admitted,
    Denied(String),
    Unreadable(String),
}

/// One webhook: the kind it serves, its name, and what it runs.
#[derive(Clone)]
struct Hook<F> {
    group: String,
    version: String,
    kind: String,
    name: String,
    run: F,
}

impl<F> Hook<F> {
    fn new<K: Resource<DynamicType = ()>>(prefix: char, run: F) -> Self {
        let (version, kind) = (K::version(&()).into_owned(), K::kind(&()).into_owned());
        Hook {
            group: K::group(&()).into_owned(),
            name: format!("{prefix}{}-{version}.kb.io", kind.to_lowercase()),
            version,
            kind,
            run,
        }
    }

    fn serves(&self, ty: &ResourceType) -> bool {
        self.group == ty.group && self.version == ty.version && self.kind == ty.kind
    }
}

/// The webhooks of a fake.
#[derive(Clone, Default)]
pub(super) struct Hooks {
    mutating: Vec<Hook<Mutate>>,
    validating: Vec<Hook<Check>>,
}

fn read<K: DeserializeOwned>(v: &Value) -> std::result::Result<K, String> {
    serde_json::from_value(v.clone()).map_err(|e| format!("cannot decode the object: {e}"))
}

impl Hooks {
    pub(super) fn add_defaulter<K>(&mut self, defaulter: impl Defaulter<K>)
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + 'static,
    {
        let run: Mutate = Arc::new(move |obj| {
            let mut typed: K = read(&obj)?;
            defaulter.default(&mut typed);
            serde_json::to_value(&typed).map_err(|e| format!("cannot encode the object: {e}"))
        });
        self.mutating.push(Hook::new::<K>('m', run));
    }

    pub(super) fn add_validator<K>(&mut self, validator: impl WebhookValidator<K>)
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + 'static,
    {
        let run: Check = Arc::new(move |obj, old| {
            let verdict = read::<K>(obj).and_then(|new| match old {
                None => Ok(validator.validate_create(&new)),
                Some(old) => read::<K>(old).map(|old| validator.validate_update(&old, &new)),
            });
            match verdict {
                Ok(Ok(_warnings)) => Verdict::Admitted,
                Ok(Err(error)) => Verdict::Denied(error.to_string()),
                Err(unreadable) => Verdict::Unreadable(unreadable),
            }
        });
        self.validating.push(Hook::new::<K>('v', run));
    }

    /// `obj` after the mutating webhooks of its kind.
    pub(super) fn mutate(&self, ty: &ResourceType, mut obj: Value) -> Result<Value> {
        for hook in self.mutating.iter().filter(|h| h.serves(ty)) {
            obj = (hook.run)(obj).map_err(|e| denied(&hook.name, 400, "BadRequest", &e))?;
        }
        Ok(obj)
    }

    /// Whether the validating webhooks of its kind admit `obj` (replacing `old`).
    pub(super) fn validate(
        &self,
        ty: &ResourceType,
        obj: &Value,
        old: Option<&Value>,
    ) -> Result<()> {
        for hook in self.validating.iter().filter(|h| h.serves(ty)) {
            match (hook.run)(obj, old) {
                Verdict::Admitted => {}
                Verdict::Denied(m) => return Err(denied(&hook.name, 403, "Forbidden", &m)),
                Verdict::Unreadable(m) => return Err(denied(&hook.name, 400, "BadRequest", &m)),
            }
        }
        Ok(())
    }
}

/// The apiserver's answer when a webhook denies a request.
fn denied(name: &str, code: u16, reason: &'static str, message: &str) -> Failure {
    Failure::new(
        code,
        reason,
        format!("admission webhook \"{name}\" denied the request: {message}"),
    )
}
