//! The webhooks `create webhook` scaffolds, served by the generated manager on a real
//! kube-apiserver: a project with crew/v1 Captain (a defaulting webhook on its default path and a
//! validating webhook on the custom path `--validation-path /hooks/custom_validate`) and crew/v2
//! Captain (v1 the conversion hub), where the user's code fills the scaffold's TODOs (the defaulter
//! sets `spec.foo`, the validator denies `spec.foo: forbidden` and warns otherwise, v2 spells
//! `spec.foo` with a `v2:` prefix), built with `make manifests` and `cargo build`, and its manager
//! run with `--webhook-port` and `--webhook-cert-path` (a self-signed certificate for 127.0.0.1).
//! The CRD and the webhook configurations are the ones `make manifests` wrote, each webhook's
//! Service replaced by the manager's URL on the same path (what kustomize and cert-manager do in a
//! cluster). A create is defaulted and warned about, a forbidden value is denied with the
//! validator's message and not stored, an object created in v1 reads back converted in v2 and one
//! created in v2 is stored converted to v1.
//!
//! Without the control-plane binaries or `make` the test skips outside CI and fails in CI.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, PostParams};
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_tests::cli;
use operator_gen_tests::operator::{
    ManagerProcess, ManagerSettings, build_lock, free_port, operator_gen, shell,
};
use operator_gen_tests::tools::{Ran, record_ran};
use serde_json::{Value, json};

/// What the user's defaulter sets, and the value the user's validator denies with its message.
const DEFAULTED: &str = "defaulted";
const FORBIDDEN: &str = "forbidden";
const DENIAL: &str = "spec.foo may not be forbidden";
const WARNING: &str = "checked by the scaffolded validator";

/// Replaces `from` (which must be there) with `to` in `file`: the user's code in the scaffold.
fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).expect("read scaffolded file");
    assert!(
        text.contains(from),
        "{} lacks the scaffold's text {from:?}:\n{text}",
        file.display()
    );
    std::fs::write(file, text.replacen(from, to, 1)).expect("write");
}

/// The project, scaffolded, filled in, with manifests, and its manager binary copied out.
fn project(parent: &Path) -> (PathBuf, PathBuf) {
    let dir = parent.join("hooks");
    std::fs::create_dir_all(&dir).expect("project dir");
    for args in [
        "init --domain my.domain",
        "create api --group crew --version v1 --kind Captain",
        "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation --validation-path /hooks/custom_validate",
        "create api --group crew --version v2 --kind Captain",
        "create webhook --group crew --version v1 --kind Captain --conversion --spoke v2",
    ] {
        operator_gen(&dir, args);
    }
    let hooks = dir.join("src/webhook/v1/captain.rs");
    edit(
        &hooks,
        "        // TODO(user): set the defaults of your fields on `obj`.\n",
        &format!("        obj.spec.foo.get_or_insert_with(|| {DEFAULTED:?}.to_owned());\n"),
    );
    edit(
        &hooks,
        "        // TODO(user): check `obj`; return Err(\"why\".into()) to deny its creation.\n        Ok(Warnings::new())",
        &format!(
            "        if obj.spec.foo.as_deref() == Some({FORBIDDEN:?}) {{\n            return Err({DENIAL:?}.into());\n        }}\n        Ok(vec![{WARNING:?}.to_owned()])"
        ),
    );
    let conversion = dir.join("src/api/v2/captain_conversion.rs");
    edit(
        &conversion,
        "                foo: spoke.spec.foo,",
        "                foo: spoke.spec.foo.map(|f| f.trim_start_matches(\"v2:\").to_owned()),",
    );
    edit(
        &conversion,
        "{ foo: hub.spec.foo }",
        "{ foo: hub.spec.foo.map(|f| format!(\"v2:{f}\")) }",
    );
    let tool = format!("OPERATOR_GEN={}", cli::operator_gen_bin().display());
    shell(&dir, "make", &["manifests", &tool]);
    // built and copied out under the lock: every project's manager lands on one path
    let _build = build_lock();
    let out = shell(
        &dir,
        &cli::cargo(),
        &["build", "--bin", "manager", "--message-format=json"],
    );
    let built = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["reason"] == "compiler-artifact" && v["target"]["name"] == "manager")
        .find_map(|v| v["executable"].as_str().map(PathBuf::from))
        .expect("cargo build reported no manager executable");
    let manager = parent.join("manager");
    std::fs::copy(&built, &manager).expect("copy the manager binary");
    (dir, manager)
}

/// `clientConfig` calling the manager at `url` with the certificate `ca`.
fn client_config(url: &str, ca: &str) -> Value {
    json!({
        "url": url,
        "caBundle": serde_json::to_value(ByteString(ca.as_bytes().to_vec())).expect("ca"),
    })
}

fn captains(plane: &ControlPlane, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("crew.my.domain", version, "Captain");
    Api::namespaced_with(
        plane.client(),
        "default",
        &ApiResource::from_gvk_with_plural(&gvk, "captains"),
    )
}

fn captain(version: &str, name: &str, field: Option<&str>) -> DynamicObject {
    let mut spec = json!({});
    if let Some(value) = field {
        spec["foo"] = json!(value);
    }
    serde_json::from_value(json!({
        "apiVersion": format!("crew.my.domain/{version}"),
        "kind": "Captain",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("captain")
}

fn field(obj: &DynamicObject) -> Option<&str> {
    obj.data["spec"]["foo"].as_str()
}

#[tokio::test]
async fn scaffolded_webhooks_default_validate_and_convert_on_the_apiserver() {
    require_assets!();
    if !cli::require_tool("make", &["--version"], cli::INSTALL_MAKE) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let (dir, manager) = project(tmp.path());

    let plane = ControlPlane::start().await.expect("control plane starts");
    record_ran(Ran::Apiserver);

    // the serving certificate, as cert-manager would mount it
    let certs = tmp.path().join("certs");
    std::fs::create_dir_all(&certs).expect("certs dir");
    let generated =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .expect("certificate");
    let ca = generated.cert.pem();
    std::fs::write(certs.join("tls.crt"), &ca).expect("write");
    std::fs::write(certs.join("tls.key"), generated.signing_key.serialize_pem()).expect("write");
    let port = free_port();
    let base = format!("https://127.0.0.1:{port}");

    let manager = ManagerProcess::start(&ManagerSettings {
        binary: manager,
        kubeconfig: plane.kubeconfig().to_owned(),
        pod_name: "hooks-0".to_owned(),
        pod_namespace: "default".to_owned(),
        log: plane.dir().join("manager.log"),
        args: vec![
            format!("--webhook-port={port}"),
            format!("--webhook-cert-path={}", certs.display()),
        ],
    });

    // the CRD `make manifests` wrote, converting through the manager
    let text = std::fs::read_to_string(dir.join("config/crd/bases/crew.my.domain_captains.yaml"))
        .expect("CRD file");
    let mut crd: CustomResourceDefinition = serde_saphyr::from_str(&text).expect("CRD");
    crd.spec.conversion = Some(
        serde_json::from_value(json!({
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": client_config(&format!("{base}/convert"), &ca),
                "conversionReviewVersions": ["v1"],
            },
        }))
        .expect("conversion"),
    );
    plane
        .install_crds(&[crd], Duration::from_secs(60))
        .await
        .expect("CRD installed");

    // the webhook configurations `make manifests` wrote, each webhook calling the manager's URL
    let text = std::fs::read_to_string(dir.join("config/webhook/manifests.yaml"))
        .expect("webhook manifests");
    let pp = PostParams::default();
    let mut paths = Vec::new();
    for mut doc in serde_saphyr::from_multiple::<Value>(&text).expect("webhook manifests") {
        for hook in doc["webhooks"].as_array_mut().expect("webhooks") {
            let path = hook["clientConfig"]["service"]["path"]
                .as_str()
                .expect("path")
                .to_owned();
            hook["clientConfig"] = client_config(&format!("{base}{path}"), &ca);
            paths.push(path);
        }
        match doc["kind"].as_str() {
            Some("MutatingWebhookConfiguration") => {
                let c: MutatingWebhookConfiguration = serde_json::from_value(doc).expect("typed");
                Api::<MutatingWebhookConfiguration>::all(plane.client())
                    .create(&pp, &c)
                    .await
                    .expect("mutating configuration created");
            }
            Some("ValidatingWebhookConfiguration") => {
                let c: ValidatingWebhookConfiguration = serde_json::from_value(doc).expect("typed");
                Api::<ValidatingWebhookConfiguration>::all(plane.client())
                    .create(&pp, &c)
                    .await
                    .expect("validating configuration created");
            }
            other => panic!("unexpected object {other:?} in config/webhook/manifests.yaml"),
        }
    }
    // the defaulting webhook on its default path, the validating one on `--validation-path`'s
    assert_eq!(
        paths,
        [
            "/mutate-crew-my-domain-v1-captain",
            "/hooks/custom_validate"
        ],
        "the webhook paths in config/webhook/manifests.yaml"
    );

    // the apiserver picks configurations up asynchronously: wait until a create is defaulted
    let v1 = captains(&plane, "v1");
    let v2 = captains(&plane, "v2");
    let deadline = Instant::now() + Duration::from_secs(30);
    for attempt in 0.. {
        let probe = v1
            .create(&pp, &captain("v1", &format!("probe-{attempt}"), None))
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "a create while the webhooks register: {e}\n{}",
                    manager.log()
                )
            });
        if field(&probe) == Some(DEFAULTED) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the apiserver never called the scaffolded defaulter; manager log:\n{}",
            manager.log()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // defaulted and stored; read in v2 through the conversion webhook
    v1.create(&pp, &captain("v1", "kirk", None))
        .await
        .expect("create kirk");
    assert_eq!(field(&v1.get("kirk").await.expect("get")), Some(DEFAULTED));
    let kirk_v2 = v2.get("kirk").await.expect("get kirk as v2");
    assert_eq!(
        kirk_v2.types.as_ref().map(|t| t.api_version.as_str()),
        Some("crew.my.domain/v2")
    );
    assert_eq!(
        field(&kirk_v2),
        Some("v2:defaulted"),
        "converted by the spoke's From"
    );

    // created in v2, stored converted to v1
    v2.create(&pp, &captain("v2", "spock", Some("v2:vulcan")))
        .await
        .expect("create spock in v2");
    assert_eq!(field(&v1.get("spock").await.expect("get")), Some("vulcan"));

    // the validator's warning on an admitted create
    let warned = {
        let req = http::Request::post("/apis/crew.my.domain/v1/namespaces/default/captains")
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&captain("v1", "uhura", Some("comms"))).expect("body"))
            .expect("request");
        let resp = plane
            .client()
            .send(req.map(Into::into))
            .await
            .expect("send");
        assert_eq!(resp.status().as_u16(), 201);
        resp.headers()
            .get_all("warning")
            .iter()
            .map(|v| v.to_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    assert!(
        warned.iter().any(|w| w.contains(WARNING)),
        "the validator's warning reaches the client: {warned:?}"
    );

    // denied with the validator's message, and not stored
    let err = v1
        .create(&pp, &captain("v1", "khan", Some(FORBIDDEN)))
        .await
        .expect_err("the validator denies spec.foo=forbidden");
    let message = err.to_string();
    assert!(message.contains("vcaptain-v1.kb.io"), "{message}");
    assert!(message.contains(DENIAL), "{message}");
    assert!(v1.get_opt("khan").await.expect("get").is_none());
}
