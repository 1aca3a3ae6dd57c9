//! The runtime's webhook server against a real kube-apiserver: a manager serves a defaulter and a
//! validator for the Captain kind (from `testdata/conformance/project_v4`) over HTTPS with a
//! self-signed certificate for 127.0.0.1, `/readyz` answers 200 once it serves, and with a
//! MutatingWebhookConfiguration and a ValidatingWebhookConfiguration pointing at it (the
//! certificate as caBundle), a create is defaulted in the stored object and comes back with the
//! validator's warning, and an invalid create is denied with the validator's message. The same
//! server converts FirstMate between v1 (stored) and v2 for the CRD's `Webhook` conversion: an
//! object created in one version reads back converted in the other, and a failed conversion fails
//! the request with the converter's message.

use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, PostParams};
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_runtime::manager::{Manager, ManagerOptions};
use operator_gen_runtime::webhook::{
    CONVERT_PATH, Converter, Defaulter, Validator, Warnings, WebhookServer, mutate_path,
    validate_path,
};
use operator_gen_tests::operator::free_port;
use operator_gen_tests::tools::{Ran, record_ran};
use serde_json::{Value, json};

#[path = "../../testdata/conformance/project_v4/src/lib.rs"]
#[allow(dead_code)]
mod project_v4;

use project_v4::v1::captain::{Captain, CaptainSpec};
use project_v4::{v1, v2};

/// How v2 spells `spec.foo`: the v1 value behind this prefix.
const V2_PREFIX: &str = "v2:";
/// The converter's message for a v2 `spec.foo` without the prefix.
const NO_PREFIX: &str = "spec.foo must start with \"v2:\"";

/// Converts FirstMate: v1 `spec.foo` is `x`, v2 `spec.foo` is `v2:x`.
struct FirstMateVersions;

impl Converter for FirstMateVersions {
    fn convert(&self, mut object: Value, desired: &str) -> Result<Value, String> {
        let field = object
            .pointer("/spec/foo")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let converted = match (desired, field) {
            (_, None) => None,
            ("crew.testproject.org/v2", Some(field)) => Some(format!("{V2_PREFIX}{field}")),
            ("crew.testproject.org/v1", Some(field)) => {
                Some(field.strip_prefix(V2_PREFIX).ok_or(NO_PREFIX)?.to_owned())
            }
            (other, _) => return Err(format!("cannot convert to {other}")),
        };
        if let Some(field) = converted {
            object["spec"]["foo"] = json!(field);
        }
        object["apiVersion"] = json!(desired);
        Ok(object)
    }
}

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
    field: Option<&str>,
) -> (u16, String, Vec<String>) {
    let mut body = json!({
        "apiVersion": "crew.testproject.org/v1",
        "kind": "Captain",
        "metadata": {"name": name},
        "spec": {},
    });
    if let Some(field) = field {
        body["spec"]["foo"] = json!(field);
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
async fn the_apiserver_calls_the_defaulter_the_validator_and_the_converter() {
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
    let base = format!("https://127.0.0.1:{webhook_port}");

    // FirstMate in v1 (stored) and v2, converted by the webhook server
    let mut firstmates = operator_gen_runtime::crd_for_versions(vec![
        v1::firstmate::FirstMate::crd_version(),
        v2::firstmate::FirstMate::crd_version(),
    ])
    .expect("FirstMate CRD");
    firstmates.spec.conversion = Some(
        serde_json::from_value(json!({
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {
                    "url": format!("{base}{CONVERT_PATH}"),
                    "caBundle": serde_json::to_value(ByteString(ca.as_bytes().to_vec())).expect("ca"),
                },
                "conversionReviewVersions": ["v1"],
            },
        }))
        .expect("conversion"),
    );
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
        .converter(FirstMateVersions)
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

    // conversion: the CRD is installed once the server serves
    plane
        .install_crds(&[firstmates], Duration::from_secs(60))
        .await
        .expect("FirstMate CRD installed");
    let gvk = |version: &str| GroupVersionKind::gvk("crew.testproject.org", version, "FirstMate");
    let api = |version: &str| -> Api<DynamicObject> {
        Api::namespaced_with(
            plane.client(),
            "default",
            &ApiResource::from_gvk(&gvk(version)),
        )
    };
    let firstmate = |version: &str, name: &str, field: &str| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": format!("crew.testproject.org/{version}"),
            "kind": "FirstMate",
            "metadata": {"name": name},
            "spec": {"foo": field},
        }))
        .expect("object")
    };
    let field = |o: &DynamicObject| o.data["spec"]["foo"].as_str().map(str::to_owned);
    // stored in v1, read in v2 (the apiserver may still be wiring the conversion: retry)
    api("v1")
        .create(&pp, &firstmate("v1", "spock", "science"))
        .await
        .expect("create v1");
    let deadline = Instant::now() + Duration::from_secs(30);
    let read = loop {
        match api("v2").get("spock").await {
            Ok(o) => break o,
            Err(e) => {
                assert!(Instant::now() < deadline, "reading v2 never worked: {e}");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    };
    assert_eq!(
        field(&read).as_deref(),
        Some("v2:science"),
        "converted to v2 on read"
    );
    // created in v2, stored and read in v1
    api("v2")
        .create(&pp, &firstmate("v2", "uhura", "v2:comms"))
        .await
        .expect("create v2");
    let stored = api("v1").get("uhura").await.expect("get v1");
    assert_eq!(
        field(&stored).as_deref(),
        Some("comms"),
        "converted to v1 to be stored"
    );
    // a failed conversion fails the request with the converter's message
    let err = api("v2")
        .create(&pp, &firstmate("v2", "sulu", "helm"))
        .await
        .expect_err("the converter refuses a foo without its prefix");
    let msg = err.to_string();
    assert!(msg.contains(NO_PREFIX), "{msg}");
    assert!(api("v1").get_opt("sulu").await.expect("get").is_none());

    stop.cancel();
    let result = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("manager stops")
        .expect("join");
    assert!(result.is_ok(), "{result:?}");
}
