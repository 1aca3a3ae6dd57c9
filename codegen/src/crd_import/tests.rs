use super::*;
use serde_json::json;

fn crd(schema: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "ships.fleet.example.com"},
        "spec": {
            "group": "fleet.example.com",
            "names": {"kind": "Ship", "listKind": "ShipList", "plural": "ships", "singular": "ship"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema}}]
        }
    })
}

fn root(spec: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string", "description": crate::crd::API_VERSION_DOC},
            "kind": {"type": "string", "description": crate::crd::KIND_DOC},
            "metadata": {"type": "object"},
            "spec": spec
        },
        "required": ["spec"]
    })
}

fn render(imported: &Imported) -> String {
    crate::rustgen::RustFile {
        uses: imported.versions[0].uses.clone(),
        items: imported.versions[0].items.clone(),
        ..Default::default()
    }
    .render()
}

#[test]
fn fields_get_types_and_markers() {
    let spec = json!({
        "type": "object",
        "description": "The desired ship.",
        "properties": {
            "replicas": {"type": "integer", "format": "int32", "minimum": 1, "default": 1},
            "port": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "x-kubernetes-list-type": "set"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "type": {"type": "string", "enum": ["A", "1"]},
            "raw": {"x-kubernetes-preserve-unknown-fields": true}
        },
        "required": ["replicas"],
        "x-kubernetes-validations": [{"rule": "self.replicas < 10", "message": "too \"many\""}]
    });
    let imported = import(&crd(root(spec))).expect("imports");
    assert!(imported.notes.is_empty(), "{:?}", imported.notes);
    let text = render(&imported);
    for want in [
        "/// The desired ship.\n///\n/// +kubebuilder:resource:path=ships\n",
        "/// +kubebuilder:validation:XValidation:rule=\"self.replicas < 10\",message=\"too \\\"many\\\"\"\n",
        "    /// +kubebuilder:validation:Minimum=1\n    /// +default=1\n    pub replicas: i32,\n",
        "pub port: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,",
        "    /// +listType=set\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub tags: Option<Vec<ShipSpecTagsItem>>,",
        "/// +kubebuilder:validation:MaxLength=3\n#[derive(Schema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]\npub struct ShipSpecTagsItem(pub String);",
        "pub labels: Option<BTreeMap<String, String>>,",
        "/// +kubebuilder:validation:Enum=A;`\"1\"`\n",
        "pub r#type: Option<String>,",
        "pub raw: Option<serde_json::Value>,",
        "use std::collections::BTreeMap;",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[test]
fn what_no_marker_writes_is_an_error_naming_its_path() {
    let spec = json!({
        "type": "object",
        "properties": {"choice": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}
    });
    let err = import(&crd(root(spec))).expect_err("refused");
    assert_eq!(
        err.path,
        ".spec.versions[v1].schema.openAPIV3Schema.properties.spec.properties.choice"
    );
    assert!(err.message.contains("`oneOf`"), "{}", err.message);
}

#[test]
fn a_description_that_reads_as_a_marker_is_noted() {
    let spec = json!({"type": "object", "properties": {"a": {"type": "string", "description": "One.\n+not a marker"}}});
    let imported = import(&crd(root(spec))).expect("imports");
    assert_eq!(imported.notes.len(), 1, "{:?}", imported.notes);
    assert!(imported.notes[0].path.ends_with(".properties.a"));
    assert!(render(&imported).contains("/// One.\n    /// \\+not a marker\n"));
}
