//! The root type of a custom resource, generated from its spec struct: the struct itself, its
//! wire format, `kube::Resource`, `HasSpec`, `HasStatus`, `new`, `crd()`, `crd_yaml()` and its
//! apply configuration `<Kind>Apply`.

use crate::ir::TypeDef;
use crate::lower::Errors;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub(super) fn emit(input: &syn::DeriveInput, def: &TypeDef, errors: &mut Errors) -> TokenStream {
    let Some(r) = &def.resource else {
        return TokenStream::new();
    };
    let Some(names) = crate::resource::names(def) else {
        return TokenStream::new();
    };
    let spec = &input.ident;
    let vis = &input.vis;
    let kind = format_ident!("{}", r.kind);
    let verbs = crate::client::verbs(&def.markers, r.status.is_some());
    let namespaced = crate::client::namespaced(&def.markers, names.namespaced);
    let client = match (verbs, namespaced) {
        (Ok(verbs), Ok(namespaced)) => {
            let mut t = super::client::emit(&kind, vis, namespaced, &verbs);
            t.extend(super::lister::emit(&kind, vis, namespaced));
            t.extend(super::informer::emit(&kind, vis));
            t
        }
        (Err(message), _) | (_, Err(message)) => {
            errors.push(input.ident.span(), message);
            return TokenStream::new();
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
    let (status_field, status_ser, status_impl, status_new, status_scope, status_apply) = match &r
        .status
    {
        Some(s) => {
            let Ok(status): Result<syn::Type, _> = syn::parse_str(s) else {
                errors.push(spec.span(), format!("`status = \"{s}\"` is not a type"));
                return TokenStream::new();
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
                quote!(<#status as #rt::apply::Apply>::Configuration),
            )
        }
        None => (
            quote!(),
            quote!(),
            quote!(),
            quote!(),
            quote!(::std::option::Option::None),
            quote!(()),
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
    let apply = format_ident!("{}Apply", kind);
    let apply_doc = format!(
        "The apply configuration of {kind_str}: what `apply` and `apply_status` send, and `extract` reads back."
    );
    let flat = r.no_spec.then(|| {
        quote!(
            const FLAT_SPEC: bool = true;
        )
    });
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
            pub fn try_crd() -> ::std::result::Result<#rt::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition, #rt::CrdError> {
                #rt::crd_for_versions(::std::vec![Self::crd_version()])
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

        impl #rt::apply::Applicable for #kind {
            type Spec = <#spec as #rt::apply::Apply>::Configuration;
            type Status = #status_apply;
            #flat
        }

        #[doc = #apply_doc]
        #vis type #apply = #rt::apply::ApplyConfiguration<#kind>;

        #client
    }
}
