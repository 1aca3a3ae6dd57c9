//! The derives' expansion: one item lowered to the IR, checked, then emitted as tokens (the
//! schema impl, the apply configuration, the root type, its typed client, lister and informer). The proc-macro crate only
//! parses, calls [`expand`] and turns its errors into `compile_error!` next to [`stubs`].

mod apply;
mod client;
mod informer;
mod lister;
mod root;
mod schema_impl;

use crate::diag::Diagnostic;
use crate::lower::{self, Errors};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

/// Which derive is expanding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Derive {
    /// `#[derive(CustomResource)]` on a spec struct: the schema impl and the root type.
    CustomResource,
    /// `#[derive(Schema)]`: the schema impl only.
    Schema,
}

/// The expansion of `derive` on `input`, or every problem found in it with the span it points at.
pub fn expand(
    input: &syn::DeriveInput,
    derive: Derive,
) -> Result<TokenStream, Vec<(Diagnostic, Span)>> {
    let mut errors = Errors::default();
    let def = lower::type_def(input, &mut errors);
    let derives = lower::Derives {
        custom_resource: derive == Derive::CustomResource,
        schema: derive == Derive::Schema,
        ..Default::default()
    };
    lower::check_derives(input, def.as_ref(), derives, &mut errors);
    let Some(def) = def.filter(|_| errors.is_empty()) else {
        return Err(errors.check_anchored().err().unwrap_or_default());
    };
    let mut out = schema_impl::emit(&input.ident, &def, &mut errors);
    out.extend(apply::emit(input, &def));
    if derive == Derive::CustomResource {
        out.extend(root::emit(input, &def, &mut errors));
    }
    errors.check_anchored().map(|()| out)
}

/// `Schema` impls for every type of the table of Kubernetes types that k8s-openapi has, and
/// `Apply` impls applying each whole, each gated on the k8s-openapi versions that have it; expanded once, inside `operator-gen-runtime`.
pub fn kubernetes_schema_impls() -> TokenStream {
    let mut out = TokenStream::new();
    for (path, versions) in crate::known::k8s_openapi_types() {
        let full = format!("k8s_openapi::{path}");
        let Ok(ty) = syn::parse_str::<syn::Path>(&format!("::{full}")) else {
            continue;
        };
        // meta/v1 Patch is a request body k8s-openapi does not deserialise: it has no apply
        let apply = (path != "apimachinery::pkg::apis::meta::v1::Patch").then(|| {
            quote! {
                impl crate::apply::Apply for #ty {
                    type Configuration = Self;
                }
            }
        });
        let item = quote! {
            impl crate::Schema for #ty {
                fn definition() -> crate::schema::Definition {
                    crate::schema::Definition::known(#full)
                }
            }
            #apply
        };
        let contiguous = versions.windows(2).all(|w| w[1] == w[0] + 1);
        match (versions.first(), versions.last()) {
            (Some(lo), Some(hi)) if contiguous => {
                let ge = format_ident!("k8s_if_ge_1_{}", lo);
                let le = format_ident!("k8s_if_le_1_{}", hi);
                out.extend(quote!(::k8s_openapi::#ge! { ::k8s_openapi::#le! { #item } }));
            }
            _ => {
                for v in versions {
                    let only = format_ident!("k8s_if_1_{}", v);
                    out.extend(quote!(::k8s_openapi::#only! { #item }));
                }
            }
        }
    }
    out
}

/// The errors to report: rustc itself rejects `impl Trait` in a field, so saying it again would
/// be a cascade.
pub fn reported(errors: &[(Diagnostic, Span)]) -> impl Iterator<Item = &(Diagnostic, Span)> {
    errors
        .iter()
        .filter(|(e, _)| e.message != lower::IMPL_TRAIT_FIELD)
}

/// Empty impls standing in for the expansion after an error, so the user sees the error and
/// not a cascade of missing items.
pub fn stubs(input: &syn::DeriveInput, derive: Derive) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut out = quote! {
        impl #impl_generics ::operator_gen_runtime::Schema for #ident #ty_generics #where_clause {
            fn definition() -> ::operator_gen_runtime::schema::Definition { unimplemented!() }
        }
    };
    if derive == Derive::CustomResource {
        let kind = kind_from_attrs(input).unwrap_or_else(|| format_ident!("{}Root", ident));
        out.extend(quote! {
            #[allow(dead_code)]
            pub struct #kind;
        });
    }
    out
}

/// The `kind` of `#[k8s(kind = "...")]`, read leniently: the input may be malformed.
fn kind_from_attrs(input: &syn::DeriveInput) -> Option<syn::Ident> {
    let mut kind = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("k8s")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("kind") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                kind = syn::parse_str::<syn::Ident>(&lit.value()).ok();
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _: proc_macro2::Group = meta.input.parse()?;
            }
            Ok(())
        });
    }
    kind
}
