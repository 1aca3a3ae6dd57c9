//! Admission of custom resources as the apiserver does it, from a CRD's schema: the same checks
//! [`FakeApi`](crate::fake::FakeApi) runs on every write, for a test or a validating webhook
//! to run on its own objects.
//!
//! ```
//! use operator_gen_runtime::admission::Validator;
//! use serde_json::json;
//!
//! let schema = serde_json::from_value(json!({
//!     "type": "object",
//!     "properties": {"spec": {"type": "object", "properties": {
//!         "size": {"type": "integer", "maximum": 3, "default": 1},
//!     }}},
//! }))
//! .expect("a schema");
//! let validator = Validator::new("example.com", "Memcached", schema);
//! let stored = validator
//!     .admit(json!({"metadata": {"name": "m"}, "spec": {"unknown": true}}))
//!     .expect("admitted");
//! assert_eq!(stored["spec"], json!({"size": 1}));
//! let refused = validator
//!     .admit(json!({"metadata": {"name": "m"}, "spec": {"size": 4}}))
//!     .expect_err("refused");
//! assert_eq!(refused.causes[0].field, "spec.size");
//! assert_eq!(
//!     refused.message(),
//!     "Memcached.example.com \"m\" is invalid: spec.size: Invalid value: 4: \
//!      spec.size in body should be less than or equal to 3"
//! );
//! ```
//!
//! What [`Validator::admit`] does, in the apiserver's order:
//!
//! 1. **Pruning**: fields the schema does not name are removed, except under
//!    `x-kubernetes-preserve-unknown-fields` and the `apiVersion`, `kind` and `metadata` of the
//!    object and of embedded resources.
//! 2. `null` values of fields that are neither `nullable` nor defaulted are removed.
//! 3. **Defaulting**: absent fields (and `null` ones that may not be `null`) get their
//!    `default`, inside defaults too.
//! 4. **The schema**: `type` (an integral `number` is an `integer`; `x-kubernetes-int-or-string`
//!    is either), `nullable`, `format` (the `int32`, `int64` and `float` ranges, and the string
//!    formats the apiserver checks: `bsonobjectid`, `uri`, `email`, `hostname`, `ipv4`, `ipv6`,
//!    `cidr`, `mac`,
//!    `uuid`, `uuid3`, `uuid4`, `uuid5`, `isbn`, `isbn10`, `isbn13`, `creditcard`, `ssn`,
//!    `hexcolor`, `rgbcolor`, `byte`, `password`, `date`, `date-time`, `duration`,
//!    `k8s-short-name`, `k8s-long-name`), `enum`, `pattern`, `minLength`/`maxLength` (in
//!    characters), `minimum`/`maximum` (and exclusive), `multipleOf`,
//!    `minItems`/`maxItems`, `uniqueItems`, `minProperties`/`maxProperties`, `required`,
//!    `allOf`/`anyOf`/`oneOf`/`not`; `x-kubernetes-embedded-resource` objects need a non-empty
//!    `apiVersion` and `kind`; `x-kubernetes-list-type: set` lists hold no value twice and
//!    `map` lists no two items with the same keys.
//! 5. **CEL rules** (`x-kubernetes-validations`), unless step 4 found a missing, unsupported,
//!    too long, too many or mistyped value (as the apiserver, which then says that some rules were not
//!    checked): `message`, `messageExpression`, `reason` and `fieldPath`; a rule that fails to
//!    evaluate is an error naming it, worded as the apiserver's; transition rules
//!    (naming `oldSelf`) run on an update where an old value exists, or always with
//!    `optionalOldSelf`, `oldSelf` then an optional.
//!
//! On an update ([`Validator::admit_update`]), a value equal to the one it replaces (matched by
//! field name, and by key in `map` lists) is not checked again, as the apiserver ratchets.
//!
//! The CEL environment has CEL's standard library and macros and the libraries the apiserver
//! adds, with its results and error messages: the strings extension and `format`, Kubernetes'
//! lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), `sets`, regex `find` and
//! `findAll`, and the `url`, `ip`, `cidr`, `quantity` and `semver` values with their members
//! (see the book's runtime reference for the list). Not there: the lists `includes` and the
//! strings `reverse` (which the 1.37 apiserver refuses in a CRD), durations and timestamps, and
//! CEL cost limits. Not checked either:
//! `metadata` (name, labels), whose checks are not the schema's.

mod embedded;
mod errors;
mod format;
mod formats;
mod library;
mod lists;
mod net;
mod path;
mod prune;
mod quantity;
mod rules;
mod semver;
mod strings;
mod structural;
mod url;
mod values;
mod walk;

use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use serde::Serialize;
use serde_json::Value;

pub use errors::{ErrorType, FieldError, Invalid};

/// The detail of the error the apiserver adds when a blocking error kept rules from running.
const RULES_SKIPPED: &str = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

/// Admits objects of one kind as the apiserver does with its CRD's schema.
#[derive(Debug, Clone)]
pub struct Validator {
    group: String,
    kind: String,
    schema: Arc<JSONSchemaProps>,
}

impl Validator {
    /// Validates objects of `group` and `kind` against `schema` (a CRD version's
    /// `openAPIV3Schema`).
    pub fn new(group: &str, kind: &str, schema: JSONSchemaProps) -> Self {
        Validator {
            group: group.to_owned(),
            kind: kind.to_owned(),
            schema: Arc::new(schema),
        }
    }

    /// The validator of `crd`'s `version`; `None` when the CRD has no such version or no
    /// schema for it.
    pub fn from_crd(crd: &CustomResourceDefinition, version: &str) -> Option<Self> {
        let served = crd.spec.versions.iter().find(|v| v.name == version)?;
        let schema = served.schema.as_ref()?.open_api_v3_schema.clone()?;
        Some(Validator::new(
            &crd.spec.group,
            &crd.spec.names.kind,
            schema,
        ))
    }

    /// What a create of `obj` stores (pruned and defaulted), or the apiserver's refusal.
    pub fn admit(&self, obj: Value) -> Result<Value, Invalid> {
        self.admit_over(obj, None)
    }

    /// What an update of `old` to `obj` stores, or the refusal; transition rules see `old`.
    pub fn admit_update(&self, obj: Value, old: &Value) -> Result<Value, Invalid> {
        self.admit_over(obj, Some(old))
    }

    /// [`admit`](Self::admit) of a typed object: `Ok` when the apiserver would create it.
    pub fn check<K: Serialize>(&self, obj: &K) -> Result<(), Invalid> {
        self.admit(serde_json::to_value(obj).unwrap_or_default())
            .map(drop)
    }

    /// [`admit_update`](Self::admit_update) of typed objects: `Ok` when the apiserver would
    /// update `old` to `obj`.
    pub fn check_update<K: Serialize>(&self, obj: &K, old: &K) -> Result<(), Invalid> {
        let old = serde_json::to_value(old).unwrap_or_default();
        self.admit_update(serde_json::to_value(obj).unwrap_or_default(), &old)
            .map(drop)
    }

    /// Prunes, drops the nulls and sets the defaults of `obj`, as the apiserver does to what
    /// it receives.
    pub fn prepare(&self, obj: &mut Value) {
        prune::prune(&self.schema, obj, true);
        prune::drop_nulls(&self.schema, obj);
        prune::default(&self.schema, obj);
    }

    /// What is wrong with a prepared `obj` (replacing `old` on an update), in the order the
    /// apiserver finds it.
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let s = &self.schema;
        let mut errs = Vec::new();
        structural::check(s, obj, "", old, &mut errs);
        embedded::check(s, obj, "", &mut errs);
        let mut old_lists = Vec::new();
        if let Some(old) = old {
            lists::check(s, old, "", &mut old_lists);
        }
        if old_lists.is_empty() {
            lists::check(s, obj, "", &mut errs);
        }
        let blocking = errs.iter().any(|e| {
            matches!(
                e.kind,
                ErrorType::NotSupported
                    | ErrorType::Required
                    | ErrorType::TooLong
                    | ErrorType::TooMany
                    | ErrorType::TypeInvalid
            )
        });
        if blocking {
            errs.push(FieldError::new(
                ErrorType::Invalid,
                "",
                Some(Value::Null),
                RULES_SKIPPED.into(),
            ));
        } else {
            errs.extend(rules::check(s, obj, old));
        }
        errs
    }

    fn admit_over(&self, mut obj: Value, old: Option<&Value>) -> Result<Value, Invalid> {
        self.prepare(&mut obj);
        let causes = self.validate(&obj, old);
        if causes.is_empty() {
            return Ok(obj);
        }
        Err(Invalid {
            group: self.group.clone(),
            kind: self.kind.clone(),
            name: obj["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            causes,
        })
    }
}

#[cfg(test)]
mod library_tests;
#[cfg(test)]
mod tests;
