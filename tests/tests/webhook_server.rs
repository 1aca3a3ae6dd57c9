//! The runtime's webhook server against a real kube-apiserver: a manager serves a defaulter and a
//! validator for the Captain kind (from `testdata/conformance/project_v4`) over HTTPS with a
//! self-signed certificate for 127.0.0.1, `/readyz` answers 200 once it serves, and with a
//! MutatingWebhookConfiguration and a ValidatingWebhookConfiguration pointing at it (the
//! certificate as caBundle), a create is defaulted in the stored object and comes back with the
//! validator's warning, and an invalid create is denied with the validator's message.

use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::Api;
use kube::api::PostParams;
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_runtime::manager::{Manager, ManagerOptions};
use operator_gen_runtime::webhook::{
    Defaulter, Validator, Warnings, WebhookServer, mutate_path, validate_path,
};
use operator_gen_tests::operator::free_port;
use operator_gen_tests::tools::{Ran, record_ran};
use serde_json::json;

#[path = "../../testdata/conformance/project_v4/src/lib.rs"]
#[allow(dead_code)]
mod project_v4;

use project_v4::v1::captain::{Captain, CaptainSpec};

/// The value the defaulter gives an unset `spec.foo`.
const DEFAULT_FOO: &str = "defaulted-by-webhook";
/// The value the validator refuses, and its message.
const FORBIDDEN_FOO: &str = "forbidden";
const DENIAL: &str = "spec.foo may not be \"forbidden\": pick another value";
/// The warning on a captain whose `spec.foo` was defaulted.
const WARNING: &str = "spec.foo was left to its default";

struct CaptainHooks;

impl Defaulter<Captain> for CaptainHooks {
    fn default(&self, obj: &mut Captain) {
        obj.spec.foo.get_or_insert_with(|| DEFAULT_FOO.to_owned());
    }
}

impl Validator<Captain> for CaptainHooks {
    fn validate_create(&self, obj: &Captain) -> Result<Warnings, String> {
        match obj.spec.foo.as_deref() {
            Some(FORBIDDEN_FOO) => Err(DENIAL.to_owned()),
            Some(DEFAULT_FOO) => Ok(vec![WARNING.to_owned()]),
            _ => Ok(Warnings::new()),
        }
    }
}

/// One webhook entry of either configuration, as JSON.
fn webhook(name: &str, url: &str, ca: &str) -> serde_json::Value {
    json!({
        "name": name,
        "clientConfig": {
            "url": url,
            "caBundle": serde_json::to_value(ByteString(ca.as_bytes().to_vec())).expect("ca"),
        },
        "rules": [{
            "apiGroups": ["crew.testproject.org"],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["captains"],
        }],
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "timeoutSeconds": 10,
    })
}

/// Creates a captain with a raw request; the status, body and `Warning` headers.
async fn create_raw(
    client: &kube::Client,
    name: &str,
    foo: Option<&str>,
) -> (u16, String, Vec<String>) {
    let mut body = json!({
        "apiVersion": "crew.testproject.org/v1",
        "kind": "Captain",
        "metadata": {"name": name},
        "spec": {},
    });
    if let Some(foo) = foo {
        body["spec"]["foo"] = json!(foo);
    }
    let req = http::Request::post("/apis/crew.testproject.org/v1/namespaces/default/captains")
        .header("content-type", "application/json")
        .body(body.to_string().into_bytes())
        .expect("request");
    let resp = client.send(req.map(Into::into)).await.expect("send");
    let status = resp.status().as_u16();
    let warnings = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap_or_default().to_owned())
        .collect();
    let bytes = http_body_util::BodyExt::collect(resp.into_body())
        .await
        .expect("body")
        .to_bytes();
    (
        status,
        String::from_utf8_lossy(&bytes).into_owned(),
        warnings,
    )
}

/// Whether `GET /readyz` on the probe port answers 200.
async fn readyz_ok(port: u16) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    if s.write_all(b"GET /readyz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .is_err()
    {
        return false;
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out).await;
    out.starts_with(b"HTTP/1.1 200")
}

#[tokio::test]
async fn the_apiserver_calls_the_defaulter_and_the_validator() {
    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    record_ran(Ran::Apiserver);
    plane
        .install_crds(&[Captain::crd()], Duration::from_secs(60))
        .await
        .expect("CRD installed");

    // the serving certificate, as cert-manager would mount it
    let certs = tempfile::tempdir().expect("tempdir");
    let generated =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .expect("certificate");
    let ca = generated.cert.pem();
    std::fs::write(certs.path().join("tls.crt"), &ca).expect("write");
    std::fs::write(
        certs.path().join("tls.key"),
        generated.signing_key.serialize_pem(),
    )
    .expect("write");

    let (webhook_port, probe_port) = (free_port(), free_port());
    let options = ManagerOptions::default()
        .metrics_bind_address("0")
        .health_probe_bind_address(format!("127.0.0.1:{probe_port}"))
        .webhook_port(webhook_port)
        .webhook_cert_path(certs.path());
    let mut mgr =
        Manager::with_client(options, "captain-webhooks", plane.client()).expect("manager");
    let server = WebhookServer::builder()
        .defaulter::<Captain>(CaptainHooks)
        .validator::<Captain>(CaptainHooks)
        .build()
        .expect("webhook server");
    mgr.add_webhook_server(server);
    let stop = mgr.shutdown_token();
    let run = tokio::spawn(mgr.run());

    // /readyz turns 200 once the webhook server serves
    let deadline = Instant::now() + Duration::from_secs(20);
    while !readyz_ok(probe_port).await {
        assert!(Instant::now() < deadline, "/readyz never answered 200");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let base = format!("https://127.0.0.1:{webhook_port}");
    let mutating: MutatingWebhookConfiguration = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "captain-defaulter"},
        "webhooks": [webhook("mcaptain-v1.kb.io", &format!("{base}{}", mutate_path::<Captain>()), &ca)],
    }))
    .expect("mutating configuration");
    let validating: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "captain-validator"},
        "webhooks": [webhook("vcaptain-v1.kb.io", &format!("{base}{}", validate_path::<Captain>()), &ca)],
    }))
    .expect("validating configuration");
    let pp = PostParams::default();
    Api::<MutatingWebhookConfiguration>::all(plane.client())
        .create(&pp, &mutating)
        .await
        .expect("mutating configuration created");
    Api::<ValidatingWebhookConfiguration>::all(plane.client())
        .create(&pp, &validating)
        .await
        .expect("validating configuration created");

    // the apiserver picks configurations up asynchronously: wait until a create is defaulted
    let captains: Api<Captain> = Api::namespaced(plane.client(), "default");
    let deadline = Instant::now() + Duration::from_secs(30);
    for attempt in 0.. {
        let probe = captains
            .create(
                &pp,
                &Captain::new(&format!("probe-{attempt}"), CaptainSpec::default()),
            )
            .await
            .expect("a create while the webhooks register");
        if probe.spec.foo.as_deref() == Some(DEFAULT_FOO) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the apiserver never called the defaulter"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // defaulted, stored, and warned about
    let (status, body, warnings) = create_raw(&plane.client(), "kirk", None).await;
    assert_eq!(status, 201, "{body}");
    assert!(
        warnings.iter().any(|w| w.contains(WARNING)),
        "the validator's warning is returned: {warnings:?}"
    );
    let stored = captains.get("kirk").await.expect("get");
    assert_eq!(
        stored.spec.foo.as_deref(),
        Some(DEFAULT_FOO),
        "the defaulted field is stored"
    );

    // a value set by the client is kept, without a warning
    let (status, body, warnings) = create_raw(&plane.client(), "picard", Some("enterprise")).await;
    assert_eq!(status, 201, "{body}");
    assert!(warnings.is_empty(), "{warnings:?}");
    let stored = captains.get("picard").await.expect("get");
    assert_eq!(stored.spec.foo.as_deref(), Some("enterprise"));

    // denied with the validator's message, and not stored
    let err = captains
        .create(
            &pp,
            &Captain::new(
                "hook",
                CaptainSpec {
                    foo: Some(FORBIDDEN_FOO.into()),
                },
            ),
        )
        .await
        .expect_err("the validator denies foo=forbidden");
    let msg = err.to_string();
    assert!(msg.contains("vcaptain-v1.kb.io"), "{msg}");
    assert!(msg.contains(DENIAL), "{msg}");
    assert!(captains.get_opt("hook").await.expect("get").is_none());

    stop.cancel();
    let result = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("manager stops")
        .expect("join");
    assert!(result.is_ok(), "{result:?}");
}
