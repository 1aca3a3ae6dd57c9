//! The runtime's webhook server against a real kube-apiserver, which calls it on loopback over
//! HTTPS with a test CA in `caBundle`: defaulting on create and update, validation of create,
//! update and delete (denials with the validator's message, warnings passed back to the client),
//! CRD conversion between FirstMate v1 (stored) and v2 with nothing lost and the storage version
//! in etcd, `failurePolicy` when the server is down, and a rotated certificate served without a
//! restart while a broken rotation keeps the last good one.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams};
use operator_gen_envtest::{ControlPlane, require_assets};
use operator_gen_runtime::fake::FakeApi;
use operator_gen_runtime::manager::{Manager, ManagerOptions};
use operator_gen_runtime::webhook::{
    CERT_RELOAD_CHECK, CONVERT_PATH, Converter, Defaulter, HookError, Validator, Warnings,
    WebhookServer, mutate_path, validate_path,
};
use operator_gen_tests::operator::free_port;
use operator_gen_tests::tools::{Ran, record_ran};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};

use crate::project_v4::v1::captain::{Captain, CaptainSpec};
use crate::project_v4::{v1, v2};

/// A kind of these tests only: a pilot the defaulter fills, seats that may not decrease.
mod fleet {
    use operator_gen_runtime::prelude::*;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default)]
    #[k8s(group = "crew.testproject.org", version = "v1", kind = "Shuttle")]
    pub struct ShuttleSpec {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub pilot: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub seats: Option<i32>,
    }
}

use fleet::Shuttle;

/// How v2 spells `spec.foo`: the v1 value behind this prefix.
const V2_PREFIX: &str = "v2:";
/// The converter's message for a v2 `spec.foo` without the prefix.
const NO_PREFIX: &str = "spec.foo must start with \"v2:\"";

/// Converts FirstMate: v1 `spec.foo` is `x`, v2 `spec.foo` is `v2:x`; everything else is kept.
struct FirstMateVersions;

impl Converter for FirstMateVersions {
    fn convert(&self, mut object: Value, desired: &str) -> Result<Value, HookError> {
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
            (other, _) => return Err(format!("cannot convert to {other}").into()),
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
    fn validate_create(&self, obj: &Captain) -> Result<Warnings, HookError> {
        match obj.spec.foo.as_deref() {
            Some(FORBIDDEN_FOO) => Err(DENIAL.into()),
            Some(DEFAULT_FOO) => Ok(vec![WARNING.to_owned()]),
            _ => Ok(Warnings::new()),
        }
    }
}

/// The pilot the defaulter gives a shuttle without one.
const AUTOPILOT: &str = "autopilot";
/// The label that protects a shuttle from deletion.
const KEEP: &str = "crew.testproject.org/keep";

struct ShuttleHooks;

impl Defaulter<Shuttle> for ShuttleHooks {
    fn default(&self, obj: &mut Shuttle) {
        obj.spec.pilot.get_or_insert_with(|| AUTOPILOT.to_owned());
    }
}

impl Validator<Shuttle> for ShuttleHooks {
    fn validate_create(&self, _: &Shuttle) -> Result<Warnings, HookError> {
        Ok(Warnings::new())
    }

    fn validate_update(&self, old: &Shuttle, new: &Shuttle) -> Result<Warnings, HookError> {
        let (old, new) = (old.spec.seats.unwrap_or(0), new.spec.seats.unwrap_or(0));
        if new < old {
            Err(format!(
                "spec.seats may not decrease (from {old} to {new}): create a new shuttle instead"
            )
            .into())
        } else if new > old {
            Ok(vec![format!(
                "spec.seats grew from {old} to {new}: check the life support"
            )])
        } else {
            Ok(Warnings::new())
        }
    }

    fn validate_delete(&self, obj: &Shuttle) -> Result<Warnings, HookError> {
        let name = obj.metadata.name.as_deref().unwrap_or_default();
        match obj.metadata.labels.as_ref().and_then(|l| l.get(KEEP)) {
            Some(_) => Err(format!(
                "shuttle {name} is labelled {KEEP}: remove the label to delete it"
            )
            .into()),
            None => Ok(Warnings::new()),
        }
    }
}

/// A CA and a serving certificate it signed for 127.0.0.1 and localhost, as PEM.
struct Issued {
    ca: String,
    cert: String,
    key: String,
}

/// A fresh CA named `name` and a serving certificate from it.
fn issue(name: &str) -> Issued {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
        KeyPair, KeyUsagePurpose,
    };
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::default();
    ca_params.distinguished_name.push(DnType::CommonName, name);
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = ca_params
        .self_signed(&ca_key)
        .expect("CA certificate")
        .pem();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().expect("serving key");
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .expect("serving names");
    params
        .distinguished_name
        .push(DnType::CommonName, format!("{name} webhook"));
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params
        .signed_by(&key, &issuer)
        .expect("serving certificate")
        .pem();
    Issued {
        ca,
        cert,
        key: key.serialize_pem(),
    }
}

/// Writes `cert` and `key` as `tls.crt` and `tls.key` in `dir`, as a rotated Secret appears.
fn write_pair(dir: &std::path::Path, cert: &str, key: &str) {
    std::fs::write(dir.join("tls.crt"), cert).expect("write tls.crt");
    std::fs::write(dir.join("tls.key"), key).expect("write tls.key");
}

/// `pem` as a `caBundle` value (base64).
fn ca_bundle(pem: &str) -> Value {
    serde_json::to_value(ByteString(pem.as_bytes().to_vec())).expect("caBundle")
}

/// One webhook entry of either configuration, as JSON: `operations` on `resource` of
/// crew.testproject.org/v1, failing closed.
fn webhook(name: &str, url: &str, ca: &str, resource: &str, operations: &[&str]) -> Value {
    json!({
        "name": name,
        "clientConfig": {"url": url, "caBundle": ca_bundle(ca)},
        "rules": [{
            "apiGroups": ["crew.testproject.org"],
            "apiVersions": ["v1"],
            "operations": operations,
            "resources": [resource],
        }],
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "timeoutSeconds": 10,
    })
}

/// Sends `body` (JSON, or nothing) with `method` to `path` of the apiserver; the status, body
/// and `Warning` headers.
async fn send_raw(
    client: &kube::Client,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, String, Vec<String>) {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(body.map(Value::to_string).unwrap_or_default().into_bytes())
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
    send_raw(
        client,
        "POST",
        "/apis/crew.testproject.org/v1/namespaces/default/captains",
        Some(&body),
    )
    .await
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

/// Calls `attempt` every 250 ms until it gives a value; panics naming `what` after `timeout`.
async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut attempt: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        match attempt().await {
            Ok(value) => return value,
            Err(last) => assert!(
                Instant::now() < deadline,
                "{what} within {timeout:?}; last: {last}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The leaf certificate (DER) the server on `port` presents to a client trusting the CAs in
/// `trusted` and checking the name 127.0.0.1, or why the handshake failed.
async fn presented(port: u16, trusted: &[&str]) -> Result<Vec<u8>, String> {
    let mut roots = rustls::RootCertStore::empty();
    for pem in trusted {
        roots
            .add(CertificateDer::from_pem_slice(pem.as_bytes()).expect("CA PEM"))
            .expect("trust the CA");
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    let name = ServerName::try_from("127.0.0.1").expect("server name");
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let (_, connection) = tls.get_ref();
    connection
        .peer_certificates()
        .and_then(|chain| chain.first())
        .map(|leaf| leaf.to_vec())
        .ok_or_else(|| "no certificate presented".to_owned())
}

/// The DER of a PEM certificate.
fn der(pem: &str) -> Vec<u8> {
    CertificateDer::from_pem_slice(pem.as_bytes())
        .expect("certificate PEM")
        .to_vec()
}

/// What etcd holds under `key` (the apiserver stores custom resources as JSON), read through
/// etcd's JSON gateway (`POST /v3/kv/range`, key and value in base64).
async fn etcd_get(etcd_url: &str, key: &str) -> Value {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let authority = etcd_url.strip_prefix("http://").expect("etcd URL is http");
    let body = json!({"key": ByteString(key.as_bytes().to_vec())}).to_string();
    // HTTP/1.0: the answer comes whole, neither chunked nor kept alive
    let request = format!(
        "POST /v3/kv/range HTTP/1.0\r\nHost: {authority}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(authority)
        .await
        .expect("connect to etcd");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("write to etcd");
    let mut out = Vec::new();
    stream.read_to_end(&mut out).await.expect("read from etcd");
    let out = String::from_utf8(out).expect("etcd answers UTF-8");
    let (head, body) = out.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.0 200"), "{out}");
    let range: Value = serde_json::from_str(body).expect("etcd answers JSON");
    let value = range
        .pointer("/kvs/0/value")
        .unwrap_or_else(|| panic!("etcd has no {key}: {range}"));
    let ByteString(bytes) = serde_json::from_value(value.clone()).expect("base64 value");
    serde_json::from_slice(&bytes).expect("the stored object is JSON")
}

/// A control plane and a manager serving webhooks on loopback with a certificate from a test CA
/// in `tls.crt`/`tls.key` of its `--webhook-cert-path`.
struct Served {
    plane: ControlPlane,
    certs: tempfile::TempDir,
    port: u16,
    stop: Box<dyn Fn() + Send>,
    run: Option<tokio::task::JoinHandle<operator_gen_runtime::manager::Result<()>>>,
}

impl Served {
    /// Starts a control plane with `crds`, and a manager serving `server` with `issued`'s
    /// certificate; returns once `/readyz` says the server serves.
    async fn start(
        server: WebhookServer,
        crds: &[CustomResourceDefinition],
        issued: &Issued,
    ) -> Self {
        let plane = ControlPlane::start().await.expect("control plane starts");
        record_ran(Ran::Apiserver);
        if !crds.is_empty() {
            plane
                .install_crds(crds, Duration::from_secs(60))
                .await
                .expect("CRDs installed");
        }
        // the serving certificate, as cert-manager would mount it
        let certs = tempfile::tempdir().expect("tempdir");
        write_pair(certs.path(), &issued.cert, &issued.key);
        let (port, probe_port) = (free_port(), free_port());
        let options = ManagerOptions::default()
            .metrics_bind_address("0")
            .health_probe_bind_address(format!("127.0.0.1:{probe_port}"))
            .webhook_port(port)
            .webhook_cert_path(certs.path());
        let mut mgr = Manager::with_client(options, "webhooks", plane.client()).expect("manager");
        mgr.add_webhook_server(server);
        let token = mgr.shutdown_token();
        let run = tokio::spawn(mgr.run());
        // /readyz turns 200 once the webhook server serves
        let deadline = Instant::now() + Duration::from_secs(20);
        while !readyz_ok(probe_port).await {
            assert!(Instant::now() < deadline, "/readyz never answered 200");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Served {
            plane,
            certs,
            port,
            stop: Box::new(move || token.cancel()),
            run: Some(run),
        }
    }

    fn client(&self) -> kube::Client {
        self.plane.client()
    }

    /// The URL of `path` on the webhook server.
    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// Creates a MutatingWebhookConfiguration `name` with `webhooks`.
    async fn mutating(&self, name: &str, webhooks: Vec<Value>) {
        let config: MutatingWebhookConfiguration = serde_json::from_value(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": webhooks,
        }))
        .expect("mutating configuration");
        Api::<MutatingWebhookConfiguration>::all(self.client())
            .create(&PostParams::default(), &config)
            .await
            .expect("mutating configuration created");
    }

    /// Creates a ValidatingWebhookConfiguration `name` with `webhooks`.
    async fn validating(&self, name: &str, webhooks: Vec<Value>) {
        let config: ValidatingWebhookConfiguration = serde_json::from_value(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": webhooks,
        }))
        .expect("validating configuration");
        Api::<ValidatingWebhookConfiguration>::all(self.client())
            .create(&PostParams::default(), &config)
            .await
            .expect("validating configuration created");
    }

    /// Stops the manager and checks it stopped cleanly.
    async fn shut_down(&mut self) {
        (self.stop)();
        let run = self.run.take().expect("running");
        let result = tokio::time::timeout(Duration::from_secs(10), run)
            .await
            .expect("manager stops")
            .expect("join");
        assert!(result.is_ok(), "{result:?}");
    }
}

/// Creates captains until the apiserver has picked the defaulter up (it loads configurations
/// asynchronously); failures while it does are retried.
async fn until_captains_are_defaulted(client: &kube::Client) {
    let captains: Api<Captain> = Api::namespaced(client.clone(), "default");
    let mut attempt = 0;
    eventually(
        "the apiserver calls the defaulter",
        Duration::from_secs(30),
        || {
            attempt += 1;
            let name = format!("probe-{attempt}");
            let captains = captains.clone();
            async move {
                let probe = captains
                    .create(
                        &PostParams::default(),
                        &Captain::new(&name, CaptainSpec::default()),
                    )
                    .await
                    .map_err(|e| e.to_string())?;
                match probe.spec.foo.as_deref() {
                    Some(DEFAULT_FOO) => Ok(()),
                    other => Err(format!("{name} has spec.foo {other:?}")),
                }
            }
        },
    )
    .await;
}

/// FirstMate in v1 (stored) and v2, converted by the server at `url` trusting `ca`.
fn firstmate_crd(url: &str, ca: &str) -> CustomResourceDefinition {
    let mut crd = operator_gen_runtime::crd_for_versions(vec![
        v1::firstmate::FirstMate::crd_version(),
        v2::firstmate::FirstMate::crd_version(),
    ])
    .expect("FirstMate CRD");
    crd.spec.conversion = Some(
        serde_json::from_value(json!({
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {"url": url, "caBundle": ca_bundle(ca)},
                "conversionReviewVersions": ["v1"],
            },
        }))
        .expect("conversion"),
    );
    crd
}

/// FirstMates in `version`.
fn firstmates(client: &kube::Client, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("crew.testproject.org", version, "FirstMate");
    Api::namespaced_with(client.clone(), "default", &ApiResource::from_gvk(&gvk))
}

/// A FirstMate in `version` named `name` with `spec.foo` = `field`.
fn firstmate(version: &str, name: &str, field: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": format!("crew.testproject.org/{version}"),
        "kind": "FirstMate",
        "metadata": {"name": name},
        "spec": {"foo": field},
    }))
    .expect("object")
}

fn foo(o: &DynamicObject) -> Option<String> {
    o.data["spec"]["foo"].as_str().map(str::to_owned)
}

#[tokio::test]
async fn the_apiserver_calls_the_defaulter_the_validator_and_the_converter() {
    require_assets!();
    let issued = issue("webhook test ca");
    let server = WebhookServer::builder()
        .defaulter::<Captain>(CaptainHooks)
        .validator::<Captain>(CaptainHooks)
        .converter(FirstMateVersions)
        .build()
        .expect("webhook server");
    let mut served = Served::start(server, &[Captain::crd()], &issued).await;
    let ca = &issued.ca;
    served
        .mutating(
            "captain-defaulter",
            vec![webhook(
                "mcaptain-v1.kb.io",
                &served.url(&mutate_path::<Captain>()),
                ca,
                "captains",
                &["CREATE", "UPDATE"],
            )],
        )
        .await;
    served
        .validating(
            "captain-validator",
            vec![webhook(
                "vcaptain-v1.kb.io",
                &served.url(&validate_path::<Captain>()),
                ca,
                "captains",
                &["CREATE", "UPDATE"],
            )],
        )
        .await;
    let client = served.client();
    until_captains_are_defaulted(&client).await;
    let captains: Api<Captain> = Api::namespaced(client.clone(), "default");

    // defaulted, stored, and warned about
    let (status, body, warnings) = create_raw(&client, "kirk", None).await;
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
    let (status, body, warnings) = create_raw(&client, "picard", Some("enterprise")).await;
    assert_eq!(status, 201, "{body}");
    assert!(warnings.is_empty(), "{warnings:?}");
    let stored = captains.get("picard").await.expect("get");
    assert_eq!(stored.spec.foo.as_deref(), Some("enterprise"));

    // denied with the validator's message, and not stored
    let err = captains
        .create(
            &PostParams::default(),
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

    // the fake API with the same hooks stores and denies as the apiserver did
    let fake = FakeApi::new()
        .with_crd(&Captain::crd())
        .with_defaulter::<Captain>(CaptainHooks)
        .with_validator::<Captain>(CaptainHooks);
    let fakes: Api<Captain> = Api::namespaced(fake.client(), "default");
    for (name, foo) in [("kirk", None), ("picard", Some("enterprise"))] {
        let spec = CaptainSpec {
            foo: foo.map(str::to_owned),
        };
        let created = fakes
            .create(&PostParams::default(), &Captain::new(name, spec))
            .await
            .expect("created on the fake");
        let real = captains.get(name).await.expect("get");
        assert_eq!(created.spec.foo, real.spec.foo, "{name} on the fake");
    }
    let forbidden = CaptainSpec {
        foo: Some(FORBIDDEN_FOO.into()),
    };
    let fake_err = fakes
        .create(&PostParams::default(), &Captain::new("hook", forbidden))
        .await
        .expect_err("the fake's validator denies foo=forbidden");
    let status = |e: &kube::Error| match e {
        kube::Error::Api(s) => (s.code, s.reason.clone(), s.message.clone()),
        other => panic!("not an API error: {other}"),
    };
    assert_eq!(
        status(&fake_err),
        status(&err),
        "the fake's denial is the apiserver's"
    );

    // conversion: the CRD is installed once the server serves
    served
        .plane
        .install_crds(
            &[firstmate_crd(&served.url(CONVERT_PATH), ca)],
            Duration::from_secs(60),
        )
        .await
        .expect("FirstMate CRD installed");
    let pp = PostParams::default();
    // stored in v1, read in v2 (the apiserver may still be wiring the conversion: retry)
    firstmates(&client, "v1")
        .create(&pp, &firstmate("v1", "spock", "science"))
        .await
        .expect("create v1");
    let read = eventually("reading v2 works", Duration::from_secs(30), || async {
        firstmates(&client, "v2")
            .get("spock")
            .await
            .map_err(|e| e.to_string())
    })
    .await;
    assert_eq!(
        foo(&read).as_deref(),
        Some("v2:science"),
        "converted to v2 on read"
    );
    // created in v2, stored and read in v1
    firstmates(&client, "v2")
        .create(&pp, &firstmate("v2", "uhura", "v2:comms"))
        .await
        .expect("create v2");
    let stored = firstmates(&client, "v1")
        .get("uhura")
        .await
        .expect("get v1");
    assert_eq!(
        foo(&stored).as_deref(),
        Some("comms"),
        "converted to v1 to be stored"
    );
    // a failed conversion fails the request with the converter's message
    let err = firstmates(&client, "v2")
        .create(&pp, &firstmate("v2", "sulu", "helm"))
        .await
        .expect_err("the converter refuses a foo without its prefix");
    let msg = err.to_string();
    assert!(msg.contains(NO_PREFIX), "{msg}");
    assert!(
        firstmates(&client, "v1")
            .get_opt("sulu")
            .await
            .expect("get")
            .is_none()
    );

    served.shut_down().await;
}

/// A shuttle as JSON.
fn shuttle(name: &str, spec: Value, labels: Value) -> Value {
    json!({
        "apiVersion": "crew.testproject.org/v1",
        "kind": "Shuttle",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
    })
}

const SHUTTLES: &str = "/apis/crew.testproject.org/v1/namespaces/default/shuttles";

#[tokio::test]
async fn updates_are_defaulted_and_validated_and_deletes_validated() {
    require_assets!();
    let issued = issue("webhook test ca");
    let server = WebhookServer::builder()
        .defaulter::<Shuttle>(ShuttleHooks)
        .validator::<Shuttle>(ShuttleHooks)
        .build()
        .expect("webhook server");
    let mut served = Served::start(server, &[Shuttle::crd()], &issued).await;
    served
        .mutating(
            "shuttle-defaulter",
            vec![webhook(
                "mshuttle-v1.kb.io",
                &served.url(&mutate_path::<Shuttle>()),
                &issued.ca,
                "shuttles",
                &["CREATE", "UPDATE"],
            )],
        )
        .await;
    served
        .validating(
            "shuttle-validator",
            vec![webhook(
                "vshuttle-v1.kb.io",
                &served.url(&validate_path::<Shuttle>()),
                &issued.ca,
                "shuttles",
                &["CREATE", "UPDATE", "DELETE"],
            )],
        )
        .await;
    let client = served.client();
    let shuttles: Api<Shuttle> = Api::namespaced(client.clone(), "default");

    // both configurations are live once a create is defaulted and a delete of a kept one denied
    let mut attempt = 0;
    eventually(
        "the apiserver calls both webhooks",
        Duration::from_secs(30),
        || {
            attempt += 1;
            let name = format!("probe-{attempt}");
            let client = client.clone();
            let shuttles = shuttles.clone();
            async move {
                let body = shuttle(&name, json!({}), json!({KEEP: "yes"}));
                let (status, text, _) = send_raw(&client, "POST", SHUTTLES, Some(&body)).await;
                if status != 201 {
                    return Err(format!("create {name}: {status} {text}"));
                }
                let (status, text, _) =
                    send_raw(&client, "DELETE", &format!("{SHUTTLES}/{name}"), None).await;
                let created = shuttles.get(&name).await.map_err(|e| e.to_string())?;
                if created.spec.pilot.as_deref() != Some(AUTOPILOT) || status != 403 {
                    return Err(format!(
                        "{name}: pilot {:?}, delete answered {status} {text}",
                        created.spec.pilot
                    ));
                }
                Ok(())
            }
        },
    )
    .await;

    // create with a pilot and 4 seats: the pilot is kept
    let (status, text, warnings) = send_raw(
        &client,
        "POST",
        SHUTTLES,
        Some(&shuttle(
            "galileo",
            json!({"pilot": "sulu", "seats": 4}),
            json!({"crew": "enterprise"}),
        )),
    )
    .await;
    assert_eq!(status, 201, "{text}");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        shuttles
            .get("galileo")
            .await
            .expect("get")
            .spec
            .pilot
            .as_deref(),
        Some("sulu")
    );

    // PUTs `spec` over the stored galileo; the status, body and warnings
    let put = |spec: Value| {
        let client = client.clone();
        let shuttles = shuttles.clone();
        async move {
            let current = shuttles.get("galileo").await.expect("get");
            let mut body = serde_json::to_value(&current).expect("json");
            body["apiVersion"] = json!("crew.testproject.org/v1");
            body["kind"] = json!("Shuttle");
            body["spec"] = spec;
            send_raw(&client, "PUT", &format!("{SHUTTLES}/galileo"), Some(&body)).await
        }
    };

    // an update that clears the defaulted field gets it back
    let (status, text, warnings) = put(json!({"seats": 4})).await;
    assert_eq!(status, 200, "{text}");
    assert!(warnings.is_empty(), "{warnings:?}");
    let stored = shuttles.get("galileo").await.expect("get");
    assert_eq!(
        stored.spec.pilot.as_deref(),
        Some(AUTOPILOT),
        "defaulted on update"
    );
    assert_eq!(stored.spec.seats, Some(4));

    // a value set by an update is kept
    let (status, text, _) = put(json!({"pilot": "chekov", "seats": 4})).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        shuttles
            .get("galileo")
            .await
            .expect("get")
            .spec
            .pilot
            .as_deref(),
        Some("chekov")
    );

    // more seats: admitted with the validator's warning, which names old and new
    let (status, text, warnings) = put(json!({"pilot": "chekov", "seats": 6})).await;
    assert_eq!(status, 200, "{text}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("spec.seats grew from 4 to 6: check the life support")),
        "the update's warning reaches the client: {warnings:?}"
    );
    assert_eq!(
        shuttles.get("galileo").await.expect("get").spec.seats,
        Some(6)
    );

    // fewer seats: denied with the validator's message, which names old and new
    let (status, text, _) = put(json!({"pilot": "chekov", "seats": 2})).await;
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("vshuttle-v1.kb.io"), "{text}");
    assert!(
        text.contains("spec.seats may not decrease (from 6 to 2): create a new shuttle instead"),
        "{text}"
    );
    assert_eq!(
        shuttles.get("galileo").await.expect("get").spec.seats,
        Some(6),
        "the denied update is not stored"
    );

    // deleting a shuttle labelled keep is denied with the validator's message
    shuttles
        .patch(
            "galileo",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {KEEP: "true"}}})),
        )
        .await
        .expect("label galileo");
    let (status, text, _) = send_raw(&client, "DELETE", &format!("{SHUTTLES}/galileo"), None).await;
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("vshuttle-v1.kb.io"), "{text}");
    assert!(
        text.contains(&format!(
            "shuttle galileo is labelled {KEEP}: remove the label to delete it"
        )),
        "{text}"
    );
    assert!(
        shuttles.get_opt("galileo").await.expect("get").is_some(),
        "still there"
    );

    // another shuttle is deleted
    let (status, text, _) = send_raw(
        &client,
        "POST",
        SHUTTLES,
        Some(&shuttle("columbus", json!({"seats": 2}), json!({}))),
    )
    .await;
    assert_eq!(status, 201, "{text}");
    let (status, text, _) =
        send_raw(&client, "DELETE", &format!("{SHUTTLES}/columbus"), None).await;
    assert_eq!(status, 200, "{text}");
    assert!(
        shuttles.get_opt("columbus").await.expect("get").is_none(),
        "deleted"
    );

    served.shut_down().await;
}

#[tokio::test]
async fn conversion_round_trips_and_stores_the_storage_version() {
    require_assets!();
    let issued = issue("webhook test ca");
    let server = WebhookServer::builder()
        .converter(FirstMateVersions)
        .build()
        .expect("webhook server");
    let mut served = Served::start(server, &[], &issued).await;
    served
        .plane
        .install_crds(
            &[firstmate_crd(&served.url(CONVERT_PATH), &issued.ca)],
            Duration::from_secs(60),
        )
        .await
        .expect("FirstMate CRD installed");
    let client = served.client();
    let pp = PostParams::default();

    // created in v1 with labels, annotations and a status
    let labels = json!({"crew.testproject.org/deck": "bridge", "team": "science"});
    let annotations = json!({"crew.testproject.org/note": "logical", "rank": "commander"});
    let mut spock = firstmate("v1", "spock", "science");
    spock.metadata = serde_json::from_value(json!({
        "name": "spock",
        "labels": labels,
        "annotations": annotations,
    }))
    .expect("metadata");
    let created = firstmates(&client, "v1")
        .create(&pp, &spock)
        .await
        .expect("create v1");
    let conditions = json!([{
        "type": "Available",
        "status": "True",
        "reason": "Aboard",
        "message": "at the science station",
        "lastTransitionTime": "2026-01-02T03:04:05Z",
    }]);
    firstmates(&client, "v1")
        .patch_status(
            "spock",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": conditions}})),
        )
        .await
        .expect("status set in v1");

    // read in v2 (the apiserver may still be wiring the conversion: retry): converted, the rest kept
    let in_v2 = eventually("reading v2 works", Duration::from_secs(30), || async {
        firstmates(&client, "v2")
            .get("spock")
            .await
            .map_err(|e| e.to_string())
    })
    .await;
    let as_json = |o: &DynamicObject| serde_json::to_value(o).expect("json");
    let v2_json = as_json(&in_v2);
    assert_eq!(v2_json["apiVersion"], "crew.testproject.org/v2");
    assert_eq!(v2_json["spec"], json!({"foo": "v2:science"}));
    assert_eq!(v2_json["metadata"]["labels"], labels);
    assert_eq!(v2_json["metadata"]["annotations"], annotations);
    assert_eq!(v2_json["status"]["conditions"], conditions);
    assert_eq!(in_v2.metadata.uid, created.metadata.uid);

    // written back in v2 with one more annotation, read in v1: nothing lost
    let mut back = in_v2.clone();
    back.metadata
        .annotations
        .get_or_insert_default()
        .insert("crew.testproject.org/via".into(), "v2".into());
    firstmates(&client, "v2")
        .replace("spock", &pp, &back)
        .await
        .expect("replace in v2");
    let in_v1 = as_json(
        &firstmates(&client, "v1")
            .get("spock")
            .await
            .expect("get v1"),
    );
    let mut annotated = annotations.clone();
    annotated["crew.testproject.org/via"] = json!("v2");
    assert_eq!(in_v1["apiVersion"], "crew.testproject.org/v1");
    assert_eq!(in_v1["kind"], "FirstMate");
    assert_eq!(in_v1["spec"], json!({"foo": "science"}));
    assert_eq!(in_v1["metadata"]["labels"], labels);
    assert_eq!(in_v1["metadata"]["annotations"], annotated);
    assert_eq!(in_v1["status"]["conditions"], conditions);
    assert_eq!(in_v1["metadata"]["uid"], json!(created.metadata.uid));
    assert_eq!(
        in_v1["metadata"]["creationTimestamp"],
        as_json(&created)["metadata"]["creationTimestamp"]
    );

    // etcd holds the storage version, v1, for objects written in either version
    let stored = etcd_get(
        served.plane.etcd_url(),
        "/registry/crew.testproject.org/firstmates/default/spock",
    )
    .await;
    assert_eq!(stored["apiVersion"], "crew.testproject.org/v1", "{stored}");
    assert_eq!(stored["spec"], json!({"foo": "science"}), "{stored}");
    assert_eq!(stored["metadata"]["labels"], labels, "{stored}");
    assert_eq!(stored["metadata"]["annotations"], annotated, "{stored}");
    assert_eq!(stored["status"]["conditions"], conditions, "{stored}");
    firstmates(&client, "v2")
        .create(&pp, &firstmate("v2", "uhura", "v2:comms"))
        .await
        .expect("create v2");
    let stored = etcd_get(
        served.plane.etcd_url(),
        "/registry/crew.testproject.org/firstmates/default/uhura",
    )
    .await;
    assert_eq!(stored["apiVersion"], "crew.testproject.org/v1", "{stored}");
    assert_eq!(stored["spec"], json!({"foo": "comms"}), "{stored}");

    // and the CRD records v1 as the only version ever stored
    let crd = Api::<CustomResourceDefinition>::all(client.clone())
        .get("firstmates.crew.testproject.org")
        .await
        .expect("CRD");
    assert_eq!(
        crd.status.and_then(|s| s.stored_versions),
        Some(vec!["v1".to_owned()])
    );
    served.shut_down().await;
}

#[tokio::test]
async fn a_webhook_that_is_down_honours_its_failure_policy() {
    require_assets!();
    let issued = issue("webhook test ca");
    let server = WebhookServer::builder()
        .defaulter::<Captain>(CaptainHooks)
        .build()
        .expect("webhook server");
    let mut served = Served::start(server, &[Captain::crd()], &issued).await;
    let hook = webhook(
        "mcaptain-v1.kb.io",
        &served.url(&mutate_path::<Captain>()),
        &issued.ca,
        "captains",
        &["CREATE", "UPDATE"],
    );
    served.mutating("captain-defaulter", vec![hook]).await;
    let client = served.client();
    until_captains_are_defaulted(&client).await;

    // the server stops: with failurePolicy Fail the apiserver refuses the create
    served.shut_down().await;
    let (status, text, _) = create_raw(&client, "scotty", Some("engineering")).await;
    assert_eq!(status, 500, "{text}");
    let answer: Value = serde_json::from_str(&text).expect("a Status");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("failed calling webhook \"mcaptain-v1.kb.io\""),
        "{text}"
    );
    let captains: Api<Captain> = Api::namespaced(client.clone(), "default");
    assert!(
        captains.get_opt("scotty").await.expect("get").is_none(),
        "not stored"
    );

    // with failurePolicy Ignore the create is admitted, undefaulted
    Api::<MutatingWebhookConfiguration>::all(client.clone())
        .patch(
            "captain-defaulter",
            &PatchParams::default(),
            &Patch::Json::<()>(
                serde_json::from_value(json!([
                    {"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}
                ]))
                .expect("patch"),
            ),
        )
        .await
        .expect("failurePolicy Ignore");
    let mut attempt = 0;
    let admitted = eventually(
        "a create is admitted with failurePolicy Ignore",
        Duration::from_secs(30),
        || {
            attempt += 1;
            let captains = captains.clone();
            let name = format!("scotty-{attempt}");
            async move {
                captains
                    .create(
                        &PostParams::default(),
                        &Captain::new(&name, CaptainSpec::default()),
                    )
                    .await
                    .map_err(|e| e.to_string())
            }
        },
    )
    .await;
    assert_eq!(admitted.spec.foo, None, "admitted without the defaulter");
}

#[tokio::test]
async fn a_rotated_certificate_is_served_without_a_restart() {
    require_assets!();
    let a = issue("webhook ca a");
    let b = issue("webhook ca b");
    let server = WebhookServer::builder()
        .defaulter::<Captain>(CaptainHooks)
        .build()
        .expect("webhook server");
    let mut served = Served::start(server, &[Captain::crd()], &a).await;
    served
        .mutating(
            "captain-defaulter",
            vec![webhook(
                "mcaptain-v1.kb.io",
                &served.url(&mutate_path::<Captain>()),
                &a.ca,
                "captains",
                &["CREATE", "UPDATE"],
            )],
        )
        .await;
    let client = served.client();
    until_captains_are_defaulted(&client).await;
    assert_eq!(
        presented(served.port, &[&a.ca, &b.ca]).await,
        Ok(der(&a.cert)),
        "serves certificate A"
    );

    // rotate: certificate B from CA B in the directory, CA B in the caBundle
    let rotated = Instant::now();
    write_pair(served.certs.path(), &b.cert, &b.key);
    Api::<MutatingWebhookConfiguration>::all(client.clone())
        .patch(
            "captain-defaulter",
            &PatchParams::default(),
            &Patch::Json::<()>(
                serde_json::from_value(json!([{
                    "op": "replace",
                    "path": "/webhooks/0/clientConfig/caBundle",
                    "value": ca_bundle(&b.ca),
                }]))
                .expect("patch"),
            ),
        )
        .await
        .expect("caBundle CA B");
    // the apiserver, now trusting CA B only, gets defaulted creates again once the server has
    // looked at the files (at most CERT_RELOAD_CHECK after its last look), without a restart
    until_captains_are_defaulted(&client).await;
    let took = rotated.elapsed();
    assert!(
        took < CERT_RELOAD_CHECK + Duration::from_secs(10),
        "calls worked again only after {took:?}"
    );
    assert_eq!(
        presented(served.port, &[&a.ca, &b.ca]).await,
        Ok(der(&b.cert)),
        "serves certificate B"
    );
    assert_eq!(presented(served.port, &[&b.ca]).await, Ok(der(&b.cert)));
    let refused = presented(served.port, &[&a.ca])
        .await
        .expect_err("a client trusting only CA A refuses B");
    assert!(refused.contains("UnknownIssuer"), "{refused}");

    // a broken rotation (a key that is not the certificate's) keeps the last good certificate
    let c = issue("webhook ca c");
    write_pair(served.certs.path(), &c.cert, &b.key);
    tokio::time::sleep(CERT_RELOAD_CHECK + Duration::from_secs(1)).await;
    assert_eq!(
        presented(served.port, &[&a.ca, &b.ca, &c.ca]).await,
        Ok(der(&b.cert)),
        "still serves certificate B"
    );
    until_captains_are_defaulted(&client).await;

    // and the next good rotation is served again
    write_pair(served.certs.path(), &c.cert, &c.key);
    eventually(
        "certificate C is served",
        CERT_RELOAD_CHECK + Duration::from_secs(5),
        || async {
            match presented(served.port, &[&b.ca, &c.ca]).await {
                Ok(leaf) if leaf == der(&c.cert) => Ok(()),
                other => Err(format!("{:?}", other.map(|_| "another certificate"))),
            }
        },
    )
    .await;
    served.shut_down().await;
}
