//! The informer of a kind (code-generator's informer-gen): a local cache kept by a watch, and
//! the constructor on the root type that starts one.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub(super) fn emit(kind: &syn::Ident, vis: &syn::Visibility) -> TokenStream {
    let rt = quote!(::operator_gen_runtime);
    let kube = quote!(#rt::kube);
    let informer = format_ident!("{}Informer", kind);
    let informer_doc = format!("Keeps a local cache of {kind} objects; `lister()` reads it.");
    quote! {
        impl #kind {
            /// Starts an informer for this kind over `api`.
            pub fn informer(api: #kube::Api<#kind>, config: #kube::runtime::watcher::Config) -> #informer {
                #rt::cache::Informer::start(api, config)
            }
        }

        #[doc = #informer_doc]
        #vis type #informer = #rt::cache::Informer<#kind>;
    }
}
