//! The marker registry: every marker operator-gen knows, defined once. An entry holds the
//! controller-gen spelling, the `#[k8s]` keys, where the marker may stand, its argument grammar,
//! whether it repeats, its priority and its effect, or the reason it has none in Rust (which the
//! parser reports as an error). The [`Kind`] enum is generated from the same list, so emitters
//! match on variants. Effects are data: the registry says what a marker does to a schema
//! ([`SchemaEffect`]) and the schema emitter does it, so this module uses no other module of the
//! crate, and a marker with an effect the emitters already know touches this file only.

/// Where a marker may stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A module (`//!` lines) or any item's docs: package-level markers such as rbac and webhook.
    Package,
    /// The spec struct of a custom resource, or any named type.
    Type,
    Field,
}

/// The shape of a marker's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// No value; `=false` turns it off.
    Flag,
    Bool,
    Int,
    Float,
    Str,
    /// `a;b;c` or `{a,b,c}`.
    List,
    /// controller-gen's "any" literal: objects, lists, numbers, bools, strings.
    Any,
    /// A JSON document (`+default=`).
    Json,
    /// Named arguments `k=v,k2=v2` with the given keys and shapes.
    Args(&'static [(&'static str, Arg)]),
}

/// How a marker changes the OpenAPI schema it stands on, as data: `schema::apply_markers`
/// applies it, in priority order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaEffect {
    /// Sets a keyword from the marker's value. The schema's type must be one of the listed
    /// types (any type when the list is empty), or the marker is refused.
    Set(Keyword, &'static [&'static str]),
    /// Adds the CEL rule the marker's arguments spell (`rule=`, `message=`, ...).
    AddRule,
    /// Adds a CEL rule on the object counting which of the listed fields are set.
    AddFieldCountRule(FieldCount),
    /// Sorts the values of an enum of strings, as controller-gen sorts Go's string constants.
    SortEnum,
}

/// A schema keyword a marker sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keyword {
    Minimum,
    Maximum,
    ExclusiveMinimum,
    ExclusiveMaximum,
    MultipleOf,
    MinLength,
    MaxLength,
    Pattern,
    /// `enum`: the listed values, JSON-decoded where they parse.
    Enum,
    Format,
    MinItems,
    MaxItems,
    UniqueItems,
    MinProperties,
    MaxProperties,
    /// `type`: a type other than `object` drops the properties.
    Type,
    /// `default` from controller-gen's literal: `{}` on a list means `[]`.
    Default,
    /// `default` from a JSON document; a `ref(...)` value (null) sets nothing.
    DefaultJson,
    Example,
    /// `title`, the value as text.
    Title,
    /// `x-kubernetes-list-type`: map, set or atomic.
    ListType,
    /// Adds a key to `x-kubernetes-list-map-keys`.
    ListMapKey,
    /// `x-kubernetes-map-type`.
    MapType,
    /// `externalDocs` from the `url` and `description` arguments.
    ExternalDocs,
    /// The flags: set when the marker is on, untouched when `=false`.
    Nullable,
    PreserveUnknownFields,
    /// `x-kubernetes-embedded-resource`, which also keeps unknown fields and makes an object.
    EmbeddedResource,
    /// `x-kubernetes-int-or-string` with its `anyOf`, dropping the type.
    IntOrString,
}

/// How many of the fields a field-count rule lists may be set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldCount {
    AtMostOne,
    ExactlyOne,
    AtLeastOne,
}

/// The types a keyword's marker may stand on; empty for any.
const ANY: &[&str] = &[];
const NUMBER: &[&str] = &["integer", "number"];
const STRING: &[&str] = &["string"];
const ARRAY: &[&str] = &["array"];
const OBJECT: &[&str] = &["object"];

const fn set(keyword: Keyword, needs: &'static [&'static str]) -> Effect {
    Effect::Schema(SchemaEffect::Set(keyword, needs))
}

/// What a marker does. Every variant but [`Effect::None`] names the emitter that reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Changes the OpenAPI schema of what it stands on.
    Schema(SchemaEffect),
    /// Read by the schema emitter where it assembles an object's fields; says how.
    Field(&'static str),
    /// Changes the CRD outside the schema (names, versions, subresources, columns); crd.rs.
    Crd(&'static str),
    /// A rule of the generated role; rbac.rs.
    Rbac,
    /// A webhook or webhook configuration; webhook.rs.
    Webhook,
    /// Changes the typed client the derive generates; client.rs.
    Client(&'static str),
    /// Decides what the source scan emits for a module; says how.
    Scan(&'static str),
    /// No effect in Rust: the parser rejects the marker with this reason and fix.
    None(&'static str),
}

impl Effect {
    /// The emitter a marker feeds, as shown in the registry's documentation and tests.
    pub fn emitter(&self) -> &'static str {
        match self {
            Effect::Schema(_) | Effect::Field(_) => "schema",
            Effect::Crd(_) => "crd",
            Effect::Rbac => "rbac",
            Effect::Webhook => "webhook",
            Effect::Client(_) => "client",
            Effect::Scan(_) => "scan",
            Effect::None(_) => "none",
        }
    }
    /// True when the marker changes the OpenAPI schema the apiserver enforces.
    pub fn is_schema(&self) -> bool {
        matches!(self, Effect::Schema(_) | Effect::Field(_))
    }
}

/// Leaves the fixture field out of an object, in a [`Case`].
pub const ABSENT: &str = "";

/// How the real apiserver proves what a marker does. The apiserver test builds its fixture from
/// these: each proof gets a struct `P<n>` holding one field `f` of type `ty` that carries `lines`
/// (or, when `ty` declares a type, `struct {...}` or `enum {...}`, the lines stand on that type
/// and `f` holds it). `{field}` in `lines` is the JSON path of `f` below `.spec`.
#[derive(Clone, Copy, Debug)]
pub struct Proof {
    pub ty: &'static str,
    /// Marker lines, `+` included, separated by `\n`.
    pub lines: &'static str,
    pub case: Case,
}

/// What the apiserver must do with objects that set a proof's field. Values are JSON;
/// [`ABSENT`] leaves the field out.
#[derive(Clone, Copy, Debug)]
pub enum Case {
    /// `ok` is accepted on create; `bad` is rejected with a message containing `says`.
    Rejects {
        ok: &'static str,
        bad: &'static str,
        says: &'static str,
    },
    /// Created with `ok`, then updated to `bad`: the update is rejected with `says`.
    RejectsUpdate {
        ok: &'static str,
        bad: &'static str,
        says: &'static str,
    },
    /// Created with `given`, the stored object holds `stored`.
    Stores {
        given: &'static str,
        stored: &'static str,
    },
    /// Applied server-side by one field manager as `first`, then by another (forced) as `second`:
    /// the stored object holds `stored`.
    Merges {
        first: &'static str,
        second: &'static str,
        stored: &'static str,
    },
    /// Documentation only (title, example, external docs): the CRD the apiserver stores keeps
    /// the field's schema exactly as generated.
    Kept,
    /// The apiserver refuses a CRD carrying the marker, with a message containing `says`.
    RefusesCrd { says: &'static str },
    /// A root marker: an object created with `given` shows `cell` in the column the lines add.
    Column {
        given: &'static str,
        cell: &'static str,
    },
    /// A root marker: the scale subresource reads `given` from the field, and setting the scale
    /// to `set` writes it back.
    Scale {
        given: &'static str,
        set: &'static str,
    },
    /// A root marker: status sent with a create is not stored, as the status subresource owns it.
    StatusIgnored,
}

impl Proof {
    const fn new(ty: &'static str, lines: &'static str, case: Case) -> Proof {
        Proof { ty, lines, case }
    }
}

const fn rejects(
    ty: &'static str,
    lines: &'static str,
    ok: &'static str,
    bad: &'static str,
    says: &'static str,
) -> Proof {
    Proof::new(ty, lines, Case::Rejects { ok, bad, says })
}

const fn stores(
    ty: &'static str,
    lines: &'static str,
    given: &'static str,
    stored: &'static str,
) -> Proof {
    Proof::new(ty, lines, Case::Stores { given, stored })
}

const fn kept(ty: &'static str, lines: &'static str) -> Proof {
    Proof::new(ty, lines, Case::Kept)
}

/// One marker's definition, without its [`Kind`].
#[derive(Clone, Copy)]
pub struct Spec {
    /// controller-gen's spelling, without the leading `+`.
    pub name: &'static str,
    /// Keys of the attribute form `#[k8s(key = ...)]`, the preferred one first; may be empty.
    pub keys: &'static [&'static str],
    pub targets: &'static [Target],
    pub arg: Arg,
    /// May be given more than once, each occurrence adding to the result.
    pub repeatable: bool,
    /// Also exists as `kubebuilder:validation:items:<Name>` (`#[k8s(items_<key>)]`), applying
    /// to the items of a list.
    pub items: bool,
    /// Order of application to a schema, lowest first (controller-gen's `ApplyPriority`); items
    /// markers always come last.
    pub priority: u8,
    pub effect: Effect,
    /// What the real apiserver must do with it; every marker that changes the schema has one.
    /// Empty without the `proofs` feature.
    pub proofs: &'static [Proof],
    /// A marker line with this marker, for the registry's own test when it has no proof.
    /// Empty without the `proofs` feature.
    pub example: &'static str,
}

/// One marker of the registry.
pub struct Def {
    pub kind: Kind,
    pub spec: Spec,
}

impl std::ops::Deref for Def {
    type Target = Spec;
    fn deref(&self) -> &Spec {
        &self.spec
    }
}

const fn def(
    name: &'static str,
    keys: &'static [&'static str],
    targets: &'static [Target],
    arg: Arg,
    effect: Effect,
) -> Spec {
    Spec {
        name,
        keys,
        targets,
        arg,
        repeatable: false,
        items: false,
        priority: 10,
        effect,
        proofs: &[],
        example: "",
    }
}

impl Spec {
    const fn repeatable(mut self) -> Spec {
        self.repeatable = true;
        self
    }
    const fn items(mut self) -> Spec {
        self.items = true;
        self
    }
    const fn priority(mut self, p: u8) -> Spec {
        self.priority = p;
        self
    }
    // Without the `proofs` feature the argument is dropped, so it is not linked into the binary.
    const fn proved(mut self, proofs: &'static [Proof]) -> Spec {
        if cfg!(feature = "proofs") {
            self.proofs = proofs;
        }
        self
    }
    const fn example(mut self, line: &'static str) -> Spec {
        if cfg!(feature = "proofs") {
            self.example = line;
        }
        self
    }
}

/// Priority of every `items:` marker: after everything else.
pub const ITEMS_PRIORITY: u8 = 14;

macro_rules! registry {
    ($( $(#[$doc:meta])* $kind:ident => $spec:expr, )*) => {
        /// A marker, as the registry names it. `kind.def()` is its definition.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind { $( $(#[$doc])* $kind, )* }

        /// Every marker, in [`Kind`] order.
        pub static REGISTRY: &[Def] = &[ $( Def { kind: Kind::$kind, spec: $spec }, )* ];
    };
}

impl Kind {
    pub fn def(self) -> &'static Def {
        &REGISTRY[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

/// The definition of a canonical marker name and whether it is its `items:` form.
pub fn by_name(name: &str) -> Option<(&'static Def, bool)> {
    if let Some(d) = REGISTRY.iter().find(|d| d.name == name) {
        return Some((d, false));
    }
    let short = name.strip_prefix("kubebuilder:validation:items:")?;
    REGISTRY
        .iter()
        .find(|d| d.items && d.name.strip_prefix("kubebuilder:validation:") == Some(short))
        .map(|d| (d, true))
}

/// The definition an attribute key (`min_length`, `items_maximum`) names.
pub fn by_key(key: &str) -> Option<(&'static Def, bool)> {
    if let Some(d) = REGISTRY.iter().find(|d| d.keys.contains(&key)) {
        return Some((d, false));
    }
    let short = key.strip_prefix("items_")?;
    REGISTRY
        .iter()
        .find(|d| d.items && d.keys.contains(&short))
        .map(|d| (d, true))
}

/// Every marker name, `items:` forms included.
pub fn all_names() -> impl Iterator<Item = String> {
    REGISTRY.iter().flat_map(|d| {
        let items = d.items.then(|| {
            d.name.replacen(
                "kubebuilder:validation:",
                "kubebuilder:validation:items:",
                1,
            )
        });
        std::iter::once(d.name.to_string()).chain(items)
    })
}

/// Every attribute key, `items_` forms included.
pub fn all_keys() -> impl Iterator<Item = String> {
    REGISTRY.iter().flat_map(|d| {
        d.keys.iter().flat_map(move |k| {
            let items = d.items.then(|| format!("items_{k}"));
            std::iter::once(k.to_string()).chain(items)
        })
    })
}

const P: &[Target] = &[Target::Package];
const T: &[Target] = &[Target::Type];
const F: &[Target] = &[Target::Field];
const TF: &[Target] = &[Target::Type, Target::Field];
const PTF: &[Target] = &[Target::Package, Target::Type, Target::Field];

const RBAC: &[(&str, Arg)] = &[
    ("groups", Arg::List),
    ("resources", Arg::List),
    ("resourceNames", Arg::List),
    ("verbs", Arg::List),
    ("urls", Arg::List),
    ("namespace", Arg::Str),
    ("roleName", Arg::Str),
];
const WEBHOOK: &[(&str, Arg)] = &[
    ("mutating", Arg::Bool),
    ("failurePolicy", Arg::Str),
    ("matchPolicy", Arg::Str),
    ("sideEffects", Arg::Str),
    ("timeoutSeconds", Arg::Int),
    ("groups", Arg::List),
    ("resources", Arg::List),
    ("verbs", Arg::List),
    ("versions", Arg::List),
    ("name", Arg::Str),
    ("path", Arg::Str),
    ("url", Arg::Str),
    ("serviceName", Arg::Str),
    ("serviceNamespace", Arg::Str),
    ("servicePort", Arg::Int),
    ("admissionReviewVersions", Arg::List),
    ("reinvocationPolicy", Arg::Str),
    ("webhookVersions", Arg::List),
    ("patch", Arg::Str),
];
const XVALIDATION: &[(&str, Arg)] = &[
    ("rule", Arg::Str),
    ("message", Arg::Str),
    ("messageExpression", Arg::Str),
    ("reason", Arg::Str),
    ("fieldPath", Arg::Str),
    ("optionalOldSelf", Arg::Bool),
];

const EMBEDDED_OK: &str = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#;
const EMBEDDED_BAD: &str = r#"{"apiVersion":"v1","metadata":{"name":"x"}}"#;
const KEYED_OK: &str = r#"[{"name":"a","value":1},{"name":"b","value":1}]"#;
const KEYED_BAD: &str = r#"[{"name":"a","value":1},{"name":"a","value":2}]"#;

const DEEPCOPY: &str = "Rust types derive Clone instead of generated deep copies; drop the marker";
const APPLY_CONFIGURATIONS: &str = "the derives write an apply configuration, `<Type>Apply`, for every struct, in the type's own module; drop the marker";

registry! {
    /// `+groupName=<group>` on a module: the API group its kinds belong to; the scan checks it
    /// against each kind's `#[k8s(group)]`.
    GroupName => def("groupName", &[], P, Arg::Str,
        Effect::Scan("the module's API group, checked against the group of each kind in it")).example("+groupName=ship.example.com"),
    /// `+versionName=<version>` on a module: its API version, checked like `groupName`.
    VersionName => def("versionName", &[], P, Arg::Str,
        Effect::Scan("the module's API version, checked against the version of each kind in it")).example("+versionName=v1"),
    /// `+kubebuilder:skip` on a module: no CRD is generated for the kinds in it or below it.
    Skip => def("kubebuilder:skip", &[], P, Arg::Flag,
        Effect::Scan("`manifests` writes no CRD for the kinds in the module and its submodules")).example("+kubebuilder:skip"),
    ObjectGenerate => def("kubebuilder:object:generate", &[], PTF, Arg::Any, Effect::None(DEEPCOPY)),
    ObjectRoot => def("kubebuilder:object:root", &[], T, Arg::Flag, Effect::None(
        "#[derive(CustomResource)] on the spec struct generates the root type and its list; drop the marker")),
    AcGenerate => def("kubebuilder:ac:generate", &[], PTF, Arg::Any, Effect::None(APPLY_CONFIGURATIONS)),
    AcOutputPackage => def("kubebuilder:ac:output:package", &[], P, Arg::Any, Effect::None(APPLY_CONFIGURATIONS)),
    DeepcopyGen => def("k8s:deepcopy-gen", &[], PTF, Arg::Any, Effect::None(DEEPCOPY)),
    DeepcopyGenInterfaces => def("k8s:deepcopy-gen:interfaces", &[], T, Arg::Any, Effect::None(DEEPCOPY)),
    OpenapiGen => def("k8s:openapi-gen", &[], PTF, Arg::Any, Effect::None(
        "the derives record each type's schema, no OpenAPI definitions are generated; drop the marker")),
    Rbac => def("kubebuilder:rbac", &["rbac"], PTF, Arg::Args(RBAC), Effect::Rbac).repeatable().example("+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list"),
    Webhook => def("kubebuilder:webhook", &["webhook"], PTF, Arg::Args(WEBHOOK), Effect::Webhook)
        .repeatable().example("+kubebuilder:webhook:path=/validate,mutating=false,failurePolicy=fail,sideEffects=None,groups=ship.example.com,resources=frigates,verbs=create,versions=v1,name=vfrigate.example.com,admissionReviewVersions=v1"),
    WebhookConfiguration => def("kubebuilder:webhookconfiguration", &["webhook_configuration"], PTF,
        Arg::Args(&[("mutating", Arg::Bool), ("name", Arg::Str)]), Effect::Webhook).repeatable().example("+kubebuilder:webhookconfiguration:mutating=false,name=frigate-validation"),
    Resource => def("kubebuilder:resource", &["resource"], T, Arg::Args(&[
            ("path", Arg::Str),
            ("scope", Arg::Str),
            ("shortName", Arg::List),
            ("categories", Arg::List),
            ("singular", Arg::Str),
        ]),
        Effect::Crd("plural, singular, scope, short names and categories")).example("+kubebuilder:resource:path=fleets,scope=Cluster,shortName=fl"),
    SubresourceStatus => def("kubebuilder:subresource:status", &["subresource_status"], T, Arg::Flag,
        Effect::Crd("the status subresource")).proved(&[Proof::new("i32", "+kubebuilder:subresource:status", Case::StatusIgnored)]),
    SubresourceScale => def("kubebuilder:subresource:scale", &["scale"], T, Arg::Args(&[
            ("specpath", Arg::Str),
            ("statuspath", Arg::Str),
            ("selectorpath", Arg::Str),
        ]),
        Effect::Crd("the scale subresource")).proved(&[Proof::new("i32", "+kubebuilder:subresource:scale:specpath=.spec.{field},statuspath=.status.replicas", Case::Scale { given: "2", set: "5" })]),
    PrintColumn => def("kubebuilder:printcolumn", &["printcolumn"], T, Arg::Args(&[
            ("name", Arg::Str),
            ("type", Arg::Str),
            ("JSONPath", Arg::Str),
            ("description", Arg::Str),
            ("format", Arg::Str),
            ("priority", Arg::Int),
        ]),
        Effect::Crd("an additional printer column")).repeatable().proved(&[Proof::new("i32", "+kubebuilder:printcolumn:name=\"Proved\",type=integer,JSONPath=\".spec.{field}\"", Case::Column { given: "7", cell: "7" })]),
    StorageVersion => def("kubebuilder:storageversion", &["storage_version"], T, Arg::Flag,
        Effect::Crd("the version stored in etcd")).example("+kubebuilder:storageversion"),
    DeprecatedVersion => def("kubebuilder:deprecatedversion", &["deprecated_version"], T,
        Arg::Args(&[("warning", Arg::Str)]), Effect::Crd("a deprecated version and its warning")).example("+kubebuilder:deprecatedversion:warning=\"use v2\""),
    SkipVersion => def("kubebuilder:skipversion", &["skip_version"], T, Arg::Flag,
        Effect::Crd("leaves the version out of the CRD")).example("+kubebuilder:skipversion"),
    UnservedVersion => def("kubebuilder:unservedversion", &["unserved_version"], T, Arg::Flag,
        Effect::Crd("a version that is not served")).example("+kubebuilder:unservedversion"),
    SelectableField => def("kubebuilder:selectablefield", &["selectable_field"], T,
        Arg::Args(&[("JSONPath", Arg::Str)]), Effect::Crd("a field selector")).repeatable().example("+kubebuilder:selectablefield:JSONPath=.spec.size"),
    Metadata => def("kubebuilder:metadata", &["metadata"], T,
        Arg::Args(&[("annotations", Arg::List), ("labels", Arg::List)]),
        Effect::Crd("annotations and labels of the CRD object")).repeatable().example("+kubebuilder:metadata:annotations=\"team=ships\""),
    ExternalDocs => def("kubebuilder:externalDocs", &["external_docs"], TF,
        Arg::Args(&[("url", Arg::Str), ("description", Arg::Str)]),
        set(Keyword::ExternalDocs, ANY)).proved(&[kept("String", "+kubebuilder:externalDocs:url=https://example.com/docs,description=\"more\"")]),
    ValidationRequired => def("kubebuilder:validation:Required", &[], F, Arg::Flag,
        Effect::Field("the field is listed in its object's `required`, whatever its type")).proved(&[rejects("Option<String>", "+kubebuilder:validation:Required", "\"x\"", ABSENT, "Required value")]),
    ValidationOptional => def("kubebuilder:validation:Optional", &[], F, Arg::Flag,
        Effect::Field("the field is left out of its object's `required`, whatever its type")).proved(&[stores("String", "+kubebuilder:validation:Optional", ABSENT, ABSENT)]),
    Schemaless => def("kubebuilder:validation:Schemaless", &["schemaless"], F, Arg::Flag,
        Effect::Field("the field's schema is empty: no type, no validation")).proved(&[stores("String", "+kubebuilder:validation:Schemaless\n+kubebuilder:pruning:PreserveUnknownFields", "{\"any\":[1,true]}", "{\"any\":[1,true]}")]),
    EmbeddedResource => def("kubebuilder:validation:EmbeddedResource", &["embedded_resource"], F,
        Arg::Flag, set(Keyword::EmbeddedResource, ANY)).proved(&[rejects("serde_json::Value", "+kubebuilder:validation:EmbeddedResource", EMBEDDED_OK, EMBEDDED_BAD, "kind: Required value")]),
    AtMostOneOf => def("kubebuilder:validation:AtMostOneOf", &["at_most_one_of"], T, Arg::List,
        Effect::Schema(SchemaEffect::AddFieldCountRule(FieldCount::AtMostOne))).repeatable().priority(11).proved(&[rejects("struct { a: Option<i32>, b: Option<i32> }", "+kubebuilder:validation:AtMostOneOf=a;b", "{\"a\":1}", "{\"a\":1,\"b\":2}", "at most one of the fields in [a b] may be set")]),
    ExactlyOneOf => def("kubebuilder:validation:ExactlyOneOf", &["exactly_one_of"], T, Arg::List,
        Effect::Schema(SchemaEffect::AddFieldCountRule(FieldCount::ExactlyOne))).repeatable().priority(12).proved(&[rejects("struct { a: Option<i32>, b: Option<i32> }", "+kubebuilder:validation:ExactlyOneOf=a;b", "{\"b\":1}", "{}", "exactly one of the fields in [a b] must be set")]),
    AtLeastOneOf => def("kubebuilder:validation:AtLeastOneOf", &["at_least_one_of"], T, Arg::List,
        Effect::Schema(SchemaEffect::AddFieldCountRule(FieldCount::AtLeastOne))).repeatable().priority(13).proved(&[rejects("struct { a: Option<i32>, b: Option<i32> }", "+kubebuilder:validation:AtLeastOneOf=a;b", "{\"a\":1,\"b\":2}", "{}", "at least one of the fields in [a b] must be set")]),
    PrunePreserveUnknownFields => def("kubebuilder:pruning:PreserveUnknownFields",
        &["preserve_unknown_fields"], TF, Arg::Flag, set(Keyword::PreserveUnknownFields, ANY)).proved(&[stores("struct { a: Option<i32> }", "+kubebuilder:pruning:PreserveUnknownFields", "{\"a\":1,\"z\":2}", "{\"a\":1,\"z\":2}")]),
    Default => def("kubebuilder:default", &["default"], TF, Arg::Any, set(Keyword::Default, ANY)).proved(&[stores("Option<String>", "+kubebuilder:default=ahoy", ABSENT, "\"ahoy\"")]),
    /// `+default=<JSON>`, the Kubernetes spelling; `ref(...)` values are accepted and unused.
    K8sDefault => def("default", &[], TF, Arg::Json, set(Keyword::DefaultJson, ANY)).priority(9).proved(&[stores("Option<String>", "+default=\"ahoy\"", ABSENT, "\"ahoy\"")]),
    Example => def("kubebuilder:example", &["example"], TF, Arg::Any, set(Keyword::Example, ANY)).proved(&[kept("String", "+kubebuilder:example=ahoy")]),
    Title => def("kubebuilder:title", &["title"], TF, Arg::Any, set(Keyword::Title, ANY)).proved(&[kept("String", "+kubebuilder:title=Ahoy")]),
    Optional => def("optional", &["optional"], F, Arg::Flag,
        Effect::Field("the field is left out of its object's `required`")).proved(&[stores("String", "+optional", ABSENT, ABSENT)]),
    Required => def("required", &["required"], F, Arg::Flag,
        Effect::Field("the field is listed in its object's `required`")).proved(&[rejects("Option<String>", "+required", "\"x\"", ABSENT, "Required value")]),
    K8sOptional => def("k8s:optional", &[], F, Arg::Flag,
        Effect::Field("the field is left out of its object's `required`")).proved(&[stores("String", "+k8s:optional", ABSENT, ABSENT)]),
    K8sRequired => def("k8s:required", &[], F, Arg::Flag,
        Effect::Field("the field is listed in its object's `required`")).proved(&[rejects("Option<String>", "+k8s:required", "\"x\"", ABSENT, "Required value")]),
    Nullable => def("nullable", &["nullable"], F, Arg::Flag, set(Keyword::Nullable, ANY)).proved(&[stores("Option<String>", "+nullable", "null", "null")]),
    ListType => def("listType", &["list_type"], TF, Arg::Str, set(Keyword::ListType, ARRAY)).priority(9).proved(&[rejects("Vec<String>", "+listType=set", "[\"a\",\"b\"]", "[\"a\",\"a\"]", "Duplicate value"), Proof::new("Vec<String>", "+listType=atomic", Case::Merges { first: "[\"a\"]", second: "[\"b\"]", stored: "[\"b\"]" })]),
    ListMapKey => def("listMapKey", &["list_map_key"], TF, Arg::Str, set(Keyword::ListMapKey, ARRAY))
        .repeatable().proved(&[rejects("Vec<Keyed>", "+listType=map\n+listMapKey=name", KEYED_OK, KEYED_BAD, "Duplicate value")]),
    K8sListType => def("k8s:listType", &[], TF, Arg::Str, set(Keyword::ListType, ARRAY)).priority(9).proved(&[rejects("Vec<String>", "+k8s:listType=set", "[\"a\",\"b\"]", "[\"a\",\"a\"]", "Duplicate value")]),
    K8sListMapKey => def("k8s:listMapKey", &[], TF, Arg::Str, set(Keyword::ListMapKey, ARRAY))
        .repeatable().proved(&[rejects("Vec<Keyed>", "+k8s:listType=map\n+k8s:listMapKey=name", KEYED_OK, KEYED_BAD, "Duplicate value")]),
    MapType => def("mapType", &["map_type"], TF, Arg::Str, set(Keyword::MapType, OBJECT)).proved(&[Proof::new("BTreeMap<String, String>", "+mapType=atomic", Case::Merges { first: "{\"a\":\"1\"}", second: "{\"b\":\"2\"}", stored: "{\"b\":\"2\"}" })]),
    StructType => def("structType", &["struct_type"], TF, Arg::Str, set(Keyword::MapType, OBJECT)).proved(&[Proof::new("Pair", "+structType=atomic", Case::Merges { first: "{\"a\":\"1\"}", second: "{\"b\":\"2\"}", stored: "{\"b\":\"2\"}" })]),
    K8sEnum => def("k8s:enum", &["enum_type"], T, Arg::Flag, Effect::Schema(SchemaEffect::SortEnum)).proved(&[rejects("enum { Starboard, Port }", "+k8s:enum", "\"Port\"", "\"Aft\"", "supported values: \"Port\", \"Starboard\"")]),
    Immutable => def("k8s:immutable", &["immutable"], F, Arg::Flag,
        Effect::Field("a `self == oldSelf` rule on the field (and a presence rule on its object when optional)")).proved(&[Proof::new("Option<String>", "+k8s:immutable", Case::RejectsUpdate { ok: "\"a\"", bad: "\"b\"", says: "field is immutable" })]),
    GenClient => def("genclient", &["genclient"], T, Arg::Flag,
        Effect::Client("marks the kind for a typed client, which every kind gets")).example("+genclient"),
    GenClientNonNamespaced => def("genclient:nonNamespaced", &["non_namespaced"], T, Arg::Flag,
        Effect::Client("a cluster-scoped client; refused on a namespaced kind")).example("+genclient:nonNamespaced"),
    GenClientNoStatus => def("genclient:noStatus", &["no_status"], T, Arg::Flag,
        Effect::Client("no status verbs")).example("+genclient:noStatus"),
    GenClientNoVerbs => def("genclient:noVerbs", &["no_verbs"], T, Arg::Flag,
        Effect::Client("no verbs at all")).example("+genclient:noVerbs"),
    GenClientReadonly => def("genclient:readonly", &["readonly"], T, Arg::Flag,
        Effect::Client("get, list and watch only")).example("+genclient:readonly"),
    GenClientOnlyVerbs => def("genclient:onlyVerbs", &["only_verbs"], T, Arg::List,
        Effect::Client("these verbs only")).example("+genclient:onlyVerbs=get"),
    GenClientSkipVerbs => def("genclient:skipVerbs", &["skip_verbs"], T, Arg::List,
        Effect::Client("every verb but these")).example("+genclient:skipVerbs=get"),
    Minimum => def("kubebuilder:validation:Minimum", &["minimum"], TF, Arg::Float,
        set(Keyword::Minimum, NUMBER)).items().proved(&[rejects("i32", "+kubebuilder:validation:Minimum=3", "3", "2", "should be greater than or equal to 3")]),
    Maximum => def("kubebuilder:validation:Maximum", &["maximum"], TF, Arg::Float,
        set(Keyword::Maximum, NUMBER)).items().proved(&[rejects("i32", "+kubebuilder:validation:Maximum=3", "3", "4", "should be less than or equal to 3")]),
    ExclusiveMinimum => def("kubebuilder:validation:ExclusiveMinimum", &["exclusive_minimum"], TF,
        Arg::Bool, set(Keyword::ExclusiveMinimum, ANY)).items().proved(&[rejects("i32", "+kubebuilder:validation:Minimum=3\n+kubebuilder:validation:ExclusiveMinimum=true", "4", "3", "should be greater than 3")]),
    ExclusiveMaximum => def("kubebuilder:validation:ExclusiveMaximum", &["exclusive_maximum"], TF,
        Arg::Bool, set(Keyword::ExclusiveMaximum, ANY)).items().proved(&[rejects("i32", "+kubebuilder:validation:Maximum=3\n+kubebuilder:validation:ExclusiveMaximum=true", "2", "3", "should be less than 3")]),
    MultipleOf => def("kubebuilder:validation:MultipleOf", &["multiple_of"], TF, Arg::Float,
        set(Keyword::MultipleOf, NUMBER)).items().proved(&[rejects("i32", "+kubebuilder:validation:MultipleOf=3", "6", "7", "should be a multiple of 3")]),
    MinLength => def("kubebuilder:validation:MinLength", &["min_length"], TF, Arg::Int,
        set(Keyword::MinLength, STRING)).items().proved(&[rejects("String", "+kubebuilder:validation:MinLength=2", "\"ab\"", "\"a\"", "at least 2 chars long")]),
    MaxLength => def("kubebuilder:validation:MaxLength", &["max_length"], TF, Arg::Int,
        set(Keyword::MaxLength, STRING)).items().proved(&[rejects("String", "+kubebuilder:validation:MaxLength=2", "\"ab\"", "\"abc\"", "Too long: may not be more than 2 bytes")]),
    Pattern => def("kubebuilder:validation:Pattern", &["pattern"], TF, Arg::Str,
        set(Keyword::Pattern, STRING)).items().proved(&[rejects("String", "+kubebuilder:validation:Pattern=`^a+$`", "\"aa\"", "\"ab\"", "should match '^a+$'")]),
    Enum => def("kubebuilder:validation:Enum", &["enum_values"], TF, Arg::List,
        set(Keyword::Enum, ANY)).items().proved(&[rejects("String", "+kubebuilder:validation:Enum=port;starboard", "\"port\"", "\"aft\"", "Unsupported value: \"aft\"")]),
    Format => def("kubebuilder:validation:Format", &["format"], TF, Arg::Str,
        set(Keyword::Format, ANY)).items().proved(&[rejects("String", "+kubebuilder:validation:Format=uuid", "\"123e4567-e89b-12d3-a456-426614174000\"", "\"ahoy\"", "must be of type uuid")]),
    MinItems => def("kubebuilder:validation:MinItems", &["min_items"], TF, Arg::Int,
        set(Keyword::MinItems, ARRAY)).items().proved(&[rejects("Vec<String>", "+kubebuilder:validation:MinItems=1", "[\"a\"]", "[]", "should have at least 1 items")]),
    MaxItems => def("kubebuilder:validation:MaxItems", &["max_items"], TF, Arg::Int,
        set(Keyword::MaxItems, ARRAY)).items().proved(&[rejects("Vec<String>", "+kubebuilder:validation:MaxItems=1", "[\"a\"]", "[\"a\",\"b\"]", "Too many: 2: must have at most 1 item")]),
    UniqueItems => def("kubebuilder:validation:UniqueItems", &["unique_items"], TF, Arg::Bool,
        set(Keyword::UniqueItems, ANY)).items().proved(&[Proof::new("Vec<String>", "+kubebuilder:validation:UniqueItems=true", Case::RefusesCrd { says: "uniqueItems cannot be set to true" })]),
    MinProperties => def("kubebuilder:validation:MinProperties", &["min_properties"], TF, Arg::Int,
        set(Keyword::MinProperties, OBJECT)).items().proved(&[rejects("BTreeMap<String, String>", "+kubebuilder:validation:MinProperties=1", "{\"a\":\"1\"}", "{}", "should have at least 1 properties")]),
    MaxProperties => def("kubebuilder:validation:MaxProperties", &["max_properties"], TF, Arg::Int,
        set(Keyword::MaxProperties, OBJECT)).items().proved(&[rejects("BTreeMap<String, String>", "+kubebuilder:validation:MaxProperties=1", "{\"a\":\"1\"}", "{\"a\":\"1\",\"b\":\"2\"}", "Too many: 2: must have at most 1 item")]),
    Type => def("kubebuilder:validation:Type", &["type"], TF, Arg::Str,
        set(Keyword::Type, ANY)).items().priority(9).proved(&[rejects("f64", "+kubebuilder:validation:Type=integer", "3", "3.5", "must be of type integer")]),
    XValidation => def("kubebuilder:validation:XValidation", &["x_validation", "validation"], TF,
        Arg::Args(XVALIDATION), Effect::Schema(SchemaEffect::AddRule)).items().repeatable().proved(&[rejects("i32", "+kubebuilder:validation:XValidation:rule=\"self % 2 == 0\",message=\"must be even\"", "2", "3", "must be even"), Proof::new("i32", "+kubebuilder:validation:XValidation:rule=\"self >= oldSelf\",message=\"must not shrink\"", Case::RejectsUpdate { ok: "2", bad: "1", says: "must not shrink" }), Proof::new("i32", "+kubebuilder:validation:XValidation:rule=\"!oldSelf.hasValue() || self >= oldSelf.value()\",message=\"must not shrink once set\",optionalOldSelf=true", Case::RejectsUpdate { ok: "2", bad: "1", says: "must not shrink once set" })]),
    XEmbeddedResource => def("kubebuilder:validation:XEmbeddedResource", &["x_embedded_resource"],
        TF, Arg::Flag, set(Keyword::EmbeddedResource, ANY)).items().proved(&[rejects("serde_json::Value", "+kubebuilder:validation:XEmbeddedResource", EMBEDDED_OK, EMBEDDED_BAD, "kind: Required value")]),
    XIntOrString => def("kubebuilder:validation:XIntOrString", &["x_int_or_string", "int_or_string"],
        TF, Arg::Flag, set(Keyword::IntOrString, ANY)).items().priority(9).proved(&[rejects("String", "+kubebuilder:validation:XIntOrString", "3", "true", "must be of type")]),
    XPreserveUnknownFields => def("kubebuilder:validation:XPreserveUnknownFields",
        &["x_preserve_unknown_fields"], TF, Arg::Flag, set(Keyword::PreserveUnknownFields, ANY))
        .items().proved(&[stores("struct { a: Option<i32> }", "+kubebuilder:validation:XPreserveUnknownFields", "{\"a\":1,\"z\":2}", "{\"a\":1,\"z\":2}")]),
    ValidationNullable => def("kubebuilder:validation:Nullable", &[], TF, Arg::Flag,
        set(Keyword::Nullable, ANY)).items().proved(&[stores("Option<String>", "+kubebuilder:validation:Nullable", "null", "null")]),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_keys_are_unique_and_kinds_index_the_table() {
        let mut names = std::collections::BTreeSet::new();
        let mut keys = std::collections::BTreeSet::new();
        for (i, d) in REGISTRY.iter().enumerate() {
            assert_eq!(d.kind as usize, i, "{} is out of place", d.name);
            assert!(names.insert(d.name), "`{}` is defined twice", d.name);
            for k in d.keys {
                assert!(keys.insert(*k), "key `{k}` names two markers");
            }
            assert!(!d.targets.is_empty(), "`{}` may stand nowhere", d.name);
            if d.items {
                assert!(
                    d.name.starts_with("kubebuilder:validation:"),
                    "`{}` cannot have an items: form",
                    d.name
                );
            }
        }
        for k in all_keys() {
            assert!(by_key(&k).is_some(), "key `{k}` does not resolve");
        }
        for n in all_names() {
            assert!(by_name(&n).is_some(), "name `{n}` does not resolve");
        }
    }
}
