//! CRD assembly: custom resource roots (one per version) into one `CustomResourceDefinition`
//! per group and kind, with names, scope, versions, subresources and printer columns.

use crate::diag::Diagnostic;
use crate::ir::*;
use crate::markers::Kind;
use crate::schema::{Emitter, Scope, Settings, located_in};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec, CustomResourceDefinitionVersion, CustomResourceSubresourceScale,
    CustomResourceSubresourceStatus, CustomResourceSubresources, CustomResourceValidation,
    JSONSchemaProps as Props, SelectableField,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

pub const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object.\nServers should convert recognized schemas to the latest internal value, and\nmay reject unrecognized values.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
pub const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents.\nServers may infer this from the endpoint the client submits requests to.\nCannot be updated.\nIn CamelCase.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

pub use crate::resource::{ResourceNames, names};

/// One version of a kind: the spec struct and, when the root has one, the status type.
pub struct VersionInput<'a> {
    pub spec: &'a dyn Scope,
    pub status: Option<Box<dyn Scope + 'a>>,
}

fn error(scope: &dyn Scope, message: String) -> Diagnostic {
    located_in(scope, None, message)
}

fn root_schema(
    emitter: &mut Emitter,
    input: &VersionInput,
    names: &ResourceNames,
) -> Result<Props, Diagnostic> {
    let spec_def = input.spec.def();
    let mut properties = BTreeMap::new();
    let string = |doc: &str| Props {
        type_: Some("string".into()),
        description: Some(doc.into()),
        ..Default::default()
    };
    properties.insert("apiVersion".to_string(), string(API_VERSION_DOC));
    properties.insert("kind".to_string(), string(KIND_DOC));
    properties.insert(
        "metadata".to_string(),
        Props {
            type_: Some("object".into()),
            ..Default::default()
        },
    );
    let mut spec = emitter.type_schema(input.spec)?;
    if spec.type_.as_deref() != Some("object") {
        return Err(error(
            input.spec,
            format!(
                "the spec of {} must be a struct (an object on the wire)",
                names.kind
            ),
        ));
    }
    if spec_def.markers.iter().any(|m| m.names(Kind::XIntOrString)) {
        spec.type_ = None;
    }
    let resource = spec_def.resource.clone().unwrap_or_default();
    let mut required =
        (!spec_def.serde.default && !resource.optional_spec).then(|| vec!["spec".to_string()]);
    if resource.no_spec {
        // the struct's fields are the root's own; its doc is not a description of anything
        for reserved in ["apiVersion", "kind", "metadata", "status"] {
            if spec
                .properties
                .as_ref()
                .is_some_and(|p| p.contains_key(reserved))
            {
                return Err(error(
                    input.spec,
                    format!(
                        "with `no_spec`, a field named `{reserved}` would replace the root's own: rename it"
                    ),
                ));
            }
        }
        properties.extend(spec.properties.take().unwrap_or_default());
        required = spec.required.take();
    } else {
        properties.insert("spec".to_string(), spec);
    }
    if let Some(status) = &input.status {
        properties.insert("status".to_string(), emitter.type_schema(status.as_ref())?);
    }
    if resource.required_metadata {
        // as controller-gen lists a root's required fields: sorted
        let names = required.get_or_insert_with(Vec::new);
        names.push("metadata".to_string());
        names.sort();
    }
    let mut root = Props {
        description: crate::schema::description(&resource.doc),
        type_: Some("object".into()),
        required,
        properties: Some(properties),
        ..Default::default()
    };
    crate::schema::apply_markers(&mut root, &resource.markers)
        .map_err(|d| error(input.spec, d.message))?;
    Ok(root)
}

fn version(
    emitter: &mut Emitter,
    input: &VersionInput,
    names: &ResourceNames,
) -> Result<Option<CustomResourceDefinitionVersion>, Diagnostic> {
    let def = input.spec.def();
    let m = &def.markers;
    if has_marker(m, Kind::SkipVersion) {
        return Ok(None);
    }
    let mut schema = root_schema(emitter, input, names)?;
    if let Some(max) = emitter.settings.max_desc_len {
        crate::schema::truncate_descriptions(&mut schema, max);
    }
    let mut subresources = CustomResourceSubresources::default();
    let mut any_sub = false;
    if has_marker(m, Kind::SubresourceStatus) {
        subresources.status = Some(CustomResourceSubresourceStatus(serde_json::Value::Object(
            Default::default(),
        )));
        any_sub = true;
    }
    if let Some(scale) = marker(m, Kind::SubresourceScale) {
        subresources.scale = Some(CustomResourceSubresourceScale {
            spec_replicas_path: scale.arg_str("specpath").unwrap_or_default().to_string(),
            status_replicas_path: scale.arg_str("statuspath").unwrap_or_default().to_string(),
            label_selector_path: scale.arg_str("selectorpath").map(str::to_string),
        });
        any_sub = true;
    }
    let columns: Vec<CustomResourceColumnDefinition> = markers_named(m, Kind::PrintColumn)
        .map(|c| CustomResourceColumnDefinition {
            name: c.arg_str("name").unwrap_or_default().to_string(),
            type_: c.arg_str("type").unwrap_or_default().to_string(),
            json_path: c.arg_str("JSONPath").unwrap_or_default().to_string(),
            description: c.arg_str("description").map(str::to_string),
            format: c.arg_str("format").map(str::to_string),
            priority: c.arg("priority").and_then(|p| p.as_i64()).map(|p| p as i32),
        })
        .collect();
    for c in &columns {
        if c.name.is_empty() || c.type_.is_empty() || c.json_path.is_empty() {
            return Err(error(
                input.spec,
                "`+kubebuilder:printcolumn` needs name, type and JSONPath".into(),
            ));
        }
    }
    let selectable: Vec<SelectableField> = markers_named(m, Kind::SelectableField)
        .map(|s| SelectableField {
            json_path: s.arg_str("JSONPath").unwrap_or_default().to_string(),
        })
        .collect();
    let deprecated = marker(m, Kind::DeprecatedVersion);
    Ok(Some(CustomResourceDefinitionVersion {
        name: names.version.clone(),
        served: !has_marker(m, Kind::UnservedVersion),
        storage: has_marker(m, Kind::StorageVersion),
        deprecated: deprecated.map(|_| true),
        deprecation_warning: deprecated
            .and_then(|d| d.arg_str("warning"))
            .map(str::to_string),
        schema: Some(CustomResourceValidation {
            open_api_v3_schema: Some(schema),
        }),
        subresources: (any_sub || !columns.is_empty()).then_some(subresources),
        additional_printer_columns: (!columns.is_empty()).then_some(columns),
        selectable_fields: (!selectable.is_empty()).then_some(selectable),
    }))
}

/// The CRD for all versions of one group and kind. `None` when every version is skipped.
pub fn crd(
    inputs: &[VersionInput],
    settings: &Settings,
) -> Result<Option<CustomResourceDefinition>, Diagnostic> {
    let Some(first) = inputs.first() else {
        return Ok(None);
    };
    let first_def = first.spec.def();
    let Some(names) = names(first_def) else {
        return Err(error(
            first.spec,
            format!(
                "`{}` is not a custom resource: add #[k8s(group, version, kind)]",
                first_def.name
            ),
        ));
    };
    let mut emitter = Emitter::new(settings);
    let mut versions = Vec::new();
    let mut metadata = CrdMetadata::default();
    metadata.annotations.insert(
        crate::VERSION_ANNOTATION.to_string(),
        crate::VERSION.to_string(),
    );
    for input in inputs {
        let Some(n) = self::names(input.spec.def()) else {
            continue;
        };
        check_same_kind(input, &n, &names, &versions)?;
        metadata.add(input)?;
        if let Some(v) = version(&mut emitter, input, &n)? {
            versions.push(v);
        }
    }
    if versions.is_empty() {
        return Ok(None);
    }
    choose_storage(first, &names, &mut versions)?;
    // controller-gen v0.21.0 sorts versions by name (strings.Compare, stable; pkg/crd/spec.go)
    versions.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Some(assemble(&names, versions, metadata)))
}

/// Refuses a version whose names differ from the first version's, or that is declared twice.
fn check_same_kind(
    input: &VersionInput,
    n: &ResourceNames,
    names: &ResourceNames,
    versions: &[CustomResourceDefinitionVersion],
) -> Result<(), Diagnostic> {
    if n.plural != names.plural
        || n.namespaced != names.namespaced
        || n.group != names.group
        || n.kind != names.kind
    {
        return Err(error(
            input.spec,
            format!(
                "versions of {} disagree on plural, scope or group: give every version the same resource markers",
                names.kind
            ),
        ));
    }
    if versions.iter().any(|v| v.name == n.version) {
        return Err(error(
            input.spec,
            format!(
                "{} declares version {} twice: give each version its own module",
                names.kind, n.version
            ),
        ));
    }
    Ok(())
}

/// The annotations and labels of the CRD object, from every version's `+kubebuilder:metadata`.
#[derive(Default)]
struct CrdMetadata {
    annotations: BTreeMap<String, String>,
    labels: BTreeMap<String, String>,
}

impl CrdMetadata {
    fn add(&mut self, input: &VersionInput) -> Result<(), Diagnostic> {
        for md in markers_named(&input.spec.def().markers, Kind::Metadata) {
            for (list, target) in [
                ("annotations", &mut self.annotations),
                ("labels", &mut self.labels),
            ] {
                for kv in md.arg_list(list) {
                    let Some((k, v)) = kv.split_once('=') else {
                        return Err(error(
                            input.spec,
                            format!("metadata {list} entry `{kv}` needs the form key=value"),
                        ));
                    };
                    target.insert(k.to_string(), v.to_string());
                }
            }
        }
        Ok(())
    }
}

/// Makes a lone version the storage version, then checks that exactly one version is stored
/// and at least one is served.
fn choose_storage(
    first: &VersionInput,
    names: &ResourceNames,
    versions: &mut [CustomResourceDefinitionVersion],
) -> Result<(), Diagnostic> {
    if let [only] = versions {
        only.storage = true;
    }
    match versions.iter().filter(|v| v.storage).count() {
        1 => {}
        0 => {
            return Err(error(
                first.spec,
                format!(
                    "{} has {} versions and none is the storage version: mark one with `+kubebuilder:storageversion`",
                    names.kind,
                    versions.len()
                ),
            ));
        }
        _ => {
            return Err(error(
                first.spec,
                format!(
                    "{} has more than one storage version: keep `+kubebuilder:storageversion` on exactly one",
                    names.kind
                ),
            ));
        }
    }
    if !versions.iter().any(|v| v.served) {
        return Err(error(
            first.spec,
            format!(
                "no version of {} is served: drop `+kubebuilder:unservedversion` from one",
                names.kind
            ),
        ));
    }
    Ok(())
}

/// The CRD object of checked, sorted versions.
fn assemble(
    names: &ResourceNames,
    versions: Vec<CustomResourceDefinitionVersion>,
    metadata: CrdMetadata,
) -> CustomResourceDefinition {
    let sorted_list = |mut v: Vec<String>| {
        v.dedup();
        (!v.is_empty()).then_some(v)
    };
    let CrdMetadata {
        annotations,
        labels,
    } = metadata;
    CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{}.{}", names.plural, names.group)),
            annotations: Some(annotations),
            labels: (!labels.is_empty()).then_some(labels),
            ..Default::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: names.group.clone(),
            names: CustomResourceDefinitionNames {
                kind: names.kind.clone(),
                list_kind: Some(format!("{}List", names.kind)),
                plural: names.plural.clone(),
                singular: Some(names.singular.clone()),
                short_names: sorted_list(names.short_names.clone()),
                categories: sorted_list(names.categories.clone()),
            },
            scope: if names.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            }
            .to_string(),
            versions,
            conversion: None,
            preserve_unknown_fields: None,
        },
        status: None,
    }
}

/// The CRD as the YAML file `operator-gen manifests` writes.
pub fn to_yaml(crd: &CustomResourceDefinition) -> String {
    let mut value = serde_json::to_value(crd).unwrap_or_default();
    if let Some(o) = value.as_object_mut() {
        o.remove("status");
    }
    crate::yaml::document(&value)
}

/// `<group>_<plural>.yaml`.
pub fn file_name(crd: &CustomResourceDefinition) -> String {
    crate::names::crd_file_name(&crd.spec.group, &crd.spec.names.plural)
}
