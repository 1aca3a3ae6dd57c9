//! The hooks a binary implements: defaulting, validating and converting.

/// Warnings returned to the API client with an allowed (or denied) request.
pub type Warnings = Vec<String>;

/// Why a hook denied a request or could not convert an object; the API client sees its
/// message (`Display`). Any error converts into it, and so do `String` and `&str`: write
/// `Err("message".into())`, `Err(format!(...).into())`, or `?` on another error.
pub type HookError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Sets defaults on an object before it is stored (a mutating webhook on create and update);
/// the server answers with the JSON patch from the object as sent to the defaulted one.
pub trait Defaulter<K>: Send + Sync + 'static {
    /// Sets the defaults on `obj`.
    fn default(&self, obj: &mut K);
}

/// Accepts or rejects objects (a validating webhook); `Err(error)` denies the request and the
/// API client sees the error's message, `Ok(warnings)` admits it with those warnings.
pub trait Validator<K>: Send + Sync + 'static {
    /// Checks an object being created.
    fn validate_create(&self, obj: &K) -> Result<Warnings, HookError>;

    /// Checks an update from `old` to `new`; admits everything unless implemented.
    fn validate_update(&self, old: &K, new: &K) -> Result<Warnings, HookError> {
        let _ = (old, new);
        Ok(Warnings::new())
    }

    /// Checks an object being deleted; admits everything unless implemented.
    fn validate_delete(&self, obj: &K) -> Result<Warnings, HookError> {
        let _ = obj;
        Ok(Warnings::new())
    }
}

/// Converts custom resources between the versions of their CRD (the CRD's `conversion:
/// Webhook` strategy, served on `/convert`).
pub trait Converter: Send + Sync + 'static {
    /// Returns `object` (a whole custom resource as JSON) as `desired_api_version`
    /// (`group/version`); the result's `apiVersion` must be the desired one, its `metadata`
    /// unchanged but for labels and annotations.
    fn convert(
        &self,
        object: serde_json::Value,
        desired_api_version: &str,
    ) -> Result<serde_json::Value, HookError>;

    /// Whether this converter converts `object` (by its `apiVersion` group and `kind`): with
    /// several converters on one server, `/convert` gives each object to the first that does.
    /// Every object unless implemented.
    fn converts(&self, object: &serde_json::Value) -> bool {
        let _ = object;
        true
    }
}
