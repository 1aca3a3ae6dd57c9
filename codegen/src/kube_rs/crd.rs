//! The CRD kube's `crd()` generates for a kind of a kube-rs crate, from its spec struct's
//! `#[kube(...)]` and the schemas of its spec and status.

use crate::diag::Diagnostic;
use crate::ir::{KubeResource, ResourceAttrs};
use crate::schema::{Scope, located_in};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

/// kube's CRD for the kind whose spec struct `spec` stands for, with its status struct.
pub fn crd(
    spec: &dyn Scope,
    status: Option<&dyn Scope>,
) -> Result<CustomResourceDefinition, Diagnostic> {
    let def = spec.def();
    let (Some(id), Some(k)) = (
        def.resource.as_ref(),
        def.kube.as_ref().and_then(|k| k.resource.as_ref()),
    ) else {
        return Err(located_in(
            spec,
            None,
            "not a kind of kube's CustomResource derive",
        ));
    };
    let singular = k
        .singular
        .clone()
        .unwrap_or_else(|| id.kind.to_ascii_lowercase());
    let plural = k.plural.clone().unwrap_or_else(|| plural_of(&singular));
    let mut names = json!({ "kind": id.kind, "plural": plural, "singular": singular });
    if !k.categories.is_empty() {
        names["categories"] = json!(k.categories);
    }
    if !k.shortnames.is_empty() {
        names["shortNames"] = json!(k.shortnames);
    }
    let schema = if k.schema_derived {
        json!({ "openAPIV3Schema": root_schema(spec, status, id, k)? })
    } else {
        json!({})
    };
    let mut version = json!({
        "name": id.version,
        "served": k.served,
        "storage": k.storage,
        "schema": schema,
    });
    if !k.printcolumns.is_empty() {
        version["additionalPrinterColumns"] = json!(k.printcolumns);
    }
    if !k.selectable.is_empty() {
        let fields: Vec<Value> = k
            .selectable
            .iter()
            .map(|p| json!({ "jsonPath": p }))
            .collect();
        version["selectableFields"] = json!(fields);
    }
    if let Some(deprecated) = &k.deprecated {
        version["deprecated"] = json!(true);
        if let Some(warning) = deprecated {
            version["deprecationWarning"] = json!(warning);
        }
    }
    // kube gives the subresources only with a status, the scale one beside it
    if status.is_some() {
        let mut sub = json!({ "status": {} });
        if let Some(scale) = &k.scale {
            sub["scale"] = scale.clone();
        }
        version["subresources"] = sub;
    }
    let mut metadata = json!({ "name": format!("{plural}.{}", id.group) });
    for (key, pairs) in [("annotations", &k.annotations), ("labels", &k.labels)] {
        if !pairs.is_empty() {
            metadata[key] =
                Value::Object(pairs.iter().map(|(a, b)| (a.clone(), json!(b))).collect());
        }
    }
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": {
            "group": id.group,
            "names": names,
            "scope": if k.namespaced { "Namespaced" } else { "Cluster" },
            "versions": [version],
        },
    });
    serde_json::from_value(crd).map_err(|e| {
        located_in(spec, None, format!("the CRD read from #[kube(...)] is not a valid CustomResourceDefinition ({e}): check its printcolumn and scale attributes"))
    })
}

/// The root object's schema: `spec`, `status` (nullable), the kind as title, the root's CEL
/// rules.
fn root_schema(
    spec: &dyn Scope,
    status: Option<&dyn Scope>,
    id: &ResourceAttrs,
    k: &KubeResource,
) -> Result<Value, Diagnostic> {
    let mut properties = serde_json::Map::new();
    properties.insert("spec".into(), super::schema::type_schema(spec, 0)?);
    if let Some(status) = status {
        let mut s = super::schema::type_schema(status, 0)?;
        s["nullable"] = json!(true);
        properties.insert("status".into(), s);
    }
    let mut root = json!({
        "properties": properties,
        "required": ["spec"],
        "title": id.kind,
        "type": "object",
    });
    let description = id.doc.join("\n");
    let description = description.strip_prefix(' ').unwrap_or(&description).trim();
    if !description.is_empty() {
        root["description"] = json!(description);
    }
    if !k.validations.is_empty() {
        root["x-kubernetes-validations"] = json!(k.validations);
    }
    Ok(root)
}

/// kube's plural of a singular name: `-es` after s, x, z, ch, sh; `-ies` for a consonant and
/// y; else `-s`.
fn plural_of(word: &str) -> String {
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|e| word.ends_with(e))
    {
        return format!("{word}es");
    }
    let mut chars = word.chars();
    if chars.next_back() == Some('y')
        && chars
            .clone()
            .next_back()
            .is_some_and(|c| !"aeiou".contains(c))
    {
        return format!("{}ies", chars.as_str());
    }
    format!("{word}s")
}
