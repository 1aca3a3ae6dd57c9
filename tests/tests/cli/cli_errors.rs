//! Bad input, table-driven: each row sets a directory up, runs one command that must fail, and
//! checks the exit code, the one-line error text, and that the directory tree hash is the same
//! before and after (nothing on disk changed).

use std::path::Path;

use operator_gen_tests::cli;

/// How the directory looks before the failing command.
#[derive(Clone, Copy, Debug)]
enum Setup {
    /// Empty.
    Empty,
    /// `init`.
    Init,
    /// `init`, then `create api` for crew/v1 Captain.
    WithCaptain,
    /// `init`, then the controllers marker removed from `src/main.rs`.
    NoMarker,
    /// `init`, then `src/main.rs` deleted.
    NoMain,
    /// A `Makefile` of the user's own.
    Makefile,
    /// `init --namespaced`.
    InitNamespaced,
    /// `init`, then the edits.
    InitThen(&'static [Edit]),
    /// `init`, `create api` for crew/v1 Captain, then the edits.
    CaptainThen(&'static [Edit]),
    /// `init`, then the project made read-only; the command runs as an unprivileged user.
    ReadOnly,
    /// `init`, `create api` for crew/v1 Captain, then `create webhook --defaulting` for it.
    CaptainWebhook,
    /// These commands, in order.
    Commands(&'static [&'static str]),
    /// `init`, the commands, then the edits.
    CommandsThen(&'static [&'static str], &'static [Edit]),
    /// `init` committed in a new git repository on branch `main`, then the edits (uncommitted).
    Git(&'static [Edit]),
}

/// A change to a scaffolded project.
#[derive(Clone, Copy, Debug)]
enum Edit {
    /// Replace the first `from` in `file` with `to`.
    Replace(&'static str, &'static str, &'static str),
    /// Write `file` with these bytes.
    Write(&'static str, &'static [u8]),
    /// Append text to `file`.
    Append(&'static str, &'static str),
    /// Make `file` a symbolic link to `target`.
    Symlink(&'static str, &'static str),
    /// Put a doc comment of this many bytes on Captain's spec field.
    BigDoc(usize),
}

struct Row {
    setup: Setup,
    args: &'static str,
    /// Expected substring of stderr, never empty: the message that names the problem.
    error: &'static str,
    code: i32,
}

const fn row(setup: Setup, args: &'static str, error: &'static str, code: i32) -> Row {
    Row {
        setup,
        args,
        error,
        code,
    }
}

const CAPTAIN: &str = "create api --group crew --version v1 --kind Captain";
const DELETE_CAPTAIN: &str = "delete api --group crew --version v1 --kind Captain";

const CAPTAIN_DEFAULTING: &str =
    "create webhook --group crew --version v1 --kind Captain --defaulting";

/// A project with Captain in v1 and v2.
const TWO_VERSIONS: &[&str] = &[
    "init",
    CAPTAIN,
    "create api --group crew --version v2 --kind Captain",
];

/// Captain in v1 and v2, v1 the hub of a conversion webhook.
const CONVERTED: &[&str] = &[
    "init",
    CAPTAIN,
    "create api --group crew --version v2 --kind Captain",
    "create webhook --group crew --version v1 --kind Captain --conversion --spoke v2",
];

const INSTALL: &[u8] = cli::MINIMAL_INSTALL.as_bytes();

fn rows() -> Vec<Row> {
    use Setup::*;
    vec![
        // envtest use: a version that is no version, and one neither cached nor buildable
        row(
            Empty,
            "envtest use --k8s-version latest",
            "--k8s-version latest is not a kubernetes version; pass e.g. --k8s-version 1.37.2 or 1.37",
            1,
        ),
        row(
            Empty,
            "envtest use --k8s-version 1.21.9",
            "kubernetes 1.21.9 is neither in the cache nor in setup-envtest's directories, and operator-gen builds only 1.37.2; pass --k8s-version 1.37.2, or install 1.21.9 with `setup-envtest use 1.21.9`",
            1,
        ),
        // create api --from-crd: a schema no marker writes, named by its path; flags it takes not
        row(
            InitThen(&[Edit::Write(
                "crd.yaml",
                b"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ships.crew.my.domain\nspec:\n  group: crew.my.domain\n  names: {kind: Ship, plural: ships}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              size:\n                oneOf: [{type: string}, {type: integer}]\n",
            )]),
            "create api --from-crd crd.yaml",
            "crd.yaml: `oneOf` has no marker that writes it (operator-gen writes the keywords of a structural schema that controller-gen writes) at .spec.versions[v1].schema.openAPIV3Schema.properties.spec.properties.size",
            1,
        ),
        row(
            Init,
            "create api --from-crd missing.yaml",
            "cannot read missing.yaml: it does not exist; pass the path of a CRD file to --from-crd",
            1,
        ),
        row(
            Init,
            "create api --from-crd crd.yaml --kind Ship",
            "the argument '--from-crd <FILE>' cannot be used with '--kind <KIND>'",
            2,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Ship --external",
            "--external names someone else's kind by its CRD, but no --from-crd FILE is given; pass --from-crd FILE",
            1,
        ),
        // init
        row(
            Init,
            "init",
            "target directory is already initialized: PROJECT exists",
            1,
        ),
        row(
            Empty,
            "init --project-name Bad_Name",
            "project name \"Bad_Name\" is invalid",
            1,
        ),
        // clap reads a value starting with `-` as the next option, never as the name
        row(
            Empty,
            "init --project-name -lead",
            "unexpected argument '-l' found",
            2,
        ),
        row(
            Empty,
            "init --project-name self",
            "cannot name a rust crate",
            1,
        ),
        row(
            Empty,
            "init --project-name 9lives",
            "must start with a letter",
            1,
        ),
        row(
            Empty,
            "init --domain my..domain",
            "domain \"my..domain\" is invalid",
            1,
        ),
        row(
            Empty,
            "init --project-name null",
            "project name \"null\" reads as a boolean or null in YAML manifests",
            1,
        ),
        row(
            Empty,
            "init --domain yes",
            "domain \"yes\" reads as a boolean or null in YAML manifests",
            1,
        ),
        row(
            Empty,
            "init --k8s-version 1.20",
            "kubernetes version \"1.20\" is not supported",
            1,
        ),
        row(Empty, "init --license mit", "invalid value 'mit'", 2),
        row(
            Empty,
            "init --runtime-path /nonexistent/operator-gen",
            "--runtime-path /nonexistent/operator-gen holds no Cargo.toml",
            1,
        ),
        row(
            Empty,
            "init --runtime-path /tmp --runtime-git x",
            "cannot be used with",
            2,
        ),
        row(
            Makefile,
            "init",
            "init would overwrite Makefile; move it out of the directory",
            1,
        ),
        // create api: project state
        row(Empty, CAPTAIN, "no PROJECT file", 1),
        row(WithCaptain, CAPTAIN, "API resource already exists", 1),
        row(
            WithCaptain,
            "create api --group ship --version v1 --kind Frigate",
            "--multigroup",
            1,
        ),
        row(
            NoMarker,
            CAPTAIN,
            "src/main.rs has no `// +operator-gen:scaffold:controllers` line",
            1,
        ),
        row(NoMain, CAPTAIN, "src/main.rs is missing", 1),
        row(
            WithCaptain,
            "create api --group crew --version v2 --kind Captain --controller",
            "the controller module `captain` already belongs to crew/v1 Captain; pass --controller=false to add only the type",
            1,
        ),
        // create api: a kind that would take another kind's CRD
        row(
            WithCaptain,
            "create api --group crew --version v1 --kind Sloop --plural captains",
            "plural captains of Sloop is already the plural of kind Captain in crew/v1: both would be CRD captains.crew.my.domain; pass another --plural",
            1,
        ),
        row(
            WithCaptain,
            "create api --group crew --version v2 --kind Sloop --plural captains --force",
            "plural captains of Sloop is already the plural of kind Captain in crew/v1",
            1,
        ),
        row(
            WithCaptain,
            "create api --group crew --version v1 --kind CAPTAIN --force",
            "kind CAPTAIN differs only in case from kind Captain of crew/v1, and a group's kinds must differ case-insensitively (one CRD name for both); pass --kind Captain to add a version of it, or pick another kind",
            1,
        ),
        row(
            WithCaptain,
            "create api --group crew --version v2 --kind CapTain",
            "kind CapTain differs only in case from kind Captain of crew/v1",
            1,
        ),
        // create api: a second version of a kind
        row(
            WithCaptain,
            "create api --group crew --version v2 --kind Captain --resource=false --storage",
            "--storage marks the new version's type as stored, but --resource=false scaffolds no type; drop --storage or --resource=false",
            1,
        ),
        row(
            WithCaptain,
            "create api --group crew --version v2 --kind Captain --plural skippers",
            "--plural skippers differs from captains, the plural of Captain in crew/v1: the versions of a kind share one CRD; drop --plural or pass --plural captains",
            1,
        ),
        row(
            WithCaptain,
            "create api --group crew --version v1 --kind Memcached --image memcached:1.6 --namespaced=false",
            "--image scaffolds a namespaced kind with a controller that deploys the image in the kind's namespace, so it does not go with --namespaced=false; drop --namespaced=false",
            1,
        ),
        row(
            WithCaptain,
            "create api --group crew --version v1 --kind Memcached --image memcached:1.6 --controller=false",
            "so it does not go with --controller=false; drop --controller=false",
            1,
        ),
        row(
            WithCaptain,
            "create api --group crew --version v1 --kind Memcached --image memcached:1.6 --image-container-port 70000",
            "--image-container-port \"70000\" is not a port; pass a number from 1 to 65535",
            1,
        ),
        row(
            WithCaptain,
            "create api --group crew --version v1 --kind Memcached --image memcached:1.6 --run-as-user=-5",
            "--run-as-user \"-5\" is not a user ID; pass a number of 0 or more",
            1,
        ),
        row(
            WithCaptain,
            "create api --group crew --version v2 --kind Captain --namespaced=false",
            "--namespaced=false differs from the scope of Captain in crew/v1 (namespaced): the versions of a kind share one CRD; drop --namespaced",
            1,
        ),
        row(
            CaptainThen(&[Edit::Replace(
                "src/api/v1/captain.rs",
                "pub struct CaptainSpec {",
                "pub struct CaptainParameters {",
            )]),
            "create api --group crew --version v2 --kind Captain",
            "src/api/v1/captain.rs cannot be rewritten safely (it has no top-level `struct CaptainSpec`), so Captain v1 cannot be marked as the stored version; add `/// +kubebuilder:storageversion` to the doc comment of its spec by hand, or pass --storage to store v2",
            1,
        ),
        row(
            CaptainThen(&[Edit::Replace(
                "src/api/v1/captain.rs",
                "    kind = \"Captain\",",
                "    kind = \"Captain\",\n    storage_version,",
            )]),
            "create api --group crew --version v2 --kind Captain --storage",
            "src/api/v1/captain.rs marks Captain v1 as stored in a form operator-gen does not rewrite (`storage_version` in #[k8s(...)] or a #[doc] attribute); remove it there by hand, then run the command again",
            1,
        ),
        row(
            CaptainThen(&[Edit::Replace(
                "src/api/v1/captain.rs",
                "/// +kubebuilder:subresource:status\n#[derive(CustomResource,",
                "/// +kubebuilder:subresource:status\n/// +kubebuilder:storageversion\n#[derive(",
            )]),
            "create api --group crew --version v2 --kind Captain --storage",
            "src/api/v1/captain.rs cannot be rewritten safely (`struct CaptainSpec` does not derive CustomResource) and mentions `+kubebuilder:storageversion`; remove the marker there by hand, then run the command again",
            1,
        ),
        row(
            InitNamespaced,
            "create api --group crew --version v1 --kind Fleet --namespaced=false",
            "a namespace-scoped manager",
            1,
        ),
        row(
            InitNamespaced,
            "create api --group core --version v1 --kind Node --resource=false",
            "kind Node is cluster-scoped",
            1,
        ),
        // create webhook
        row(
            WithCaptain,
            "create webhook --group crew --version v1 --kind Captain",
            "create webhook needs at least one of --defaulting, --programmatic-validation and --conversion",
            1,
        ),
        row(
            WithCaptain,
            "create webhook --group crew --version v1 --kind FirstMate --defaulting",
            "no API found for crew/v1 FirstMate: a webhook needs the kind's type; run `operator-gen create api --group crew --version v1 --kind FirstMate` first",
            1,
        ),
        row(Empty, CAPTAIN_DEFAULTING, "no PROJECT file", 1),
        row(
            CaptainWebhook,
            CAPTAIN_DEFAULTING,
            "defaulting webhook already exists for crew/v1 Captain; drop --defaulting or pass --force",
            1,
        ),
        row(
            CaptainWebhook,
            "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation",
            "defaulting webhook already exists for crew/v1 Captain",
            1,
        ),
        row(
            Init,
            "create webhook --group apps --version v1 --kind Deployment --conversion",
            "apps/v1 Deployment is a built-in type, whose versions the apiserver converts itself; drop --conversion",
            1,
        ),
        row(
            WithCaptain,
            "create webhook --group crew --version v1 --kind Captain --conversion",
            "a conversion webhook needs a second version of Captain, but PROJECT has only v1",
            1,
        ),
        row(
            WithCaptain,
            "create webhook --group crew --version v1 --kind Captain --defaulting --spoke v2",
            "--spoke names the versions of a conversion webhook; pass --conversion with it or drop --spoke",
            1,
        ),
        row(
            NoMain,
            "create webhook --group apps --version v1 --kind Deployment --defaulting",
            "src/main.rs is missing, so the webhooks cannot be registered",
            1,
        ),
        row(
            Init,
            "create webhook --group apps --version v1 --kind Deploymnet --defaulting",
            "built-in group \"apps\" version \"v1\" has no kind \"Deploymnet\"; did you mean --kind Deployment?",
            1,
        ),
        row(
            Commands(TWO_VERSIONS),
            "create webhook --group crew --version v1 --kind Captain --conversion",
            "--conversion makes v1 the hub of Captain; pass the versions it converts to and from with --spoke v2",
            1,
        ),
        row(
            Commands(TWO_VERSIONS),
            "create webhook --group crew --version v1 --kind Captain --conversion --spoke v2,v3",
            "spoke version v3 of crew Captain is not in PROJECT; run `operator-gen create api --group crew --version v3 --kind Captain` first",
            1,
        ),
        row(
            Commands(TWO_VERSIONS),
            "create webhook --group crew --version v1 --kind Captain --conversion --spoke v2,,v3",
            "invalid value '' for '--spoke <VERSION>': \"\" is not a version name: each spoke must be a DNS-1123 label starting with a letter and not a Rust keyword, e.g. v2 or v2beta1; pass e.g. --spoke v2,v3",
            2,
        ),
        // custom webhook paths: each with its webhook type, a path the server can serve, not
        // shared by the two webhooks nor the conversion webhook's
        row(
            WithCaptain,
            "create webhook --group crew --version v1 --kind Captain --programmatic-validation --defaulting-path /custom-mutate",
            "--defaulting-path can only be used with --defaulting; pass --defaulting with it or drop --defaulting-path",
            1,
        ),
        row(
            WithCaptain,
            "create webhook --group crew --version v1 --kind Captain --defaulting --validation-path /custom-validate",
            "--validation-path can only be used with --programmatic-validation; pass --programmatic-validation with it or drop --validation-path",
            1,
        ),
        row(
            WithCaptain,
            "create webhook --group crew --version v1 --kind Captain --defaulting --defaulting-path custom-mutate",
            "invalid value 'custom-mutate' for '--defaulting-path <PATH>': \"custom-mutate\" is not a webhook path: it must be '/' or start with '/' and have segments of letters, digits, '-' and '_' only, e.g. /custom-mutate or /hooks/validate",
            2,
        ),
        row(
            WithCaptain,
            "create webhook --group crew --version v1 --kind Captain --programmatic-validation --validation-path /hooks//v?x=1",
            "invalid value '/hooks//v?x=1' for '--validation-path <PATH>': \"/hooks//v?x=1\" is not a webhook path",
            2,
        ),
        row(
            WithCaptain,
            "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation --defaulting-path /hook --validation-path /hook",
            "the defaulting and validating webhooks cannot share the path /hook; pass a different --defaulting-path or --validation-path",
            1,
        ),
        row(
            WithCaptain,
            "create webhook --group crew --version v1 --kind Captain --defaulting --defaulting-path /convert",
            "/convert is the conversion webhook's path; pass another --defaulting-path or --validation-path",
            1,
        ),
        row(
            Commands(TWO_VERSIONS),
            "create webhook --group crew --version v1 --kind Captain --conversion --spoke v2;rm",
            "invalid value 'v2;rm' for '--spoke <VERSION>': \"v2;rm\" is not a version name",
            2,
        ),
        row(
            Commands(TWO_VERSIONS),
            "create webhook --group crew --version v1 --kind Captain --conversion --spoke v1",
            "version v1 is the hub, not a spoke; pass --spoke with the other versions of Captain",
            1,
        ),
        row(
            Commands(CONVERTED),
            "create webhook --group crew --version v1 --kind Captain --conversion --spoke v2",
            "conversion webhook already exists for crew/v1 Captain; drop --conversion or pass --force",
            1,
        ),
        row(
            Commands(CONVERTED),
            "create webhook --group crew --version v2 --kind Captain --conversion --spoke v1",
            "kind Captain already has a conversion webhook whose hub is v1",
            1,
        ),
        // create api: names
        row(
            Init,
            "create api --group crew --version v1 --kind captain",
            "must start with an uppercase character",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Cap_tain",
            "invalid kind \"Cap_tain\"",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Option",
            "shadow a rust prelude",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Manager",
            "shadow a rust prelude or generated name",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Type",
            "module name `type` is a rust keyword",
            1,
        ),
        row(
            Init,
            "create api --group crew --version V1 --kind Captain",
            "version \"V1\" is invalid",
            1,
        ),
        row(
            Init,
            "create api --group crew --version 1beta1 --kind Captain",
            "must start with a letter",
            1,
        ),
        row(
            Init,
            "create api --group Crew --version v1 --kind Captain",
            "must be a DNS-1123 subdomain",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Captain --plural Captains",
            "plural \"Captains\" is invalid",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Captain --resource=false --controller=false",
            "nothing to scaffold",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Captain --resource=false",
            "--resource=false needs an existing type",
            1,
        ),
        row(
            Init,
            "create api --group apps --version v1 --kind Deploymnet --resource=false",
            "did you mean --kind Deployment",
            1,
        ),
        row(
            Init,
            "create api --group apps --version v7 --kind Deployment --resource=false",
            "has no version \"v7\"",
            1,
        ),
        row(
            Init,
            "create api --version v1 --kind Captain",
            "--group <GROUP>",
            2,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Captain --namespaced=maybe",
            "invalid value 'maybe'",
            2,
        ),
        // create api: PROJECT
        row(
            InitThen(&[Edit::Replace(
                "PROJECT",
                "- operator-gen.io/v1",
                "- go.kubebuilder.io/v4",
            )]),
            CAPTAIN,
            "PROJECT has layout [go.kubebuilder.io/v4], which operator-gen does not scaffold",
            1,
        ),
        row(
            InitThen(&[Edit::Replace(
                "PROJECT",
                "- operator-gen.io/v1",
                "- operator-gen.io/v2",
            )]),
            CAPTAIN,
            "PROJECT has layout operator-gen.io/v2, newer than this operator-gen understands (operator-gen.io/v1); install a newer operator-gen",
            1,
        ),
        row(
            InitThen(&[Edit::Replace(
                "PROJECT",
                "projectName: demo",
                "projectName: Bad_Name",
            )]),
            CAPTAIN,
            "PROJECT: project name \"Bad_Name\" is invalid: it must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending alphanumeric); fix projectName in PROJECT",
            1,
        ),
        row(
            InitThen(&[Edit::Replace(
                "PROJECT",
                "domain: my.domain",
                "domain: My_Domain",
            )]),
            CAPTAIN,
            "PROJECT: domain \"My_Domain\" is invalid",
            1,
        ),
        // create api: kinds that clash with another kind's names
        row(
            WithCaptain,
            "create api --group crew --version v1 --kind CaptainSpec",
            "kind \"CaptainSpec\" clashes with kind Captain of crew/v1: both would define `CaptainSpec` in the same module; pick another kind or another version",
            1,
        ),
        row(
            WithCaptain,
            "create api --group crew --version v1 --kind CaptainList",
            "kind \"CaptainList\" clashes with kind Captain of crew/v1: both would define `CaptainList`",
            1,
        ),
        row(
            WithCaptain,
            "create api --group crew --version v1 --kind CaptainStatus",
            "both would define `CaptainStatus`",
            1,
        ),
        row(
            CaptainThen(&[]),
            "create api --group crew --version v1 --kind CaptainNamespace",
            "both would define `CaptainNamespaceLister`",
            1,
        ),
        // create api: scaffold markers
        row(
            InitThen(&[Edit::Replace(
                "config/crd/kustomization.yaml",
                "# +operator-gen:scaffold:crdkustomizeresource",
                "",
            )]),
            CAPTAIN,
            "config/crd/kustomization.yaml has no `# +operator-gen:scaffold:crdkustomizeresource` line; put the marker back",
            1,
        ),
        row(
            InitThen(&[Edit::Replace(
                "config/samples/kustomization.yaml",
                "# +operator-gen:scaffold:manifestskustomizesamples",
                "",
            )]),
            CAPTAIN,
            "config/samples/kustomization.yaml has no `# +operator-gen:scaffold:manifestskustomizesamples` line",
            1,
        ),
        row(
            InitThen(&[Edit::Replace(
                "src/api/mod.rs",
                "// +operator-gen:scaffold:modules",
                "",
            )]),
            CAPTAIN,
            "src/api/mod.rs has no `// +operator-gen:scaffold:modules` line",
            1,
        ),
        // a project the user cannot write
        row(
            ReadOnly,
            CAPTAIN,
            "permission denied; make the directory writable (chmod u+w) or run operator-gen as its owner",
            1,
        ),
        // manifests: sources
        row(
            CaptainThen(&[Edit::Write("src/api/v1/captain.rs", b"//! caf\xe9\n")]),
            "manifests",
            "src/api/v1/captain.rs:1:8: is not UTF-8 text: save the file as UTF-8",
            1,
        ),
        row(
            CaptainThen(&[Edit::Append(
                "src/api/v1/captain.rs",
                "\npub struct Broken {\n",
            )]),
            "manifests",
            "does not parse: cannot parse string into token stream; fix the syntax, then run again",
            1,
        ),
        row(
            CaptainThen(&[Edit::Symlink("src/api/v1/captain.rs", "captain.rs")]),
            "manifests",
            "src/api/v1/captain.rs:0:1: cannot read: it is a symbolic link loop (it leads back to itself); point it at a regular file or remove it (or remove the `mod` line that names it)",
            1,
        ),
        row(
            CaptainThen(&[Edit::Append(
                "src/main.rs",
                "\n#[path = \"main.rs\"]\nmod again;\n",
            )]),
            "manifests",
            "module `again` includes src/main.rs, a file of a module that encloses it (a #[path] or symlink cycle): point it at a file of its own",
            1,
        ),
        row(
            CaptainThen(&[Edit::Append(
                "src/api/v1/mod.rs",
                "\n#[path = \"mod.rs\"]\npub mod again;\n",
            )]),
            "manifests",
            "module `again` includes src/api/v1/mod.rs, a file of a module that encloses it",
            1,
        ),
        row(
            CaptainThen(&[Edit::Replace(
                "src/api/v1/captain.rs",
                "pub foo: Option<String>,",
                "pub foo: Option<String>,\n    pub next: Option<Box<CaptainSpec>>,",
            )]),
            "manifests",
            "type nests more than 64 levels deep: CRD schemas cannot be recursive, break the cycle with serde_json::Value",
            1,
        ),
        row(
            CaptainThen(&[Edit::Replace(
                "src/api/v1/captain.rs",
                "/// +optional",
                "/// +optional\n    /// +kubebuilder:validation:Pattern=\"^\\d+$\"",
            )]),
            "manifests",
            "invalid escape `\\d` in a double-quoted string (Go's rules, as controller-gen reads it): write `\\\\d` for a backslash, or use a backtick string",
            1,
        ),
        row(
            CaptainThen(&[Edit::BigDoc(5 << 20)]),
            "manifests",
            "MiB) as the apiserver stores it (its JSON, the fields server-side apply records and a 16 KiB margin), more than the 1.5 MiB etcd stores by default (its --max-request-bytes); shorten its doc comments or pass --max-desc-len, or, when your etcd's --max-request-bytes is larger, raise the limit with --max-crd-size BYTES",
            1,
        ),
        row(
            CommandsThen(
                &[CAPTAIN, "create api --group crew --version v1 --kind Sloop"],
                &[Edit::Replace(
                    "src/api/v1/sloop.rs",
                    "/// +kubebuilder:subresource:status",
                    "/// +kubebuilder:subresource:status\n/// +kubebuilder:resource:path=captains",
                )],
            ),
            "manifests",
            "kinds Captain (src/api/v1/captain.rs) and Sloop (src/api/v1/sloop.rs) both map to CRD captains.crew.my.domain (config/crd/bases/crew.my.domain_captains.yaml), which can hold only one kind: give one of them another plural with `+kubebuilder:resource:path=<plural>` or another kind",
            1,
        ),
        // edit --plugins helm
        row(Empty, "edit --plugins helm", "no PROJECT file in", 1),
        row(
            Init,
            "edit --plugins kustomize",
            "unknown plugin \"kustomize\"; the plugins `edit --plugins` knows are: helm, autoupdate, grafana",
            1,
        ),
        row(
            Init,
            "edit --plugins helm",
            "dist/install.yaml does not exist; run `make build-installer` first",
            1,
        ),
        row(
            InitThen(&[Edit::Write("dist/install.yaml", b"kind: [")]),
            "edit --plugins helm",
            "dist/install.yaml is not a YAML stream",
            1,
        ),
        row(
            InitThen(&[Edit::Write(
                "dist/install.yaml",
                b"apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n",
            )]),
            "edit --plugins helm",
            "dist/install.yaml has no Deployment, so there is no manager to chart",
            1,
        ),
        row(
            InitThen(&[
                Edit::Write("dist/install.yaml", INSTALL),
                Edit::Write("dist/chart/values.yaml", b"manager: [\n"),
            ]),
            "edit --plugins helm",
            "dist/chart/values.yaml is not YAML",
            1,
        ),
        row(
            InitThen(&[
                Edit::Write("dist/install.yaml", INSTALL),
                Edit::Write("dist/chart/.operator-gen.json", b"{"),
            ]),
            "edit --plugins helm",
            "dist/chart/.operator-gen.json is not operator-gen's record",
            1,
        ),
        // edit --plugins autoupdate, grafana: nothing written, the other plugins' files neither
        row(
            InitThen(&[Edit::Replace("PROJECT", "cliVersion: 0.1.0\n", "")]),
            "edit --plugins grafana,autoupdate",
            "PROJECT records no cliVersion, which alpha update (and so the autoupdate workflow) starts from; add `cliVersion: <the operator-gen version that scaffolded the project>` to PROJECT",
            1,
        ),
        row(
            InitThen(&[Edit::Write(
                "grafana/custom-metrics/config.yaml",
                b"customMetrics:\n  - metric: crew_voyages_total\n",
            )]),
            "edit --plugins autoupdate,grafana",
            "grafana/custom-metrics/config.yaml: customMetrics[0] (crew_voyages_total) has type \"\"; set `type:` to counter, gauge or histogram",
            1,
        ),
        row(
            InitThen(&[Edit::Write(
                "grafana/custom-metrics/config.yaml",
                b"customMetrics: [\n",
            )]),
            "edit --plugins grafana",
            "grafana/custom-metrics/config.yaml is not a custom-metrics configuration",
            1,
        ),
        row(
            Init,
            "edit --plugins grafana,helm",
            "dist/install.yaml does not exist; run `make build-installer` first",
            1,
        ),
        // delete api
        row(Empty, DELETE_CAPTAIN, "no PROJECT file in", 1),
        row(
            Init,
            DELETE_CAPTAIN,
            "crew/v1 Captain is not in PROJECT; PROJECT lists no resources; there is nothing to delete",
            1,
        ),
        row(
            WithCaptain,
            "delete api --group crew --version v1 --kind Captian",
            "crew/v1 Captian is not in PROJECT; did you mean --group crew --version v1 --kind Captain?",
            1,
        ),
        row(
            WithCaptain,
            "delete api --group crew --version v2 --kind Captain",
            "crew/v2 Captain is not in PROJECT; did you mean --group crew --version v1 --kind Captain?",
            1,
        ),
        row(
            WithCaptain,
            "delete api --group crew --version v1 --kind Sailor",
            "crew/v1 Sailor is not in PROJECT; pass one that PROJECT lists: crew/v1 Captain",
            1,
        ),
        row(
            CaptainThen(&[Edit::Write(
                "src/fleet.rs",
                b"//! The fleet.\n\npub fn ready(c: &[CaptainStatus]) -> usize {\n    c.len()\n}\n",
            )]),
            DELETE_CAPTAIN,
            "src/fleet.rs:3 still uses crew/v1 Captain (it names `CaptainStatus`); remove that use (or the file), then run delete api again",
            1,
        ),
        row(
            CaptainThen(&[Edit::Write(
                "tests/captain.rs",
                b"use demo::api::v1::{\n    Captain,\n};\n",
            )]),
            DELETE_CAPTAIN,
            "tests/captain.rs:1 still uses crew/v1 Captain (it names `v1::Captain`)",
            1,
        ),
        row(
            CaptainThen(&[Edit::Append(
                "src/main.rs",
                "\nfn _register_again(mgr: &mut Manager) {\n    demo::controller::captain::register(mgr);\n}\n",
            )]),
            DELETE_CAPTAIN,
            "still uses crew/v1 Captain (it names `controller::captain`)",
            1,
        ),
        row(
            CaptainThen(&[Edit::Write("src/broken.rs", b"fn f() {\n")]),
            DELETE_CAPTAIN,
            "src/broken.rs:1:8: does not parse as rust (cannot parse string into token stream), so delete api cannot tell whether it uses crew/v1 Captain; fix the file, then run again",
            1,
        ),
        row(
            CaptainThen(&[Edit::Append(
                "src/controller/captain.rs",
                "\n// tuned by hand\n",
            )]),
            DELETE_CAPTAIN,
            "src/controller/captain.rs was edited since `create api` wrote it (it differs from a fresh rendering), so deleting crew/v1 Captain would lose that work; keep a copy and pass --force to delete it",
            1,
        ),
        row(
            CaptainThen(&[Edit::Replace(
                "src/api/v1/captain.rs",
                "pub foo: Option<String>,",
                "pub foo: Option<String>,\n    pub bar: Option<String>,",
            )]),
            DELETE_CAPTAIN,
            "src/api/v1/captain.rs was edited since `create api` wrote it",
            1,
        ),
        row(
            Init,
            "delete api --group crew --version v1",
            "--kind <KIND>",
            2,
        ),
        row(
            CommandsThen(
                &[
                    CAPTAIN,
                    "create api --group crew --version v2 --kind Captain",
                ],
                &[Edit::Replace(
                    "src/api/v1/captain.rs",
                    "/// +kubebuilder:storageversion\n",
                    "",
                )],
            ),
            "create api --group crew --version v3 --kind Captain",
            "none of Captain's versions v1, v2 is marked as the stored version; add `/// +kubebuilder:storageversion` to the spec of the one to store, or pass --storage to store v3",
            1,
        ),
        // edit --multigroup
        row(
            CommandsThen(
                &[
                    CAPTAIN,
                    "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation",
                ],
                &[],
            ),
            DELETE_CAPTAIN,
            "crew/v1 Captain has defaulting and validation webhooks, which delete api does not take out; remove its webhook module, its registration in src/main.rs and the `webhooks` entry in PROJECT by hand, then run delete api again",
            1,
        ),
        row(
            CommandsThen(
                &[
                    CAPTAIN,
                    "create api --group crew --version v2 --kind Captain",
                    "create webhook --group crew --version v1 --kind Captain --conversion --spoke v2",
                ],
                &[],
            ),
            "delete api --group crew --version v2 --kind Captain",
            "crew/v2 Captain is a spoke of the conversion webhook of crew/v1 Captain, which delete api does not change; remove v2 from that webhook's spokes (its `From` impls and `spoke` in PROJECT) by hand, then run delete api again",
            1,
        ),
        row(
            CommandsThen(
                &[
                    CAPTAIN,
                    "create api --group crew --version v2 --kind Captain",
                    "create api --group crew --version v3 --kind Captain",
                ],
                &[],
            ),
            DELETE_CAPTAIN,
            "crew/v1 Captain is the stored version of its kind, and v2, v3 would be left with none; add `/// +kubebuilder:storageversion` to the spec of the version to store, then run delete api again",
            1,
        ),
        row(
            CommandsThen(
                &[
                    CAPTAIN,
                    "create webhook --group crew --version v1 --kind Captain --defaulting",
                ],
                &[],
            ),
            "edit --multigroup",
            "crew/v1 Captain has webhooks, and edit --multigroup does not move src/webhook/ yet; move the project before `create webhook`, or move the webhook modules by hand",
            1,
        ),
        row(
            CommandsThen(&["create api --group 3d --version v1 --kind Model"], &[]),
            "edit --multigroup",
            "group \"3d\" cannot name a rust module (it must start with a letter and not be a keyword), so it cannot have one in the multigroup layout; rename the group, then run the command again",
            1,
        ),
        row(
            CaptainThen(&[Edit::Symlink("src/controller/captain.rs", "gone.rs")]),
            "edit --multigroup",
            "src/controller/captain.rs is missing, so the captain controller cannot be moved to src/controller/crew/captain.rs; restore it, then run the command again",
            1,
        ),
        row(
            Init,
            "edit",
            "edit needs something to change; pass --plugins helm, autoupdate or grafana, or --multigroup",
            1,
        ),
        row(
            WithCaptain,
            "edit --multigroup --plugins helm",
            "--multigroup and --plugins change the project in separate runs; run `edit --multigroup`, then `edit --plugins ...`",
            1,
        ),
        row(
            InitThen(&[Edit::Replace(
                "PROJECT",
                "projectName:",
                "multigroup: true\nprojectName:",
            )]),
            "edit --multigroup",
            "the project is already multigroup (PROJECT has multigroup: true), so there is nothing to move; drop --multigroup",
            1,
        ),
        row(
            CaptainThen(&[Edit::Append(
                "src/lib.rs",
                "\npub use crate::api::{v1::Captain as Skipper};\n",
            )]),
            "edit --multigroup",
            "src/lib.rs imports `crate::api::{...}`, a grouped path edit --multigroup does not rewrite; write each path out (`crate::api::v1::…`), then run the command again",
            1,
        ),
        row(
            CaptainThen(&[Edit::Append(
                "src/lib.rs",
                "\nuse crate::api;\npub type Skipper = api::v1::Captain;\n",
            )]),
            "edit --multigroup",
            "src/lib.rs names `api::v1` in a form edit --multigroup does not rewrite; write it as `crate::api::v1::…` or `crate::api::crew::v1::…` by hand, then run the command again",
            1,
        ),
        row(
            CaptainThen(&[Edit::Append(
                "src/controller/captain.rs",
                "\nuse super::retries::Backoff;\n",
            )]),
            "edit --multigroup",
            "src/controller/captain.rs reaches out of its module with `super::retries`, which would name another module once it moves; write the path from `crate::` instead, then run the command again",
            1,
        ),
        row(
            CaptainThen(&[Edit::Replace(
                "src/api/mod.rs",
                "pub mod v1;",
                "pub(crate) mod v1;",
            )]),
            "edit --multigroup",
            "src/api/mod.rs has no line `pub mod v1;`, so edit --multigroup cannot move that module; put the line back, then run the command again",
            1,
        ),
        row(
            CaptainThen(&[Edit::Replace(
                "config/rbac/captain_admin_role.yaml",
                "  name: captain-admin-role",
                "  name: skipper-admin-role",
            )]),
            "edit --multigroup",
            "config/rbac/captain_admin_role.yaml has no line `  name: captain-admin-role` to rename to `  name: crew-captain-admin-role`; rename the role by hand and move the file to config/rbac/crew_captain_admin_role.yaml, then run the command again",
            1,
        ),
        row(
            CaptainThen(&[Edit::Write("src/controller/crew/captain.rs", b"// mine\n")]),
            "edit --multigroup",
            "src/controller/crew/captain.rs already exists, so the multigroup layout cannot take its place; move it out of the way, then run the command again",
            1,
        ),
        // alpha generate
        row(Empty, "alpha generate", "no PROJECT file in", 1),
        row(
            Init,
            "alpha generate --output-dir sub",
            "demo/sub is inside the input directory",
            1,
        ),
        row(
            Init,
            "alpha generate --output-dir ..",
            "is not empty; pass a new or empty directory to --output-dir",
            1,
        ),
        row(
            InitThen(&[Edit::Replace(
                "PROJECT",
                "domain: my.domain",
                "domain: My_Domain",
            )]),
            "alpha generate --output-dir ../out",
            "fix domain in PROJECT",
            1,
        ),
        // alpha update
        row(Empty, "alpha update", "no PROJECT file in", 1),
        row(
            Init,
            "alpha update",
            "is not in a git work tree; alpha update merges on git branches: run `git init` and commit the project first",
            1,
        ),
        row(
            Git(&[]),
            "alpha update",
            "this operator-gen's own version, so there is nothing to update; pass --from-version to merge from another version's scaffold",
            1,
        ),
        row(
            Git(&[Edit::Append("Makefile", "# mine\n")]),
            "alpha update --from-version 0.0.1",
            "the git work tree has uncommitted changes; commit or stash them before alpha update",
            1,
        ),
        row(
            Git(&[]),
            "alpha update --from-version 0.0.1 --from-branch release",
            "branch \"release\" does not exist; pass --from-branch with the project's branch",
            1,
        ),
        row(
            Git(&[]),
            "alpha update --from-version 0.0.1 --from-binary missing/operator-gen",
            "--from-binary missing/operator-gen is not a file; pass the path of operator-gen 0.0.1",
            1,
        ),
        row(
            Git(&[]),
            "alpha update --from-version 9.0.0",
            "operator-gen 9.0.0 is newer than this operator-gen",
            1,
        ),
        row(
            Git(&[]),
            "alpha update --from-version 0.0.1/x --from-binary missing/operator-gen",
            "\"0.0.1/x\" (--from-version, else PROJECT's cliVersion) is not a version; pass --from-version with one like 0.1.0",
            1,
        ),
        row(
            Git(&[]),
            "alpha update --from-version garbage",
            "\"garbage\" (--from-version, else PROJECT's cliVersion) is not a version; pass --from-version with one like 0.1.0",
            1,
        ),
        row(
            Empty,
            "alpha update --from-version 1.2",
            "\"1.2\" (--from-version, else PROJECT's cliVersion) is not a version",
            1,
        ),
        // manifests: flags
        row(
            WithCaptain,
            "manifests --role-name a/b",
            "invalid value 'a/b' for '--role-name <ROLE_NAME>': \"a/b\" cannot name a (Cluster)Role: it may not contain '/' or '%'; pass e.g. --role-name manager-role",
            2,
        ),
        row(
            WithCaptain,
            "manifests --role-name \"\"",
            "\"\" cannot name a (Cluster)Role: it is empty",
            2,
        ),
        row(
            WithCaptain,
            "manifests --role-name ..",
            "\"..\" cannot name a (Cluster)Role: it may not be '.' or '..'",
            2,
        ),
        row(
            WithCaptain,
            "manifests --max-crd-size 1.5MiB",
            "invalid value '1.5MiB' for '--max-crd-size <BYTES>': it must be a whole number of bytes, such as 3145728",
            2,
        ),
        row(
            WithCaptain,
            "manifests --max-crd-size 100",
            "invalid value '100' for '--max-crd-size <BYTES>': it must be more than 16384 bytes, the margin every CRD's size includes",
            2,
        ),
        row(
            CaptainThen(&[Edit::BigDoc(5 << 20)]),
            "manifests --max-crd-size 20000",
            "more than --max-crd-size 20000; shorten its doc comments",
            1,
        ),
        // other commands
        row(Empty, "completion nosh", "invalid value 'nosh'", 2),
        row(Empty, "frobnicate", "unrecognized subcommand", 2),
    ]
}

fn set_up(dir: &Path, setup: Setup) {
    let ok = |args: &str| {
        let out = cli::run(dir, &cli::split_args(args));
        assert_eq!(out.code, 0, "setup `{args}` failed: {}", out.stderr);
    };
    match setup {
        Setup::Empty => {}
        Setup::Init => ok("init"),
        Setup::WithCaptain => {
            ok("init");
            ok(CAPTAIN);
        }
        Setup::NoMarker => {
            ok("init");
            let main = dir.join("src/main.rs");
            let text = std::fs::read_to_string(&main).expect("read main.rs");
            let text = text.replace("// +operator-gen:scaffold:controllers", "");
            std::fs::write(&main, text).expect("write main.rs");
        }
        Setup::InitNamespaced => ok("init --namespaced"),
        Setup::Makefile => std::fs::write(dir.join("Makefile"), "all:\n").expect("write Makefile"),
        Setup::NoMain => {
            ok("init");
            std::fs::remove_file(dir.join("src/main.rs")).expect("remove main.rs");
        }
        Setup::InitThen(edits) => {
            ok("init");
            apply(dir, edits);
        }
        Setup::CaptainThen(edits) => {
            ok("init");
            ok(CAPTAIN);
            apply(dir, edits);
        }
        Setup::CaptainWebhook => {
            ok("init");
            ok(CAPTAIN);
            ok(CAPTAIN_DEFAULTING);
        }
        Setup::Commands(commands) => {
            for command in commands {
                ok(command);
            }
        }
        Setup::ReadOnly => {
            ok("init");
            cli::make_read_only(dir);
        }
        Setup::CommandsThen(commands, edits) => {
            ok("init");
            for c in commands {
                ok(c);
            }
            apply(dir, edits);
        }
        Setup::Git(edits) => {
            ok("init");
            cli::git_commit_all(dir);
            apply(dir, edits);
        }
    }
}

fn apply(dir: &Path, edits: &[Edit]) {
    for edit in edits {
        match *edit {
            Edit::Replace(file, from, to) => {
                let path = dir.join(file);
                let text = std::fs::read_to_string(&path).expect("read");
                assert!(text.contains(from), "{file} lacks {from:?}");
                std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
            }
            Edit::Write(file, bytes) => {
                let path = dir.join(file);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).expect("mkdir");
                }
                std::fs::write(path, bytes).expect("write");
            }
            Edit::Append(file, text) => {
                let path = dir.join(file);
                let old = std::fs::read_to_string(&path).expect("read");
                std::fs::write(&path, old + text).expect("write");
            }
            Edit::Symlink(file, target) => {
                let path = dir.join(file);
                let _ = std::fs::remove_file(&path);
                std::os::unix::fs::symlink(target, &path).expect("symlink");
            }
            Edit::BigDoc(bytes) => {
                let path = dir.join("src/api/v1/captain.rs");
                let text = std::fs::read_to_string(&path).expect("read");
                let line = format!("    /// {}\n", "x".repeat(1000));
                let doc = line.repeat(bytes / line.len() + 1);
                let at = "    pub foo: Option<String>,";
                assert!(text.contains(at), "captain.rs lacks its foo field");
                std::fs::write(&path, text.replacen(at, &format!("{doc}{at}"), 1)).expect("write");
            }
        }
    }
}

/// Run the CLI as the unprivileged user 65534 (root ignores permissions).
fn run_unprivileged(dir: &Path, args: &str) -> Option<cli::Output> {
    if !cli::setpriv_available("the read-only project row") {
        return None;
    }
    let limit = std::time::Duration::from_secs(300);
    let out = cli::run_bounded(
        dir,
        cli::UNPRIVILEGED,
        &cli::split_args(args),
        16 << 30,
        limit,
    );
    Some(out.unwrap_or_else(|| panic!("`operator-gen {args}` ran longer than {limit:?}")))
}

#[test]
fn bad_input_fails_cleanly_and_changes_nothing() {
    let rows = rows();
    // every row names its message: an empty fragment is in every stderr and would prove nothing
    let unnamed: Vec<&str> = rows
        .iter()
        .filter(|r| r.error.trim().is_empty())
        .map(|r| r.args)
        .collect();
    assert!(
        unnamed.is_empty(),
        "rows without an expected message: {unnamed:?}"
    );
    let mut failures = Vec::new();
    for row in rows {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("demo");
        std::fs::create_dir_all(&dir).expect("mkdir");
        if matches!(row.setup, Setup::Git(_))
            && !cli::require_tool("git", &["--version"], "apt-get install git")
        {
            continue;
        }
        set_up(&dir, row.setup);
        let root = matches!(row.setup, Setup::ReadOnly) && cli::running_as_root(tmp.path());
        let before = cli::tree_hash(&dir);
        let out = if root {
            match run_unprivileged(&dir, row.args) {
                Some(out) => out,
                None => continue,
            }
        } else {
            cli::run(&dir, &cli::split_args(row.args))
        };
        let after = cli::tree_hash(&dir);
        let what = format!("`operator-gen {}` ({:?})", row.args, row.setup);
        if out.code != row.code {
            failures.push(format!(
                "{what}: exit code {} instead of {}; stderr: {}",
                out.code, row.code, out.stderr
            ));
        }
        if !out.stderr.contains(row.error) {
            failures.push(format!(
                "{what}: stderr lacks {:?}: {}",
                row.error, out.stderr
            ));
        }
        if out.stderr.contains("panicked") {
            failures.push(format!("{what}: panicked: {}", out.stderr));
        }
        if before != after {
            failures.push(format!("{what}: the directory changed"));
        }
        if row.code == 1 {
            let lines: Vec<&str> = out.stderr.lines().collect();
            let error_line = lines.iter().find(|l| l.starts_with("error: "));
            match error_line {
                None => failures.push(format!("{what}: no `error: ` line in {:?}", out.stderr)),
                Some(line) => {
                    let message = &line["error: ".len()..];
                    if lines.len() != 1 {
                        failures.push(format!(
                            "{what}: more than one line on stderr: {:?}",
                            out.stderr
                        ));
                    }
                    // Lower case, except for a leading acronym such as kubebuilder's "API resource ...".
                    let mut chars = message.chars();
                    let capitalised = chars.next().is_some_and(char::is_uppercase)
                        && chars.next().is_some_and(char::is_lowercase);
                    if message.ends_with('.') || capitalised {
                        failures.push(format!(
                            "{what}: not lower case without trailing period: {message}"
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
