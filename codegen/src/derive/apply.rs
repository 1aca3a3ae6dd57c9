//! The apply configuration of a derived type (controller-tools' applyconfigurations): for a
//! struct `Foo`, `FooApply` with every field optional, serialised only when set, a `with_<field>`
//! builder per field, and `impl Apply for Foo`; other types are applied whole.

use crate::ir::{Body, TypeDef, TypeExpr};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub(super) fn emit(input: &syn::DeriveInput, def: &TypeDef) -> TokenStream {
    let ident = &input.ident;
    let rt = quote!(::operator_gen_runtime);
    // a type with lifetimes is not owned, so neither is its configuration: it is applied whole
    let fields = match (&def.body, &input.data) {
        (Body::Struct(ir), syn::Data::Struct(s))
            if !def.serde.transparent && input.generics.params.is_empty() =>
        {
            s.fields.iter().filter_map(|f| {
                let name = f.ident.as_ref()?;
                let wire = name.to_string();
                let field = ir
                    .iter()
                    .find(|i| i.ident == wire.trim_start_matches("r#"))?;
                (!field.serde.skip).then_some((name, field, &f.ty))
            })
        }
        _ => {
            let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
            return quote! {
                impl #impl_generics #rt::apply::Apply for #ident #ty_generics #where_clause {
                    type Configuration = Self;
                }
            };
        }
    };
    let apply = format_ident!("{}Apply", ident);
    let doc = format!(
        "The apply configuration of [`{ident}`]: every field optional, serialised only when set."
    );
    let rename_all = def
        .serde
        .rename_all
        .as_ref()
        .map(|r| quote!(#[serde(rename_all = #r)]));
    let mut members = Vec::new();
    let mut builders = Vec::new();
    for (name, field, ty) in fields {
        let inner = match (&field.ty, option_arg(ty)) {
            (TypeExpr::Option(inner), Some(arg)) => applied(arg, inner),
            (expr, _) => applied(ty, expr),
        };
        let rename = field
            .serde
            .rename
            .as_ref()
            .map(|r| quote!(#[serde(rename = #r)]));
        let presence = if field.serde.flatten {
            quote!(#[serde(flatten)])
        } else {
            quote!(#[serde(default, skip_serializing_if = "::std::option::Option::is_none")])
        };
        let docs = field.doc.iter().map(|line| quote!(#[doc = #line]));
        members.push(quote! {
            #(#docs)*
            #rename
            #presence
            pub #name: ::std::option::Option<#inner>,
        });
        let with = format_ident!("with_{}", field.ident);
        let with_doc = format!("Sets `{}`.", field.ident);
        builders.push(quote! {
            #[doc = #with_doc]
            pub fn #with(mut self, value: impl ::std::convert::Into<#inner>) -> Self {
                self.#name = ::std::option::Option::Some(value.into());
                self
            }
        });
    }
    let vis = &input.vis;
    quote! {
        #[doc = #doc]
        #[derive(#rt::serde::Serialize, #rt::serde::Deserialize, ::std::clone::Clone, ::std::fmt::Debug, ::std::default::Default)]
        #[serde(crate = "::operator_gen_runtime::serde")]
        #rename_all
        #vis struct #apply {
            #(#members)*
        }

        #[allow(dead_code)]
        impl #apply {
            #(#builders)*
        }

        impl #rt::apply::Apply for #ident {
            type Configuration = #apply;
        }
    }
}

/// The apply configuration of a field of type `ty` (`expr` in the IR): a named type's own, a
/// list's or map's with its items' configurations, anything else the type itself.
fn applied(ty: &syn::Type, expr: &TypeExpr) -> syn::Type {
    let rt = quote!(::operator_gen_runtime);
    match expr {
        TypeExpr::Named(_) => {
            syn::Type::Verbatim(quote!(<#ty as #rt::apply::Apply>::Configuration))
        }
        TypeExpr::Vec(inner) | TypeExpr::Map(inner) | TypeExpr::Option(inner) => {
            if let syn::Type::Array(a) = ty {
                let item = applied(&a.elem, inner);
                return syn::Type::Verbatim(quote!(::std::vec::Vec<#item>));
            }
            let mut out = ty.clone();
            if let Some(arg) = last_type_arg(&mut out) {
                *arg = applied(arg, inner);
                return out;
            }
            ty.clone()
        }
        TypeExpr::Prim(_) | TypeExpr::Known(_) | TypeExpr::Value => ty.clone(),
    }
}

/// `T` of a type written `Option<T>`.
fn option_arg(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let seg = p.path.segments.last().filter(|s| s.ident == "Option")?;
    let syn::PathArguments::AngleBracketed(a) = &seg.arguments else {
        return None;
    };
    match a.args.first()? {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

/// The last type argument of a path type's last segment (a list's item, a map's value).
fn last_type_arg(ty: &mut syn::Type) -> Option<&mut syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let syn::PathArguments::AngleBracketed(a) = &mut p.path.segments.last_mut()?.arguments else {
        return None;
    };
    a.args.iter_mut().rev().find_map(|g| match g {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}
