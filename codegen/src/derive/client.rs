//! The typed client of a kind (code-generator's client-gen): a struct over `kube::Api` with the
//! methods its `+genclient` markers allow, and the constructors on the root type.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub(super) fn emit(
    kind: &syn::Ident,
    vis: &syn::Visibility,
    namespaced: bool,
    verbs: &[&str],
) -> TokenStream {
    let rt = quote!(::operator_gen_runtime);
    let kube = quote!(#rt::kube);
    let client = format_ident!("{}Client", kind);
    let client_doc = format!(
        "Typed client for {kind}: the methods its `+genclient` markers allow, over `kube::Api`."
    );
    let has = |v: &str| verbs.contains(&v);
    let mut methods = Vec::new();
    if has("create") {
        methods.push(quote! {
            /// Creates `obj`.
            pub async fn create(&self, obj: &#kind) -> #kube::Result<#kind> {
                self.api.create(&self.post_params(), obj).await
            }
        });
    }
    if has("update") {
        methods.push(quote! {
            /// Replaces the object named like `obj`.
            pub async fn update(&self, obj: &#kind) -> #kube::Result<#kind> {
                self.api.replace(&#kube::ResourceExt::name_any(obj), &self.post_params(), obj).await
            }
        });
    }
    if has("updateStatus") {
        methods.push(quote! {
            /// Replaces the status of the object named like `obj`.
            pub async fn update_status(&self, obj: &#kind) -> #kube::Result<#kind> {
                self.api.replace_status(&#kube::ResourceExt::name_any(obj), &self.post_params(), obj).await
            }
        });
    }
    if has("delete") {
        methods.push(quote! {
            /// Deletes `name`; the object is returned while finalizers hold it.
            pub async fn delete(&self, name: &str, dp: &#kube::api::DeleteParams) -> #kube::Result<#rt::either::Either<#kind, #kube::core::Status>> {
                self.api.delete(name, dp).await
            }
        });
    }
    if has("deleteCollection") {
        methods.push(quote! {
            /// Deletes every object `lp` selects.
            pub async fn delete_collection(&self, dp: &#kube::api::DeleteParams, lp: &#kube::api::ListParams) -> #kube::Result<#rt::either::Either<#kube::core::ObjectList<#kind>, #kube::core::Status>> {
                self.api.delete_collection(dp, lp).await
            }
        });
    }
    if has("get") {
        methods.push(quote! {
            /// The object `name`.
            pub async fn get(&self, name: &str) -> #kube::Result<#kind> {
                self.api.get(name).await
            }
        });
    }
    if has("list") {
        methods.push(quote! {
            /// The objects `lp` selects (labels, fields, paging).
            pub async fn list(&self, lp: &#kube::api::ListParams) -> #kube::Result<#kube::core::ObjectList<#kind>> {
                self.api.list(lp).await
            }
        });
    }
    if has("watch") {
        methods.push(quote! {
            /// Watches the objects `wp` selects from `resource_version` on.
            pub async fn watch(&self, wp: &#kube::api::WatchParams, resource_version: &str) -> #kube::Result<impl #rt::futures::Stream<Item = #kube::Result<#kube::core::WatchEvent<#kind>>> + use<>> {
                self.api.watch(wp, resource_version).await
            }
        });
    }
    if has("patch") {
        methods.push(quote! {
            /// Patches `name` (merge, JSON, strategic or apply patch).
            pub async fn patch<P: #rt::serde::Serialize + ::std::fmt::Debug>(&self, name: &str, patch: &#kube::api::Patch<P>) -> #kube::Result<#kind> {
                self.api.patch(name, &self.patch_params(), patch).await
            }
        });
    }
    if has("patchStatus") {
        methods.push(quote! {
            /// Patches the status of `name`.
            pub async fn patch_status<P: #rt::serde::Serialize + ::std::fmt::Debug>(&self, name: &str, patch: &#kube::api::Patch<P>) -> #kube::Result<#kind> {
                self.api.patch_status(name, &self.patch_params(), patch).await
            }
        });
    }
    if has("apply") {
        methods.push(quote! {
            /// Server-side applies `config` with `params` (`PatchParams::apply(field_manager)`,
            /// `.force()` to take fields over): the manager owns exactly the fields `config` sets.
            pub async fn apply(&self, config: &#rt::apply::ApplyConfiguration<#kind>, params: &#kube::api::PatchParams) -> #kube::Result<#kind> {
                #rt::apply::apply(&self.api, config, params).await
            }
        });
    }
    if has("applyStatus") {
        methods.push(quote! {
            /// Server-side applies the status `config` sets, through the status subresource.
            pub async fn apply_status(&self, config: &#rt::apply::ApplyConfiguration<#kind>, params: &#kube::api::PatchParams) -> #kube::Result<#kind> {
                #rt::apply::apply_status(&self.api, config, params).await
            }
        });
    }
    let constructors = if namespaced {
        quote! {
            /// A typed client for the objects of `namespace`.
            pub fn client(client: #kube::Client, namespace: &str) -> #client {
                #client::new(#kube::Api::namespaced(client, namespace))
            }
            /// A typed client across all namespaces (reads and watches; writes need a namespace).
            pub fn client_all(client: #kube::Client) -> #client {
                #client::new(#kube::Api::all(client))
            }
        }
    } else {
        quote! {
            /// A typed client.
            pub fn client(client: #kube::Client) -> #client {
                #client::new(#kube::Api::all(client))
            }
        }
    };
    let field_manager = format!("{}-client", kind.to_string().to_lowercase());
    quote! {
        #[doc = #client_doc]
        #[derive(Clone)]
        #vis struct #client {
            api: #kube::Api<#kind>,
            field_manager: ::std::string::String,
        }

        #[allow(dead_code)]
        impl #client {
            /// A typed client over `api`, with field manager `<kind>-client`.
            pub fn new(api: #kube::Api<#kind>) -> Self {
                Self { api, field_manager: #field_manager.to_string() }
            }
            /// The same client writing as another field manager.
            pub fn with_field_manager(mut self, field_manager: &str) -> Self {
                self.field_manager = field_manager.to_string();
                self
            }
            /// The `kube::Api` underneath, for anything else.
            pub fn api(&self) -> &#kube::Api<#kind> {
                &self.api
            }
            fn post_params(&self) -> #kube::api::PostParams {
                #kube::api::PostParams { field_manager: ::std::option::Option::Some(self.field_manager.clone()), ..::std::default::Default::default() }
            }
            fn patch_params(&self) -> #kube::api::PatchParams {
                #kube::api::PatchParams { field_manager: ::std::option::Option::Some(self.field_manager.clone()), ..::std::default::Default::default() }
            }
            #(#methods)*
        }

        impl #kind {
            #constructors
        }
    }
}
