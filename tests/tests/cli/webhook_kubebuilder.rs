//! `create webhook` against kubebuilder v4.15.0's: the same project (domain `my.domain`, project
//! `hooks`, crew/v1 Captain with a defaulting and a validating webhook, crew/v1 Sailor with both
//! on custom paths given by `--defaulting-path` and `--validation-path`, then crew/v2 Captain and
//! v1 made its conversion hub) made by `kubebuilder init`, `create api` and `create webhook` with
//! controller-gen's `make manifests`, and by `operator-gen init`, `create api`, `create webhook`
//! and `manifests`; `kubectl kustomize config/default` of each, and the webhook objects compared
//! whole after parsing: the webhook Service, the cert-manager Issuer and Certificates, both
//! webhook configurations (so their names, namespaces, paths and the CA injection `replacements`
//! result), the manager Deployment's webhook port, `--webhook-cert-path` argument, certificate
//! volume and mount, and the CRD's CA injection annotation, `spec.conversion` and stored version. Every difference is a row of one
//! exceptions table with its reason; a row whose objects match again fails the test. It prints how
//! many objects it compared. The `webhooks` entries of the two PROJECT files are compared too
//! (kubebuilder records custom paths as `defaultingPath` and `validationPath`).
//!
//! kubebuilder and controller-gen come from the tools cache (`hack/tools/build.sh`), run offline
//! on its module cache; without them, Go or kubectl the test skips outside CI and fails in CI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use operator_gen_tests::cli;
use operator_gen_tests::tools::{self, Ran, record_ran};
use serde_json::{Value, json};

/// Objects that differ, or exist on one side only: (kind, name, reason).
const EXCEPTIONS: &[(&str, &str, &str)] = &[(
    "Certificate",
    "hooks-metrics-certs",
    "kubebuilder's config/certmanager also issues a certificate for the metrics server, used only \
     once its commented [METRICS-WITH-CERTS] patch is enabled; operator-gen's metrics server makes \
     its own self-signed certificate or reads --metrics-cert-path, so config/certmanager has the \
     webhook server's certificate only",
)];

/// The custom paths of Sailor's defaulting and validating webhooks.
const SAILOR_MUTATE: &str = "/custom-mutate";
const SAILOR_VALIDATE: &str = "/hooks/custom_validate";

/// The `webhooks` entries of PROJECT, by `group/version kind`.
fn project_webhooks(dir: &Path) -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(dir.join("PROJECT")).expect("read PROJECT");
    let project: Value = serde_saphyr::from_str(&text).expect("PROJECT is YAML");
    project["resources"]
        .as_array()
        .expect("PROJECT resources")
        .iter()
        .map(|r| {
            (
                format!("{}/{} {}", r["group"], r["version"], r["kind"]),
                r["webhooks"].clone(),
            )
        })
        .collect()
}

fn go_env(cmd: &mut Command) -> &mut Command {
    tools::offline_go(cmd)
        .env("GOSUMDB", "off")
        .env("CGO_ENABLED", "0")
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn ok(dir: &Path, args: &str) {
    let out = cli::run(dir, &cli::split_args(args));
    assert_eq!(out.code, 0, "`operator-gen {args}` failed: {}", out.stderr);
}

fn kustomize(dir: &Path) -> Vec<Value> {
    let out = Command::new("kubectl")
        .args(["kustomize", "config/default"])
        .current_dir(dir)
        .output()
        .expect("kubectl kustomize");
    assert!(
        out.status.success(),
        "kubectl kustomize config/default in {} failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_saphyr::from_multiple::<Value>(&String::from_utf8_lossy(&out.stdout))
        .expect("kustomize output is YAML")
}

/// The webhook objects of a rendering, by (kind, name).
fn webhook_objects(docs: &[Value]) -> BTreeMap<(String, String), Value> {
    docs.iter()
        .filter(|d| {
            let kind = d["kind"].as_str().unwrap_or_default();
            let name = d["metadata"]["name"].as_str().unwrap_or_default();
            matches!(
                kind,
                "MutatingWebhookConfiguration"
                    | "ValidatingWebhookConfiguration"
                    | "Certificate"
                    | "Issuer"
            ) || (kind == "Service" && name.contains("webhook"))
        })
        .map(|d| {
            (
                (
                    d["kind"].as_str().unwrap_or_default().to_owned(),
                    d["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                ),
                d.clone(),
            )
        })
        .chain(std::iter::once((
            (
                "Deployment (webhook parts)".to_owned(),
                "hooks-controller-manager".to_owned(),
            ),
            manager_webhook_parts(docs),
        )))
        .chain(
            docs.iter()
                .filter(|d| d["kind"] == "CustomResourceDefinition")
                .map(|crd| {
                    (
                        (
                            "CustomResourceDefinition (conversion parts)".to_owned(),
                            crd["metadata"]["name"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned(),
                        ),
                        crd_conversion_parts(crd),
                    )
                }),
        )
        .collect()
}

/// What a CRD holds for its conversion webhook: the CA injection annotation, `spec.conversion`
/// and the stored version (its schemas are compared by the conformance tests).
fn crd_conversion_parts(crd: &Value) -> Value {
    let stored: Vec<&Value> = crd["spec"]["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter(|v| v["storage"] == true)
                .map(|v| &v["name"])
                .collect()
        })
        .unwrap_or_default();
    json!({
        "inject-ca-from": crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        "conversion": crd["spec"]["conversion"],
        "stored": stored,
    })
}

/// What the manager Deployment holds for the webhook server: the port, the certificate argument,
/// the volume and its mount.
fn manager_webhook_parts(docs: &[Value]) -> Value {
    let Some(deploy) = docs.iter().find(|d| d["kind"] == "Deployment") else {
        return Value::Null;
    };
    let pod = &deploy["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let pick = |list: &Value, f: &dyn Fn(&Value) -> bool| -> Vec<Value> {
        list.as_array()
            .map(|l| l.iter().filter(|v| f(v)).cloned().collect())
            .unwrap_or_default()
    };
    json!({
        "args": pick(&container["args"], &|a| a.as_str().is_some_and(|a| a.starts_with("--webhook"))),
        "ports": pick(&container["ports"], &|p| p["name"] == "webhook-server"),
        "volumeMounts": pick(&container["volumeMounts"], &|m| m["name"] == "webhook-certs"),
        "volumes": pick(&pod["volumes"], &|v| v["name"] == "webhook-certs"),
    })
}

fn kubebuilder_project(parent: &Path, kubebuilder: &Path, controller_gen: &Path) -> PathBuf {
    let dir = parent.join("go/hooks");
    std::fs::create_dir_all(&dir).expect("go project dir");
    let kb = |args: &[&str], what: &str| {
        run(
            go_env(Command::new(kubebuilder).current_dir(&dir).args(args)),
            what,
        )
    };
    kb(
        &[
            "init",
            "--domain",
            "my.domain",
            "--repo",
            "example.com/hooks",
            "--skip-go-version-check",
        ],
        "kubebuilder init",
    );
    kb(
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--resource",
            "--controller",
            "--make=false",
        ],
        "kubebuilder create api",
    );
    kb(
        &[
            "create",
            "webhook",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--defaulting",
            "--programmatic-validation",
            "--make=false",
        ],
        "kubebuilder create webhook",
    );
    kb(
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Sailor",
            "--resource",
            "--controller=false",
            "--make=false",
        ],
        "kubebuilder create api (Sailor)",
    );
    kb(
        &[
            "create",
            "webhook",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Sailor",
            "--defaulting",
            "--programmatic-validation",
            "--defaulting-path",
            SAILOR_MUTATE,
            "--validation-path",
            SAILOR_VALIDATE,
            "--make=false",
        ],
        "kubebuilder create webhook (Sailor, custom paths)",
    );
    kb(
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v2",
            "--kind",
            "Captain",
            "--resource",
            "--controller=false",
            "--make=false",
        ],
        "kubebuilder create api (v2)",
    );
    kb(
        &[
            "create",
            "webhook",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--conversion",
            "--spoke",
            "v2",
            "--make=false",
        ],
        "kubebuilder create webhook --conversion",
    );
    run(
        go_env(
            Command::new(controller_gen)
                .current_dir(&dir)
                .args(["object:headerFile=hack/boilerplate.go.txt", "paths=./..."]),
        ),
        "controller-gen object",
    );
    run(
        go_env(Command::new(controller_gen).current_dir(&dir).args([
            "rbac:roleName=manager-role",
            "crd",
            "webhook",
            "paths=./...",
            "output:crd:artifacts:config=config/crd/bases",
        ])),
        "controller-gen manifests",
    );
    dir
}

fn rust_project(parent: &Path) -> PathBuf {
    let dir = parent.join("rust/hooks");
    std::fs::create_dir_all(&dir).expect("rust project dir");
    ok(&dir, "init --domain my.domain");
    ok(&dir, "create api --group crew --version v1 --kind Captain");
    ok(
        &dir,
        "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation",
    );
    ok(
        &dir,
        "create api --group crew --version v1 --kind Sailor --controller=false",
    );
    ok(
        &dir,
        &format!(
            "create webhook --group crew --version v1 --kind Sailor --defaulting --programmatic-validation --defaulting-path {SAILOR_MUTATE} --validation-path {SAILOR_VALIDATE}"
        ),
    );
    ok(&dir, "create api --group crew --version v2 --kind Captain");
    ok(
        &dir,
        "create webhook --group crew --version v1 --kind Captain --conversion --spoke v2",
    );
    ok(&dir, "manifests");
    dir
}

#[test]
fn webhook_objects_match_kubebuilders() {
    if !tools::go_available("kubebuilder and controller-gen run Go")
        || !cli::require_tool("kubectl", &["version", "--client"], cli::INSTALL_KUBECTL)
    {
        return;
    }
    let (Some(kubebuilder), Some(controller_gen)) = (
        tools::go_tool("kubebuilder"),
        tools::go_tool("controller-gen"),
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let go_dir = kubebuilder_project(tmp.path(), &kubebuilder, &controller_gen);
    let rust_dir = rust_project(tmp.path());
    let (their_entries, our_entries) = (project_webhooks(&go_dir), project_webhooks(&rust_dir));
    assert_eq!(
        our_entries, their_entries,
        "the webhooks entries of PROJECT differ from kubebuilder's"
    );
    let sailor = &our_entries["\"crew\"/\"v1\" \"Sailor\""];
    assert_eq!(sailor["defaultingPath"], SAILOR_MUTATE, "{sailor}");
    assert_eq!(sailor["validationPath"], SAILOR_VALIDATE, "{sailor}");
    let theirs = webhook_objects(&kustomize(&go_dir));
    let ours = webhook_objects(&kustomize(&rust_dir));

    let keys: std::collections::BTreeSet<&(String, String)> =
        theirs.keys().chain(ours.keys()).collect();
    let mut failures = Vec::new();
    let mut compared = 0;
    for key in keys {
        let (kind, name) = key;
        let exception = EXCEPTIONS.iter().find(|(k, n, _)| k == kind && n == name);
        let same = theirs.get(key) == ours.get(key);
        match (same, exception) {
            (true, None) => compared += 1,
            (true, Some(_)) => failures.push(format!(
                "{kind} {name} matches kubebuilder's now: drop its exception"
            )),
            (false, Some((_, _, reason))) => {
                println!("exception: {kind} {name}: {reason}");
            }
            (false, None) => failures.push(format!(
                "{kind} {name} differs:\nkubebuilder: {}\noperator-gen: {}",
                theirs
                    .get(key)
                    .map_or("(none)".to_owned(), Value::to_string),
                ours.get(key).map_or("(none)".to_owned(), Value::to_string),
            )),
        }
    }
    for (kind, name, _) in EXCEPTIONS {
        if !theirs.contains_key(&((*kind).to_owned(), (*name).to_owned()))
            && !ours.contains_key(&((*kind).to_owned(), (*name).to_owned()))
        {
            failures.push(format!("exception {kind} {name} names no object"));
        }
    }
    for needed in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "Certificate",
        "Issuer",
        "Service",
    ] {
        assert!(
            ours.keys().any(|(k, _)| k == needed),
            "operator-gen's rendering has no {needed}"
        );
    }
    let manager = &ours[&(
        "Deployment (webhook parts)".to_owned(),
        "hooks-controller-manager".to_owned(),
    )];
    let crd = &ours[&(
        "CustomResourceDefinition (conversion parts)".to_owned(),
        "captains.crew.my.domain".to_owned(),
    )];
    assert_eq!(crd["conversion"]["strategy"], "Webhook", "{crd}");
    for part in ["args", "ports", "volumeMounts", "volumes"] {
        assert_eq!(
            manager[part].as_array().map(Vec::len),
            Some(1),
            "the manager has one webhook {part}: {manager}"
        );
    }
    for (kind, path) in [
        ("MutatingWebhookConfiguration", SAILOR_MUTATE),
        ("ValidatingWebhookConfiguration", SAILOR_VALIDATE),
    ] {
        let config = ours
            .iter()
            .find(|((k, _), _)| k == kind)
            .map(|(_, v)| v.to_string())
            .unwrap_or_default();
        assert!(
            config.contains(&format!("\"path\":\"{path}\"")),
            "{kind} lacks {path}: {config}"
        );
    }
    println!(
        "compared {compared} webhook objects and {} PROJECT webhooks entries with kubebuilder's, {} exceptions",
        our_entries.len(),
        EXCEPTIONS.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    record_ran(Ran::GoPeers);
}
