//! The schema trait the derives implement: each type hands over its IR and the definitions of
//! the types it mentions, so `crd()` runs the same emitters `operator-gen manifests` runs.

pub use operator_gen_codegen::schema::Definition;

/// A type with a CRD schema. Implement it with `#[derive(Schema)]` (or `#[derive(CustomResource)]`
/// on a spec struct); the definition is read by `crd()` at run time. Kubernetes types (from
/// operator-gen's table, for the k8s-openapi version the project selects), `serde_json::Value`
/// and jiff's time types implement it here, so the compiler resolves a field's type by its full
/// path, as `operator-gen manifests` does.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no CRD schema",
    label = "this type has no schema",
    note = "derive Schema for types of this crate; operator-gen knows Kubernetes types (its table covers the k8s-openapi types of the Kubernetes release it was built from), serde_json::Value and jiff timestamps and durations"
)]
pub trait Schema {
    fn definition() -> Definition;
}

operator_gen_macros::__kubernetes_schema_impls!();

macro_rules! known {
    ($($ty:ty => $path:literal),* $(,)?) => {
        $(impl Schema for $ty {
            fn definition() -> Definition {
                Definition::known($path)
            }
        }
        impl crate::apply::Apply for $ty {
            type Configuration = Self;
        })*
    };
}

known! {
    serde_json::Value => "serde_json::Value",
    k8s_openapi::jiff::Timestamp => "jiff::Timestamp",
    k8s_openapi::jiff::Zoned => "jiff::Zoned",
    k8s_openapi::jiff::SignedDuration => "jiff::SignedDuration",
    k8s_openapi::jiff::Span => "jiff::Span",
}
