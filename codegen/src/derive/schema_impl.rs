//! The `Schema` impl of a derived type: its IR, recorded as JSON, and the definitions of the
//! named types it mentions, so `crd()` composes at run time what the scan computes.

use crate::ir::TypeDef;
use crate::lower::Errors;
use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn emit(ident: &syn::Ident, def: &TypeDef, errors: &mut Errors) -> TokenStream {
    let ir = match serde_json::to_string(def) {
        Ok(s) => s,
        Err(e) => {
            errors.push(ident.span(), format!("cannot record the IR: {e}"));
            return TokenStream::new();
        }
    };
    let deps = crate::ir::named_paths(def).into_iter().filter_map(|p| {
        let path: syn::Path = syn::parse_str(&p).ok()?;
        Some(quote! { (#p, <#path as ::operator_gen_runtime::Schema>::definition as fn() -> ::operator_gen_runtime::schema::Definition) })
    });
    quote! {
        impl ::operator_gen_runtime::Schema for #ident {
            fn definition() -> ::operator_gen_runtime::schema::Definition {
                ::operator_gen_runtime::schema::Definition::from_ir(#ir, ::std::vec![#(#deps),*])
            }
        }
    }
}
