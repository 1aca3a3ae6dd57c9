//! The reader's side of the marker registry: for every marker, what it is for, what
//! controller-gen does with it, and, where the registry's example or proof would read poorly in
//! a reference, the example to show instead. The book's marker reference
//! (`docs/src/reference/markers.md`) is generated from these and from the registry. The table
//! below holds one entry per marker, in the registry's order; the crate does not compile
//! otherwise, so a marker cannot join the registry without its entry here.

use super::registry::{Kind, REGISTRY};

/// How one marker is described in the marker reference.
#[derive(Clone, Copy, Debug)]
pub struct Doc {
    /// What the marker is for, in a sentence or two.
    pub summary: &'static str,
    /// What controller-gen v0.21 does with the same marker.
    pub controller_gen: ControllerGen,
    /// Marker lines (`+` included, separated by `\n`) to show as the example, when neither the
    /// registry's example nor its first proof suits a reader.
    pub example: Option<&'static str>,
}

/// What controller-gen does with a marker, compared with operator-gen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControllerGen {
    /// controller-gen gives the marker the same meaning and the same output.
    Same,
    /// controller-gen reads the marker; this says what it does and how operator-gen differs.
    Differs(&'static str),
    /// controller-gen does not read the marker; this says which Go tool does.
    NotRead(&'static str),
}

use ControllerGen::{Differs, NotRead, Same};

const DEEPCOPY_CG: &str = "The `object` generator writes `DeepCopy` methods for the package or type (none with `=false`).";
const AC_CG: &str = "The `applyconfiguration` generator writes apply-configuration types, which Go clients use for server-side apply.";
const FIELD_ONLY: &str = "The same on a field. controller-gen takes it on fields only; operator-gen also takes it on a type, where it applies wherever the type is used.";
const CLIENT_GEN: &str = "client-gen (k8s.io/code-generator) reads it when it writes a Go clientset; controller-gen does not.";

/// The description of `kind` in the marker reference.
pub fn doc(kind: Kind) -> Doc {
    // `DOCS` holds one entry per marker in `Kind` order, as the check below proves when the
    // crate compiles, so the index is always in range and names `kind`'s own entry.
    DOCS[kind as usize].1
}

/// A description without an example of its own: [`example`] falls back to the registry's.
const fn d(summary: &'static str, controller_gen: ControllerGen) -> Doc {
    Doc {
        summary,
        controller_gen,
        example: None,
    }
}

/// A description with `example` as its example.
const fn d_example(
    summary: &'static str,
    controller_gen: ControllerGen,
    example: &'static str,
) -> Doc {
    Doc {
        summary,
        controller_gen,
        example: Some(example),
    }
}

/// Every marker's description, one entry per marker in [`Kind`] order.
static DOCS: &[(Kind, Doc)] = &[
    (
        Kind::GroupName,
        d(
            "Names the API group of the kinds in a module. Each kind already names its group in `#[k8s(group = ...)]`; `operator-gen manifests` stops with an error naming a kind whose group differs from the module's.",
            Differs(
                "Takes the CRD's group from it: a Go package has no other place to say its group. In Rust the marker only confirms what each kind says.",
            ),
        ),
    ),
    (
        Kind::VersionName,
        d(
            "Names the API version of the kinds in a module, checked like `+groupName` against each kind's `#[k8s(version = ...)]`.",
            Differs(
                "Takes the version from it instead of the Go package's name. In Rust the marker only confirms what each kind says.",
            ),
        ),
    ),
    (
        Kind::Skip,
        d(
            "Leaves the kinds of a module, and of its submodules, out of `operator-gen manifests`: no CRD is written for them.",
            Differs(
                "Skips the one Go package it stands in; Go packages do not nest, so the submodules are operator-gen's addition.",
            ),
        ),
    ),
    (
        Kind::ObjectGenerate,
        d_example(
            "Turns the generation of deep-copy methods on or off for a package or a type.",
            Differs(DEEPCOPY_CG),
            "+kubebuilder:object:generate=true",
        ),
    ),
    (
        Kind::ObjectRoot,
        d_example(
            "Marks a Go type as a root object: one with its own `kind` that the apiserver stores and serves.",
            Differs(
                "The `object` generator gives the type `DeepCopyObject`, and the `crd` generator writes a CRD for it.",
            ),
            "+kubebuilder:object:root=true",
        ),
    ),
    (
        Kind::AcGenerate,
        d_example(
            "Asks for apply configurations of a package or a type.",
            Differs(AC_CG),
            "+kubebuilder:ac:generate=true",
        ),
    ),
    (
        Kind::AcOutputPackage,
        d_example(
            "Says which package a package's apply configurations go to.",
            Differs(AC_CG),
            "+kubebuilder:ac:output:package=\"applyconfiguration\"",
        ),
    ),
    (
        Kind::DeepcopyGen,
        d_example(
            "code-generator's switch for deep-copy generation on a package or a type.",
            Differs(
                "The `object` generator honours it as it honours `+kubebuilder:object:generate`.",
            ),
            "+k8s:deepcopy-gen=package",
        ),
    ),
    (
        Kind::DeepcopyGenInterfaces,
        d_example(
            "code-generator's way to have a type's deep copy implement an interface, such as `runtime.Object`.",
            Differs("The `object` generator honours it as it honours `+kubebuilder:object:root`."),
            "+k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object",
        ),
    ),
    (
        Kind::OpenapiGen,
        d_example(
            "kube-openapi's switch for Go OpenAPI definitions of a package or a type.",
            NotRead(
                "kube-openapi's `openapi-gen` reads it when it writes OpenAPI definitions in Go; controller-gen does not.",
            ),
            "+k8s:openapi-gen=true",
        ),
    ),
    (
        Kind::Rbac,
        d(
            "Adds a rule to the role `manifests` writes to `config/rbac/role.yaml`: the verbs allowed on the resources of the API groups, or on non-resource URLs. With `namespace` the rule goes to a Role in that namespace instead of the ClusterRole. Rules that differ only in one list are merged, as controller-gen merges them.",
            Same,
        ),
    ),
    (
        Kind::Webhook,
        d(
            "Declares a mutating or validating admission webhook; `manifests` writes it to `config/webhook/manifests.yaml`. `operator-gen create webhook` writes these lines for you.",
            Same,
        ),
    ),
    (
        Kind::WebhookConfiguration,
        d(
            "Names the MutatingWebhookConfiguration or ValidatingWebhookConfiguration object that the webhooks of that kind go into.",
            Same,
        ),
    ),
    (
        Kind::Resource,
        d(
            "Sets the CRD's names and scope: the plural (`path`), the singular, `scope=Namespaced` or `scope=Cluster`, short names and categories.",
            Same,
        ),
    ),
    (
        Kind::SubresourceStatus,
        d(
            "Turns on the status subresource: the status is written through `/status`, and a write of the object leaves its status as it was.",
            Same,
        ),
    ),
    (
        Kind::SubresourceScale,
        d_example(
            "Turns on the scale subresource, so `kubectl scale` and autoscalers work: `specpath` and `statuspath` are the JSON paths of the wanted and current replica counts, `selectorpath` that of the label selector.",
            Same,
            "+kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector",
        ),
    ),
    (
        Kind::PrintColumn,
        d_example(
            "Adds a column to what `kubectl get` prints for the kind: its name, its type, the JSON path of the value, and optionally a description, a format and a priority (columns of priority above 0 show with `-o wide`).",
            Same,
            "+kubebuilder:printcolumn:name=\"Replicas\",type=integer,JSONPath=\".spec.replicas\"",
        ),
    ),
    (
        Kind::StorageVersion,
        d(
            "Marks the version the apiserver stores objects in, when a kind has several versions. Exactly one version of a kind has it.",
            Same,
        ),
    ),
    (
        Kind::DeprecatedVersion,
        d(
            "Marks a version deprecated: clients that use it get the warning.",
            Same,
        ),
    ),
    (
        Kind::SkipVersion,
        d("Leaves this version out of the CRD.", Same),
    ),
    (
        Kind::UnservedVersion,
        d(
            "Keeps this version in the CRD but has the apiserver not serve it.",
            Same,
        ),
    ),
    (
        Kind::SelectableField,
        d(
            "Lets clients select objects by a field's value (`kubectl get --field-selector`).",
            Same,
        ),
    ),
    (
        Kind::Metadata,
        d(
            "Adds annotations and labels to the CRD object itself (`key=value` items).",
            Same,
        ),
    ),
    (
        Kind::ExternalDocs,
        d(
            "Links the schema to external documentation (`externalDocs`).",
            Same,
        ),
    ),
    (
        Kind::ValidationRequired,
        d(
            "Makes the field required, whatever its type (even an `Option`).",
            Differs(
                "The same on a field. controller-gen also takes it on a package, where it makes every field of the package required unless marked optional; operator-gen takes it on fields only.",
            ),
        ),
    ),
    (
        Kind::ValidationOptional,
        d(
            "Makes the field optional, whatever its type (even one that is not an `Option`).",
            Differs(
                "The same on a field. controller-gen also takes it on a package, where it makes every field of the package optional unless marked required; operator-gen takes it on fields only.",
            ),
        ),
    ),
    (
        Kind::Schemaless,
        d(
            "Gives the field an empty schema: no type and no validation. Pair it with `+kubebuilder:pruning:PreserveUnknownFields` so that the apiserver keeps what the field holds.",
            Same,
        ),
    ),
    (
        Kind::EmbeddedResource,
        d(
            "Marks a field as holding a whole Kubernetes object (`apiVersion`, `kind`, `metadata`), which the apiserver then checks as such.",
            Same,
        ),
    ),
    (
        Kind::AtMostOneOf,
        d(
            "On a struct: at most one of the listed fields may be set. A CEL rule on the struct's schema says so.",
            Same,
        ),
    ),
    (
        Kind::ExactlyOneOf,
        d(
            "On a struct: exactly one of the listed fields must be set. A CEL rule on the struct's schema says so.",
            Same,
        ),
    ),
    (
        Kind::AtLeastOneOf,
        d(
            "On a struct: at least one of the listed fields must be set. A CEL rule on the struct's schema says so.",
            Same,
        ),
    ),
    (
        Kind::PrunePreserveUnknownFields,
        d(
            "Stops the apiserver from dropping the fields the schema does not list (`x-kubernetes-preserve-unknown-fields`).",
            Same,
        ),
    ),
    (
        Kind::Default,
        d(
            "Sets the default the apiserver fills in when the field is absent. The value is written as controller-gen writes literals: `true`, `1.5`, `ahoy`, `{a,b}` for a list, `{key: value}` for an object.",
            Differs(FIELD_ONLY),
        ),
    ),
    (
        Kind::K8sDefault,
        d(
            "Sets the default the apiserver fills in when the field is absent, written as JSON (strings in double quotes). `ref(...)` values are accepted and ignored.",
            Differs(FIELD_ONLY),
        ),
    ),
    (
        Kind::Example,
        d(
            "Sets the schema's `example`: documentation for readers of the CRD, not checked.",
            Differs(FIELD_ONLY),
        ),
    ),
    (
        Kind::Title,
        d(
            "Sets the schema's `title`: documentation for readers of the CRD, not checked.",
            Same,
        ),
    ),
    (
        Kind::Optional,
        d(
            "Makes the field optional: it is left out of its object's `required`, even when its type is not an `Option`.",
            Same,
        ),
    ),
    (
        Kind::Required,
        d(
            "Makes the field required: it is listed in its object's `required`, even when it is an `Option`. A kind's `metadata` is not a field of the spec struct: `#[k8s(required_metadata)]` on the spec struct is this marker on Go's `metav1.ObjectMeta`.",
            Same,
        ),
    ),
    (
        Kind::K8sOptional,
        d(
            "The Kubernetes spelling of `+optional`, with the same effect.",
            Same,
        ),
    ),
    (
        Kind::K8sRequired,
        d(
            "The Kubernetes spelling of `+required`, with the same effect.",
            Same,
        ),
    ),
    (
        Kind::Nullable,
        d(
            "Lets the field hold `null` (`nullable: true`), which the apiserver otherwise drops.",
            Same,
        ),
    ),
    (
        Kind::ListType,
        d(
            "Says how server-side apply merges a list: `atomic` replaces it whole, `set` merges items that must be unique, `map` merges items by the fields `+listMapKey` names.",
            Same,
        ),
    ),
    (
        Kind::ListMapKey,
        d(
            "Names a field that identifies the items of a `+listType=map` list. Repeat it when the key is made of several fields.",
            Same,
        ),
    ),
    (
        Kind::K8sListType,
        d(
            "The Kubernetes spelling of `+listType`, with the same effect.",
            Same,
        ),
    ),
    (
        Kind::K8sListMapKey,
        d(
            "The Kubernetes spelling of `+listMapKey`, with the same effect.",
            Same,
        ),
    ),
    (
        Kind::MapType,
        d(
            "Says how server-side apply merges a map: `atomic` replaces it whole, `granular` merges it key by key.",
            Same,
        ),
    ),
    (
        Kind::StructType,
        d(
            "Says how server-side apply merges a struct: `atomic` replaces it whole, `granular` merges it field by field.",
            Same,
        ),
    ),
    (
        Kind::K8sEnum,
        d_example(
            "On an enum of unit variants: the schema lists the variants' names, as serde writes them, in sorted order.",
            Differs(
                "Lists the values of the string constants declared with the Go type, sorted. A Rust enum's variants are those constants.",
            ),
            "+k8s:enum",
        ),
    ),
    (
        Kind::Immutable,
        d(
            "Makes the field immutable: once set, an update may not change it (a `self == oldSelf` CEL rule). On an optional field a rule on its object also keeps it from being added or removed after creation.",
            Same,
        ),
    ),
    (
        Kind::GenClient,
        d(
            "Asks for a typed client for the kind. The derive writes one for every kind, so the marker changes nothing; the `+genclient:` markers below trim it.",
            NotRead(CLIENT_GEN),
        ),
    ),
    (
        Kind::GenClientNonNamespaced,
        d(
            "Asks for a client of a cluster-scoped kind, one that takes no namespace. Refused on a namespaced kind.",
            NotRead(CLIENT_GEN),
        ),
    ),
    (
        Kind::GenClientNoStatus,
        d(
            "Leaves the status verbs (`update_status`, `patch_status`, `apply_status`) out of the typed client.",
            NotRead(CLIENT_GEN),
        ),
    ),
    (
        Kind::GenClientNoVerbs,
        d(
            "Leaves every verb out of the typed client.",
            NotRead(CLIENT_GEN),
        ),
    ),
    (
        Kind::GenClientReadonly,
        d(
            "Gives the typed client `get`, `list` and `watch` only.",
            NotRead(CLIENT_GEN),
        ),
    ),
    (
        Kind::GenClientOnlyVerbs,
        d(
            "Gives the typed client the listed verbs only, named as code-generator names them (`create`, `update`, `updateStatus`, `delete`, `deleteCollection`, `get`, `list`, `watch`, `patch`, `patchStatus`, `apply`, `applyStatus`).",
            NotRead(CLIENT_GEN),
        ),
    ),
    (
        Kind::GenClientSkipVerbs,
        d(
            "Gives the typed client every verb but the listed ones, named as for `+genclient:onlyVerbs`.",
            NotRead(CLIENT_GEN),
        ),
    ),
    (
        Kind::Minimum,
        d("The smallest number the value may be.", Same),
    ),
    (
        Kind::Maximum,
        d("The largest number the value may be.", Same),
    ),
    (
        Kind::ExclusiveMinimum,
        d(
            "With `true`, the `Minimum` itself is refused: the value must be greater.",
            Same,
        ),
    ),
    (
        Kind::ExclusiveMaximum,
        d(
            "With `true`, the `Maximum` itself is refused: the value must be smaller.",
            Same,
        ),
    ),
    (
        Kind::MultipleOf,
        d("The value must be a multiple of this number.", Same),
    ),
    (
        Kind::MinLength,
        d("The fewest characters a string may have.", Same),
    ),
    (
        Kind::MaxLength,
        d("The most characters a string may have.", Same),
    ),
    (
        Kind::Pattern,
        d(
            "A regular expression the string must match. Quote it with backticks when it holds a comma.",
            Same,
        ),
    ),
    (
        Kind::Enum,
        d(
            "The only values the field may hold, separated by `;`.",
            Same,
        ),
    ),
    (
        Kind::Format,
        d(
            "A format the apiserver checks strings against, such as `date-time`, `uuid` or `email`.",
            Same,
        ),
    ),
    (Kind::MinItems, d("The fewest items a list may have.", Same)),
    (Kind::MaxItems, d("The most items a list may have.", Same)),
    (
        Kind::UniqueItems,
        d(
            "Asks for a list of unique items. The apiserver refuses a CRD with `uniqueItems: true`: write `+listType=set` instead.",
            Same,
        ),
    ),
    (
        Kind::MinProperties,
        d("The fewest keys an object or map may have.", Same),
    ),
    (
        Kind::MaxProperties,
        d("The most keys an object or map may have.", Same),
    ),
    (
        Kind::Type,
        d(
            "Replaces the schema's type (`string`, `integer`, `number`, `boolean`, `object` or `array`), for a value that serializes differently from its Rust type.",
            Same,
        ),
    ),
    (
        Kind::XValidation,
        d(
            "A CEL rule the value must satisfy, and the message the apiserver returns when it does not. Repeat it for several rules; `oldSelf` in a rule makes it a rule on updates.",
            Same,
        ),
    ),
    (
        Kind::XEmbeddedResource,
        d(
            "Another spelling of `+kubebuilder:validation:EmbeddedResource`, with the same effect.",
            Same,
        ),
    ),
    (
        Kind::XIntOrString,
        d(
            "Marks the value as an integer or a string (`x-kubernetes-int-or-string`).",
            Same,
        ),
    ),
    (
        Kind::XPreserveUnknownFields,
        d(
            "The older spelling of `+kubebuilder:pruning:PreserveUnknownFields`, with the same effect.",
            Same,
        ),
    ),
    (
        Kind::ValidationNullable,
        d(
            "Another spelling of `+nullable`, with the same effect.",
            Same,
        ),
    ),
];

// The compiler refuses the crate when `DOCS` lacks a marker, repeats one or strays from the
// registry's order.
const _: () = {
    assert!(
        DOCS.len() == REGISTRY.len(),
        "codegen/src/markers/docs.rs: DOCS needs exactly one entry for each marker of REGISTRY"
    );
    let mut i = 0;
    while i < DOCS.len() {
        assert!(
            DOCS[i].0 as usize == i,
            "codegen/src/markers/docs.rs: DOCS lists the markers in the order of the Kind enum"
        );
        i += 1;
    }
};

/// The marker lines the reference shows as the example of `kind` (`+` included, separated by
/// `\n`): its [`Doc::example`], else the registry's example, else the lines of its first proof
/// with `{field}` read as `replicas`; `None` when it has none of these.
pub fn example(kind: Kind) -> Option<String> {
    let def = &REGISTRY[kind as usize];
    if let Some(lines) = doc(kind).example {
        return Some(lines.to_string());
    }
    if !def.example.is_empty() {
        return Some(def.example.to_string());
    }
    def.proofs
        .first()
        .map(|p| p.lines.replace("{field}", "replicas"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_marker_has_a_summary_and_an_example_that_parses() {
        for d in REGISTRY {
            let doc = doc(d.kind);
            assert!(
                doc.summary.ends_with('.'),
                "`{}`: the summary is one or more sentences",
                d.name
            );
            let lines = example(d.kind).unwrap_or_default();
            assert!(
                lines
                    .split('\n')
                    .any(|l| l.starts_with(&format!("+{}", d.name))),
                "`{}` has no example line of its own: {lines:?}",
                d.name
            );
            for line in lines.split('\n') {
                let parsed = super::super::parse_line(line);
                match d.effect {
                    // a refused marker's example is refused with the registry's reason
                    super::super::Effect::None(reason) => {
                        let e = parsed.expect_err(line);
                        assert!(e.message.contains(reason), "{line}: {}", e.message);
                    }
                    _ => {
                        parsed
                            .unwrap_or_else(|e| panic!("{line}: {}", e.message))
                            .unwrap_or_else(|| panic!("{line} is a scaffold marker"));
                    }
                }
            }
        }
    }
}
