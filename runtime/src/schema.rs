//! The schema trait the derives implement: each type hands over its IR and the definitions of
//! the types it mentions, so `crd()` runs the same emitters `operator-gen manifests` runs.

pub use operator_gen_codegen::schema::Definition;

/// A type with a CRD schema. Implement it with `#[derive(Schema)]` (or `#[derive(CustomResource)]`
/// on a spec struct); the definition is read by `crd()` at run time.
pub trait Schema {
    fn definition() -> Definition;
}
