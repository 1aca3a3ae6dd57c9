//! Derive macros of operator-gen, a thin shim over `operator-gen-codegen`: lowering and checks
//! happen there; this crate only turns the IR into tokens.

use operator_gen_codegen::ir::TypeDef;
use operator_gen_codegen::lower::{self, Errors};
use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};

/// Generates the root type of a custom resource from its spec struct, with `kube::Resource`,
/// `HasSpec`, `HasStatus`, `new`, `crd()` and `crd_yaml()`. See the crate README for `#[k8s]`.
#[proc_macro_derive(CustomResource, attributes(k8s))]
pub fn derive_custom_resource(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand(&input, true).into()
}

/// Implements `operator_gen_runtime::Schema` so the type can be used inside a custom resource.
#[proc_macro_derive(Schema, attributes(k8s))]
pub fn derive_schema(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand(&input, false).into()
}

/// Implements `Schema` for every type of operator-gen's table of Kubernetes types, each gated on
/// the k8s-openapi versions that have it; invoked once, inside `operator-gen-runtime`.
#[doc(hidden)]
#[proc_macro]
pub fn __kubernetes_schema_impls(_input: TokenStream) -> TokenStream {
    let mut out = Tokens::new();
    for (path, versions) in operator_gen_codegen::known::k8s_openapi_types() {
        let full = format!("k8s_openapi::{path}");
        let Ok(ty) = syn::parse_str::<syn::Path>(&format!("::{full}")) else {
            continue;
        };
        let item = quote! {
            impl crate::Schema for #ty {
                fn definition() -> crate::schema::Definition {
                    crate::schema::Definition::known(#full)
                }
            }
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
    out.into()
}

fn expand(input: &syn::DeriveInput, custom_resource: bool) -> Tokens {
    let mut errors = Errors::default();
    let def = lower::type_def(input, &mut errors);
    let derives = lower::Derives {
        custom_resource,
        schema: !custom_resource,
    };
    lower::check_derives(input, def.as_ref(), derives, &mut errors);
    let def = match def {
        Some(d) if errors.is_empty() => d,
        _ => return fallback(input, custom_resource, errors),
    };
    let mut out = schema_impl(&input.ident, &def);
    if custom_resource {
        out.extend(root(input, &def));
    }
    out
}

/// On errors: the errors, plus empty impls so the user sees one error, not a cascade.
fn fallback(input: &syn::DeriveInput, custom_resource: bool, errors: Errors) -> Tokens {
    // rustc itself rejects `impl Trait` in a field; saying it twice would be a cascade
    let compile_errors = errors
        .0
        .iter()
        .filter(|e| e.message != lower::IMPL_TRAIT_FIELD)
        .map(|e| syn::Error::new(e.span, &e.message).to_compile_error());
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut out = quote! {
        #(#compile_errors)*
        impl #impl_generics ::operator_gen_runtime::Schema for #ident #ty_generics #where_clause {
            fn definition() -> ::operator_gen_runtime::schema::Definition { unimplemented!() }
        }
    };
    if custom_resource {
        let kind = kind_from_attrs(input).unwrap_or_else(|| format_ident!("{}Root", ident));
        out.extend(quote! {
            #[allow(dead_code)]
            pub struct #kind;
        });
    }
    out
}

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

fn schema_impl(ident: &syn::Ident, def: &TypeDef) -> Tokens {
    let ir = match serde_json::to_string(def) {
        Ok(s) => s,
        Err(e) => {
            return syn::Error::new(ident.span(), format!("cannot record the IR: {e}"))
                .to_compile_error();
        }
    };
    let deps = operator_gen_codegen::schema::named_paths(def).into_iter().filter_map(|p| {
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

fn root(input: &syn::DeriveInput, def: &TypeDef) -> Tokens {
    let Some(r) = &def.resource else {
        return Tokens::new();
    };
    let Some(names) = operator_gen_codegen::crd::names(def) else {
        return Tokens::new();
    };
    let spec = &input.ident;
    let vis = &input.vis;
    let kind = format_ident!("{}", r.kind);
    let verbs = operator_gen_codegen::client::verbs(&def.markers, r.status.is_some());
    let namespaced = operator_gen_codegen::client::namespaced(&def.markers, names.namespaced);
    let client = match (verbs, namespaced) {
        (Ok(verbs), Ok(namespaced)) => client(&kind, vis, namespaced, &verbs),
        (Err(message), _) | (_, Err(message)) => {
            return syn::Error::new(input.ident.span(), message).to_compile_error();
        }
    };
    let (group, version, kind_str, plural) =
        (&names.group, &names.version, &names.kind, &names.plural);
    let api_version = if group.is_empty() {
        version.clone()
    } else {
        format!("{group}/{version}")
    };
    let scope = if names.namespaced {
        quote!(::operator_gen_runtime::k8s_openapi::NamespaceResourceScope)
    } else {
        quote!(::operator_gen_runtime::k8s_openapi::ClusterResourceScope)
    };
    let rt = quote!(::operator_gen_runtime);
    let root_doc = if r.doc.is_empty() {
        format!("{kind_str} is the root type of the {plural} custom resource.")
    } else {
        r.doc.join("\n")
    };
    let spec_default = if r.no_spec {
        quote!(#[serde(flatten)])
    } else if def.serde.default || r.optional_spec {
        quote!(#[serde(default)])
    } else {
        quote!()
    };
    let (status_field, status_ser, status_impl, status_new, status_scope) = match &r.status {
        Some(s) => {
            let Ok(status): Result<syn::Type, _> = syn::parse_str(s) else {
                return syn::Error::new(spec.span(), format!("`status = \"{s}\"` is not a type"))
                    .to_compile_error();
            };
            (
                quote! {
                    /// The observed state.
                    #[serde(default, skip_serializing_if = "Option::is_none")]
                    pub status: ::std::option::Option<#status>,
                },
                quote! {
                    if let ::std::option::Option::Some(status) = &self.status {
                        map.serialize_entry("status", status)?;
                    }
                },
                quote! {
                    impl #rt::kube::core::object::HasStatus for #kind {
                        type Status = #status;
                        fn status(&self) -> ::std::option::Option<&#status> { self.status.as_ref() }
                        fn status_mut(&mut self) -> &mut ::std::option::Option<#status> { &mut self.status }
                    }
                },
                quote!(status: ::std::option::Option::None,),
                quote!(::std::option::Option::Some(<#status as #rt::Schema>::definition())),
            )
        }
        None => (
            quote!(),
            quote!(),
            quote!(),
            quote!(),
            quote!(::std::option::Option::None),
        ),
    };
    let serialize_spec = if r.no_spec {
        quote! {
            // the spec struct's fields are the root's own
            match #rt::serde_json::to_value(&self.spec).map_err(<S::Error as #rt::serde::ser::Error>::custom)? {
                #rt::serde_json::Value::Object(fields) => {
                    for (key, value) in &fields {
                        map.serialize_entry(key, value)?;
                    }
                }
                _ => return ::std::result::Result::Err(<S::Error as #rt::serde::ser::Error>::custom("a no_spec resource must serialise as an object")),
            }
        }
    } else {
        quote!(map.serialize_entry("spec", &self.spec)?;)
    };
    let field_count = match (r.no_spec, r.status.is_some()) {
        (true, _) => quote!(::std::option::Option::None),
        (false, true) => quote!(::std::option::Option::Some(5usize)),
        (false, false) => quote!(::std::option::Option::Some(4usize)),
    };
    quote! {
        #[doc = #root_doc]
        #[derive(#rt::serde::Deserialize, Clone, Debug)]
        #[serde(crate = "::operator_gen_runtime::serde")]
        #vis struct #kind {
            /// Standard object metadata.
            #[serde(default)]
            pub metadata: #rt::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
            /// The desired state.
            #spec_default
            pub spec: #spec,
            #status_field
        }

        impl #rt::serde::Serialize for #kind {
            fn serialize<S: #rt::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                use #rt::serde::ser::SerializeMap;
                let mut map = serializer.serialize_map(#field_count)?;
                map.serialize_entry("apiVersion", #api_version)?;
                map.serialize_entry("kind", #kind_str)?;
                map.serialize_entry("metadata", &self.metadata)?;
                #serialize_spec
                #status_ser
                map.end()
            }
        }

        impl #kind {
            /// A new object with the given name and spec.
            pub fn new(name: &str, spec: #spec) -> Self {
                Self {
                    metadata: #rt::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                        name: ::std::option::Option::Some(name.to_string()),
                        ..::std::default::Default::default()
                    },
                    spec,
                    #status_new
                }
            }

            /// The CustomResourceDefinition, or why it cannot be built.
            pub fn try_crd() -> ::std::result::Result<#rt::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition, ::std::string::String> {
                #rt::crd_of(<#spec as #rt::Schema>::definition(), #status_scope)
            }

            /// This version of the kind, for a CRD of several versions: pass the `crd_version()` of
            /// each version's root to `operator_gen_runtime::crd_for_versions`.
            pub fn crd_version() -> #rt::CrdVersion {
                #rt::CrdVersion { spec: <#spec as #rt::Schema>::definition(), status: #status_scope }
            }

            /// The CustomResourceDefinition, as `operator-gen manifests` writes it.
            ///
            /// # Panics
            /// When a type the resource mentions cannot be put into a schema; `try_crd` returns
            /// that error instead, and `operator-gen manifests` reports it with its location.
            pub fn crd() -> #rt::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
                match Self::try_crd() {
                    ::std::result::Result::Ok(crd) => crd,
                    ::std::result::Result::Err(e) => panic!("{}", e),
                }
            }

            /// The CRD file's text, byte for byte what `operator-gen manifests` writes.
            pub fn crd_yaml() -> ::std::string::String {
                #rt::crd_yaml(&Self::crd())
            }
        }

        impl #rt::kube::Resource for #kind {
            type DynamicType = ();
            type Scope = #scope;
            fn kind(_: &()) -> ::std::borrow::Cow<'_, str> { #kind_str.into() }
            fn group(_: &()) -> ::std::borrow::Cow<'_, str> { #group.into() }
            fn version(_: &()) -> ::std::borrow::Cow<'_, str> { #version.into() }
            fn api_version(_: &()) -> ::std::borrow::Cow<'_, str> { #api_version.into() }
            fn plural(_: &()) -> ::std::borrow::Cow<'_, str> { #plural.into() }
            fn meta(&self) -> &#rt::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta { &self.metadata }
            fn meta_mut(&mut self) -> &mut #rt::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta { &mut self.metadata }
        }

        impl #rt::kube::core::object::HasSpec for #kind {
            type Spec = #spec;
            fn spec(&self) -> &#spec { &self.spec }
            fn spec_mut(&mut self) -> &mut #spec { &mut self.spec }
        }

        #status_impl

        #client
    }
}

/// The typed client, lister and informer of a kind (code-generator's client-gen, lister-gen and
/// informer-gen), with the methods its `+genclient` markers allow.
fn client(kind: &syn::Ident, vis: &syn::Visibility, namespaced: bool, verbs: &[&str]) -> Tokens {
    let rt = quote!(::operator_gen_runtime);
    let kube = quote!(#rt::kube);
    let client = format_ident!("{}Client", kind);
    let lister = format_ident!("{}Lister", kind);
    let ns_lister = format_ident!("{}NamespaceLister", kind);
    let informer = format_ident!("{}Informer", kind);
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
            /// Server-side applies `obj` as this client's field manager.
            pub async fn apply(&self, obj: &#kind) -> #kube::Result<#kind> {
                self.api.patch(&#kube::ResourceExt::name_any(obj), &self.apply_params(), &#kube::api::Patch::Apply(obj)).await
            }
        });
    }
    if has("applyStatus") {
        methods.push(quote! {
            /// Server-side applies the status of `obj` as this client's field manager.
            pub async fn apply_status(&self, obj: &#kind) -> #kube::Result<#kind> {
                self.api.patch_status(&#kube::ResourceExt::name_any(obj), &self.apply_params(), &#kube::api::Patch::Apply(obj)).await
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
    let ns_alias = if namespaced {
        let doc = format!("Reads the {kind} objects of one namespace from a cache.");
        quote! {
            #[doc = #doc]
            #vis type #ns_lister = #rt::cache::NamespaceLister<#kind>;
        }
    } else {
        quote!()
    };
    let lister_doc = format!("Reads {kind} objects from a cache (see `{informer}`).");
    let informer_doc = format!("Keeps a local cache of {kind} objects; `lister()` reads it.");
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
            fn apply_params(&self) -> #kube::api::PatchParams {
                #kube::api::PatchParams::apply(&self.field_manager)
            }
            #(#methods)*
        }

        impl #kind {
            #constructors

            /// Starts an informer for this kind over `api`.
            pub fn informer(api: #kube::Api<#kind>, config: #kube::runtime::watcher::Config) -> #informer {
                #rt::cache::Informer::start(api, config)
            }
        }

        #[doc = #lister_doc]
        #vis type #lister = #rt::cache::Lister<#kind>;
        #ns_alias
        #[doc = #informer_doc]
        #vis type #informer = #rt::cache::Informer<#kind>;
    }
}
