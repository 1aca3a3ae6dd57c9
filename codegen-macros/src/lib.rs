//! Derive macros of operator-gen, a thin shim over `operator-gen-codegen`: it parses the item,
//! asks codegen for the expansion, and turns codegen's errors into `compile_error!` next to
//! stub impls, so the user sees one error and not a cascade.

use operator_gen_codegen::derive::{self, Derive};
use proc_macro::TokenStream;

/// Generates the root type of a custom resource from its spec struct, with `kube::Resource`,
/// `HasSpec`, `HasStatus`, `new`, `crd()` and `crd_yaml()`. See the crate README for `#[k8s]`.
#[proc_macro_derive(CustomResource, attributes(k8s))]
pub fn derive_custom_resource(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand(&input, Derive::CustomResource)
}

/// Implements `operator_gen_runtime::Schema` so the type can be used inside a custom resource.
#[proc_macro_derive(Schema, attributes(k8s))]
pub fn derive_schema(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand(&input, Derive::Schema)
}

/// Implements `Schema` for every type of operator-gen's table of Kubernetes types, each gated on
/// the k8s-openapi versions that have it; invoked once, inside `operator-gen-runtime`.
#[doc(hidden)]
#[proc_macro]
pub fn __kubernetes_schema_impls(_input: TokenStream) -> TokenStream {
    derive::kubernetes_schema_impls().into()
}

fn expand(input: &syn::DeriveInput, which: Derive) -> TokenStream {
    match derive::expand(input, which) {
        Ok(tokens) => tokens.into(),
        Err(errors) => {
            let mut out: proc_macro2::TokenStream = derive::reported(&errors)
                .map(|(e, span)| syn::Error::new(*span, &e.message).to_compile_error())
                .collect();
            out.extend(derive::stubs(input, which));
            out.into()
        }
    }
}
