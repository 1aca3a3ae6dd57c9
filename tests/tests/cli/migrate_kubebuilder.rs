//! `alpha migrate` against kubebuilder v4.15.0 and controller-gen v0.21.0: a Go project made by
//! `kubebuilder init --domain my.domain --repo example.com/fleet`, `create api` crew/v1
//! Captain (with a controller), `create webhook` for it (defaulting and validating), `create
//! api` crew/v1 Ship (cluster-scoped, no controller) whose types file is replaced by
//! `testdata/migrate/ship_types.go` (the constructs users write: pointers with and without
//! omitempty, inline embedding, named string and integer types with markers, an Enum-marked and
//! a `+k8s:enum` type with constants, Kubernetes types, `metav1.Duration`, `resource.Quantity`,
//! `intstr.IntOrString`, `runtime.RawExtension`, kind-level CEL, scale subresource, print
//! columns, short names, `json:"-"` and a marker controller-gen ignores), crew/v2 Captain made
//! a conversion spoke of v1, plus an RBAC marker added to the Go controller and the Go
//! webhook's failure policy changed (so only carrying Go's markers, not the scaffold's,
//! matches); then `controller-gen object` and `controller-gen rbac crd webhook`.
//!
//! `alpha migrate` writes the operator-gen project; the test checks that the migrated project
//! builds (cargo, in the shared target directory), that its CRDs equal controller-gen's node by
//! node (parsed YAML; every difference is a row of one exceptions table with its reason, and a
//! row that covers no difference fails the test), that `role.yaml` and the webhook manifests are
//! equal as parsed YAML, that PROJECT carries every resource (group, version, kind, namespaced,
//! controller, webhooks), that the Go Reconcile, webhook methods and conversions are in the
//! Rust files as comments, and that MIGRATION.md and the printed report name the dropped
//! marker, the left-out field and the code to port. It prints how many nodes it compared.
//!
//! Without Go, kubebuilder or controller-gen the test skips outside CI and fails in CI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use operator_gen_tests::cli;
use operator_gen_tests::operator;
use operator_gen_tests::tools::{self, Ran, record_ran};
use serde_json::Value;

/// Differences from controller-gen's CRDs: (CRD file, path prefix in the CRD, reason).
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "*",
        "/metadata/annotations",
        "each tool stamps its own version annotation (controller-gen.kubebuilder.io/version, operator-gen.io/version)",
    ),
    (
        "crew.my.domain_ships.yaml",
        "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/galley",
        "corev1.Container as Kubernetes 1.37.2 defines it (operator-gen's table of Kubernetes types) against the k8s.io/api v0.36.0 the kubebuilder v4.15.0 project pins: 1.37 added fields (probe protocol and gRPC mode, bindMountOptions) and reworded two descriptions",
    ),
];

pub(crate) fn go_env(cmd: &mut Command) -> &mut Command {
    tools::offline_go(cmd)
        .env("GOSUMDB", "off")
        .env("CGO_ENABLED", "0")
}

pub(crate) fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Replace `from` by `to` in the file `rel` of `dir`, which must hold it.
fn edit(dir: &Path, rel: &str, from: &str, to: &str) {
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).expect("read Go file");
    assert!(text.contains(from), "{rel} lacks {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write Go file");
}

/// The extra RBAC rule written into the Go controller.
const EXTRA_RBAC: &str =
    "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch\n";

/// The kubebuilder project, its manifests written by controller-gen.
fn kubebuilder_project(parent: &Path, kubebuilder: &Path, controller_gen: &Path) -> PathBuf {
    let dir = parent.join("go/fleet");
    std::fs::create_dir_all(&dir).expect("go project dir");
    let kb = |line: &str| {
        let args: Vec<&str> = line.split(' ').collect();
        run(
            go_env(Command::new(kubebuilder).current_dir(&dir).args(&args)),
            &format!("kubebuilder {line}"),
        )
    };
    kb("init --domain my.domain --repo example.com/fleet --skip-go-version-check");
    kb("create api --group crew --version v1 --kind Captain --resource --controller --make=false");
    kb(
        "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation --make=false",
    );
    kb(
        "create api --group crew --version v1 --kind Ship --resource --controller=false --namespaced=false --make=false",
    );
    kb(
        "create api --group crew --version v2 --kind Captain --resource --controller=false --make=false",
    );
    kb(
        "create webhook --group crew --version v1 --kind Captain --conversion --spoke v2 --make=false",
    );
    let ship = cli::workspace_root().join("testdata/migrate/ship_types.go");
    std::fs::copy(&ship, dir.join("api/v1/ship_types.go")).expect("copy ship_types.go");
    edit(
        &dir,
        "internal/controller/captain_controller.go",
        "// +kubebuilder:rbac:",
        &format!("{EXTRA_RBAC}// +kubebuilder:rbac:"),
    );
    edit(
        &dir,
        "internal/webhook/v1/captain_webhook.go",
        "path=/mutate-crew-my-domain-v1-captain,mutating=true,failurePolicy=fail",
        "path=/mutate-crew-my-domain-v1-captain,mutating=true,failurePolicy=ignore",
    );
    controller_gen_manifests(&dir, controller_gen);
    dir
}

pub(crate) fn yaml_docs(path: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_saphyr::from_multiple::<Value>(&text)
        .unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
}

/// Every difference between `a` (controller-gen's) and `b` (operator-gen's) as (path, what);
/// `count` counts the nodes compared.
pub(crate) fn diffs(
    a: &Value,
    b: &Value,
    path: &str,
    out: &mut Vec<(String, String)>,
    count: &mut usize,
) {
    *count += 1;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let p = format!("{path}/{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => diffs(u, v, &p, out, count),
                    (Some(_), None) => out.push((p, "only controller-gen's".into())),
                    (None, _) => out.push((p, "only operator-gen's".into())),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                diffs(u, v, &format!("{path}/{i}"), out, count);
            }
        }
        _ if a == b => {}
        _ => out.push((
            path.to_owned(),
            format!("controller-gen: {a}\noperator-gen: {b}"),
        )),
    }
}

/// The resources of a PROJECT file as comparable values.
fn project_resources(dir: &Path) -> BTreeMap<String, Value> {
    let project = &yaml_docs(&dir.join("PROJECT"))[0];
    project["resources"]
        .as_array()
        .expect("PROJECT resources")
        .iter()
        .map(|r| {
            let key = format!("{}/{} {}", r["group"], r["version"], r["kind"]);
            let mut webhooks = r["webhooks"].clone();
            if let Some(w) = webhooks.as_object_mut() {
                w.remove("webhookVersion");
            }
            let value = serde_json::json!({
                // kubebuilder leaves out a false flag
                "namespaced": r["api"]["namespaced"].as_bool().unwrap_or(false),
                "controller": r["controller"].as_bool().unwrap_or(false),
                "plural": r["plural"],
                "webhooks": webhooks,
            });
            (key, value)
        })
        .collect()
}

/// Compare each CRD file node by node, against the exceptions; returns the failures and how
/// many nodes were compared.
fn compare_crds(go: &Path, rust: &Path, expected: &[&str]) -> (Vec<String>, usize) {
    let mut failures = Vec::new();
    let mut used = vec![false; EXCEPTIONS.len()];
    let mut count = 0;
    let bases = go.join("config/crd/bases");
    let mut files: Vec<_> = std::fs::read_dir(&bases)
        .expect("controller-gen's CRDs")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, expected, "controller-gen's CRD files");
    for file in &files {
        let ours = rust.join("config/crd/bases").join(file);
        if !ours.exists() {
            failures.push(format!("operator-gen wrote no {file}"));
            continue;
        }
        let mut found = Vec::new();
        diffs(
            &yaml_docs(&bases.join(file))[0],
            &yaml_docs(&ours)[0],
            "",
            &mut found,
            &mut count,
        );
        for (path, what) in found {
            let row = EXCEPTIONS
                .iter()
                .position(|(f, prefix, _)| (*f == "*" || f == file) && path.starts_with(prefix));
            match row {
                Some(i) => used[i] = true,
                None => failures.push(format!("{file} {path}: {what}")),
            }
        }
    }
    for (i, (file, prefix, _)) in EXCEPTIONS.iter().enumerate() {
        // a row is checked where its file was compared
        if !used[i] && (*file == "*" || files.iter().any(|f| f == file)) {
            failures.push(format!(
                "exception {file} {prefix} covers no difference now: drop it"
            ));
        }
    }
    (failures, count)
}

/// kubebuilder and controller-gen from the tools cache, with Go; `None` (after the skip rule's
/// report) without them.
pub(crate) fn go_tools() -> Option<(PathBuf, PathBuf)> {
    if !tools::go_available("kubebuilder and controller-gen run Go") {
        return None;
    }
    Some((
        tools::go_tool("kubebuilder")?,
        tools::go_tool("controller-gen")?,
    ))
}

/// `cargo build` of a migrated project in the shared target directory, under the build lock.
pub(crate) fn build(dir: &Path) -> std::process::Output {
    let _lock = operator::build_lock();
    operator::generated_output(Command::new(cli::cargo()).arg("build").current_dir(dir))
        .expect("run cargo build")
}

/// `role.yaml` and the webhook manifests, equal as parsed YAML.
fn compare_role_and_webhooks(go: &Path, rust: &Path, failures: &mut Vec<String>) {
    for rel in ["config/rbac/role.yaml", "config/webhook/manifests.yaml"] {
        let (theirs, ours) = (yaml_docs(&go.join(rel)), yaml_docs(&rust.join(rel)));
        if theirs != ours {
            failures.push(format!(
                "{rel} differs:\ncontroller-gen: {}\noperator-gen: {}",
                Value::Array(theirs),
                Value::Array(ours)
            ));
        }
    }
}

/// `alpha migrate` from `go` into `rust`, which must succeed; returns its output.
pub(crate) fn migrate(parent: &Path, go: &Path, rust: &Path) -> cli::Output {
    let out = cli::run(
        parent,
        &[
            "alpha".into(),
            "migrate".into(),
            "--input-dir".into(),
            go.display().to_string(),
            "--output-dir".into(),
            rust.display().to_string(),
        ],
    );
    assert_eq!(
        out.code, 0,
        "alpha migrate failed: {}{}",
        out.stdout, out.stderr
    );
    out
}

/// `controller-gen object` then `rbac crd webhook` in `dir`.
fn controller_gen_manifests(dir: &Path, controller_gen: &Path) {
    run(
        go_env(
            Command::new(controller_gen)
                .current_dir(dir)
                .args(["object:headerFile=hack/boilerplate.go.txt", "paths=./..."]),
        ),
        "controller-gen object",
    );
    run(
        go_env(Command::new(controller_gen).current_dir(dir).args([
            "rbac:roleName=manager-role",
            "crd",
            "webhook",
            "paths=./...",
            "output:crd:artifacts:config=config/crd/bases",
        ])),
        "controller-gen manifests",
    );
}

/// A multigroup project (`edit --multigroup`): crew/v1 Captain and fleet/v1beta1 Ship, each
/// with a controller, Ship with a defaulting webhook. Its manifests and PROJECT are compared;
/// the build is the single-group test's.
#[test]
fn migrated_multigroup_project_writes_controller_gens_manifests() {
    let Some((kubebuilder, controller_gen)) = go_tools() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let go = tmp.path().join("go/groups");
    std::fs::create_dir_all(&go).expect("go project dir");
    for line in [
        "init --domain my.domain --repo example.com/groups --skip-go-version-check",
        "edit --multigroup=true",
        "create api --group crew --version v1 --kind Captain --resource --controller --make=false",
        "create api --group fleet --version v1beta1 --kind Ship --resource --controller --make=false",
        "create webhook --group fleet --version v1beta1 --kind Ship --defaulting --make=false",
    ] {
        let args: Vec<&str> = line.split(' ').collect();
        run(
            go_env(Command::new(&kubebuilder).current_dir(&go).args(&args)),
            &format!("kubebuilder {line}"),
        );
    }
    controller_gen_manifests(&go, &controller_gen);
    let rust = tmp.path().join("rust/groups");
    migrate(tmp.path(), &go, &rust);
    let (mut failures, nodes) = compare_crds(
        &go,
        &rust,
        &["crew.my.domain_captains.yaml", "fleet.my.domain_ships.yaml"],
    );
    compare_role_and_webhooks(&go, &rust, &mut failures);
    let (theirs, ours) = (project_resources(&go), project_resources(&rust));
    assert_eq!(
        ours, theirs,
        "PROJECT's resources differ from kubebuilder's"
    );
    let controller = std::fs::read_to_string(rust.join("src/controller/fleet/ship.rs"))
        .expect("fleet's controller");
    assert!(
        controller.contains("// func (r *ShipReconciler) Reconcile("),
        "{controller}"
    );
    println!(
        "compared {nodes} CRD nodes, role.yaml and the webhook manifests of a multigroup project with controller-gen's, {} exceptions",
        EXCEPTIONS.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    record_ran(Ran::GoPeers);
}

#[test]
fn migrated_kubebuilder_project_builds_and_writes_controller_gens_manifests() {
    let Some((kubebuilder, controller_gen)) = go_tools() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let go = kubebuilder_project(tmp.path(), &kubebuilder, &controller_gen);
    let rust = tmp.path().join("rust/fleet");
    let out = migrate(tmp.path(), &go, &rust);

    let (mut failures, nodes) = compare_crds(
        &go,
        &rust,
        &["crew.my.domain_captains.yaml", "crew.my.domain_ships.yaml"],
    );
    compare_role_and_webhooks(&go, &rust, &mut failures);
    let role = std::fs::read_to_string(rust.join("config/rbac/role.yaml")).expect("role");
    assert!(
        role.contains("deployments"),
        "the Go controller's extra rule: {role}"
    );
    let hooks = std::fs::read_to_string(rust.join("config/webhook/manifests.yaml")).expect("hooks");
    assert!(
        hooks.contains("failurePolicy: Ignore"),
        "the Go webhook's marker: {hooks}"
    );
    let (theirs, ours) = (project_resources(&go), project_resources(&rust));
    assert_eq!(
        ours, theirs,
        "PROJECT's resources differ from kubebuilder's"
    );
    assert_eq!(ours["\"crew\"/\"v1\" \"Ship\""]["namespaced"], false);

    let read = |rel: &str| std::fs::read_to_string(rust.join(rel)).expect(rel);
    let controller = read("src/controller/captain.rs");
    assert!(
        controller.contains("// func (r *CaptainReconciler) Reconcile(ctx context.Context"),
        "the Go Reconcile as a comment: {controller}"
    );
    assert!(controller.contains("//! +kubebuilder:rbac:groups=apps,resources=deployments"));
    let webhook = read("src/webhook/v1/captain.rs");
    assert!(
        webhook.contains("// func (d *CaptainCustomDefaulter) Default("),
        "{webhook}"
    );
    let conversion = read("src/api/v2/captain_conversion.rs");
    assert!(
        conversion.contains("// func (src *Captain) ConvertTo("),
        "{conversion}"
    );
    let ship = read("src/api/v1/ship.rs");
    for expected in [
        "pub enum Hull {",
        "pub enum Rig {",
        "pub struct CallSign(pub String);",
        "#[serde(flatten)]\n    pub common: Common,",
        "pub captain: Option<String>,",
        "operator_gen_runtime::k8s_openapi::api::core::v1::Container",
        "pub watch: Option<MetaDuration>,",
    ] {
        assert!(
            ship.contains(expected),
            "ship.rs lacks {expected:?}:\n{ship}"
        );
    }
    let report = read("MIGRATION.md");
    for expected in [
        "api/v1/ship_types.go:146: +kubebuilder:object:generate=false",
        "ShipSpec.Log has json:\"-\": left out",
        "internal/controller/captain_controller.go",
        "the constants of Hull became the variants of enum Hull",
    ] {
        assert!(
            report.contains(expected),
            "MIGRATION.md lacks {expected:?}:\n{report}"
        );
        assert!(
            out.stdout.contains(expected),
            "the printed report lacks {expected:?}"
        );
    }

    let built = build(&rust);
    assert!(
        built.status.success(),
        "the migrated project does not build:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    println!(
        "compared {nodes} CRD nodes, role.yaml, the webhook manifests and {} PROJECT resources with kubebuilder's and controller-gen's, {} exceptions",
        ours.len(),
        EXCEPTIONS.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    record_ran(Ran::GoPeers);
}

#[test]
fn bad_go_is_a_located_error_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let go = tmp.path().join("go");
    std::fs::create_dir_all(go.join("api/v1")).expect("mkdir");
    std::fs::write(
        go.join("PROJECT"),
        "domain: my.domain\nlayout:\n- go.kubebuilder.io/v4\nprojectName: fleet\nrepo: example.com/fleet\nresources:\n- api:\n    crdVersion: v1\n    namespaced: true\n  group: crew\n  kind: Captain\n  path: example.com/fleet/api/v1\n  version: v1\nversion: \"3\"\n",
    )
    .expect("PROJECT");
    std::fs::write(
        go.join("api/v1/captain_types.go"),
        "package v1\n\ntype CaptainSpec struct {\n\tSize int32 `json:\"size\n}\n",
    )
    .expect("types");
    let args = |out: &str| -> Vec<String> {
        ["alpha", "migrate", "--input-dir", "go", "--output-dir", out]
            .map(str::to_owned)
            .to_vec()
    };
    let out = cli::run(tmp.path(), &args("rust"));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("api/v1/captain_types.go:4:13: raw string not terminated"),
        "a located error: {}",
        out.stderr
    );
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    assert!(!tmp.path().join("rust").exists());
    let names: Vec<String> = std::fs::read_dir(tmp.path())
        .expect("list")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["go"], "nothing written beside the input");

    std::fs::write(
        go.join("PROJECT"),
        "domain: my.domain\nlayout:\n- go.kubebuilder.io/v3\nrepo: example.com/fleet\nversion: \"3\"\n",
    )
    .expect("PROJECT");
    let out = cli::run(tmp.path(), &args("rust"));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("go.kubebuilder.io/v4"),
        "{}",
        out.stderr
    );
}
