//! The listers of a kind (code-generator's lister-gen): reads from an informer's cache, and for
//! a namespaced kind the reads of one namespace.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub(super) fn emit(kind: &syn::Ident, vis: &syn::Visibility, namespaced: bool) -> TokenStream {
    let rt = quote!(::operator_gen_runtime);
    let lister = format_ident!("{}Lister", kind);
    let ns_lister = format_ident!("{}NamespaceLister", kind);
    let informer = format_ident!("{}Informer", kind);
    let lister_doc = format!("Reads {kind} objects from a cache (see `{informer}`).");
    let ns_alias = if namespaced {
        let doc = format!("Reads the {kind} objects of one namespace from a cache.");
        quote! {
            #[doc = #doc]
            #vis type #ns_lister = #rt::cache::NamespaceLister<#kind>;
        }
    } else {
        quote!()
    };
    quote! {
        #[doc = #lister_doc]
        #vis type #lister = #rt::cache::Lister<#kind>;
        #ns_alias
    }
}
