//! Against a real etcd and kube-apiserver: CRD apply, validation and pruning; kubeconfig, user and service-account clients; the apiserver stopped and started again.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use operator_gen_envtest::{ControlPlane, require_assets};
use serde_json::json;

const MANAGER: &str = "operator-gen-envtest-tests";
const CRD_NAME: &str = "widgets.test.operator-gen.dev";

fn widget_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": CRD_NAME },
        "spec": {
            "group": "test.operator-gen.dev",
            "names": { "kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList" },
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": { "openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "properties": {
                                "replicas": { "type": "integer", "format": "int32", "minimum": 1 },
                                "image": { "type": "string" }
                            },
                            "required": ["replicas"]
                        }
                    }
                }}
            }]
        }
    }))
    .expect("the CRD literal is a CustomResourceDefinition")
}

fn widget(name: &str, spec: serde_json::Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "test.operator-gen.dev/v1",
        "kind": "Widget",
        "metadata": { "name": name },
        "spec": spec,
    }))
    .expect("the widget literal is an object")
}

async fn apply_namespace(client: &kube::Client, name: &str) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace: Namespace = serde_json::from_value(
        json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } }),
    )
    .expect("namespace literal");
    namespaces
        .patch(
            name,
            &PatchParams::apply(MANAGER),
            &Patch::Apply(&namespace),
        )
        .await
        .expect("apply namespace");
}

#[tokio::test]
async fn crd_is_established_then_validates_and_prunes_custom_objects() {
    require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    let client = plane.client();

    plane
        .install_crds(&[widget_crd()], Duration::from_secs(30))
        .await
        .expect("CRD applied server-side, established and discovered");
    let crd = Api::<CustomResourceDefinition>::all(client.clone())
        .get(CRD_NAME)
        .await
        .expect("get CRD");
    let fields = crd.metadata.managed_fields.unwrap_or_default();
    assert!(
        fields.iter().any(
            |f| f.manager.as_deref() == Some(operator_gen_envtest::FIELD_MANAGER)
                && f.operation.as_deref() == Some("Apply")
        ),
        "the CRD was not server-side applied: {fields:?}"
    );

    // a second CRD claiming the same kind in the group is refused, and install_crds says why
    let mut clash = widget_crd();
    clash.metadata.name = Some("gadgets.test.operator-gen.dev".to_owned());
    clash.spec.names.plural = "gadgets".to_owned();
    clash.spec.names.singular = Some("gadget".to_owned());
    let error = plane
        .install_crds(&[clash], Duration::from_secs(30))
        .await
        .expect_err("the kind is taken");
    let message = error.to_string();
    assert!(
        message
            .starts_with("CRD gadgets.test.operator-gen.dev is not usable: names not accepted: "),
        "{message}"
    );

    apply_namespace(&client, "widgets").await;
    let gvk = GroupVersionKind::gvk("test.operator-gen.dev", "v1", "Widget");
    let widgets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "widgets",
        &ApiResource::from_gvk_with_plural(&gvk, "widgets"),
    );

    // the apiserver rejects a value below the schema's minimum, naming the field and the bound
    let error = widgets
        .create(
            &PostParams::default(),
            &widget("too-few", json!({ "replicas": 0 })),
        )
        .await
        .expect_err("replicas below the minimum is rejected");
    let kube::Error::Api(status) = error else {
        panic!("expected an API error, got {error}")
    };
    assert_eq!(status.code, 422, "{status:?}");
    assert!(
        status.message.contains("spec.replicas"),
        "{}",
        status.message
    );
    assert!(
        status
            .message
            .contains("should be greater than or equal to 1"),
        "{}",
        status.message
    );

    // a missing required field is rejected too
    let error = widgets
        .create(
            &PostParams::default(),
            &widget("no-replicas", json!({ "image": "nginx" })),
        )
        .await
        .expect_err("missing replicas is rejected");
    let kube::Error::Api(status) = error else {
        panic!("expected an API error, got {error}")
    };
    assert!(
        status.message.contains("spec.replicas: Required value"),
        "{}",
        status.message
    );

    // unknown fields are pruned, known ones kept
    let created = widgets
        .create(
            &PostParams::default(),
            &widget(
                "ok",
                json!({ "replicas": 2, "image": "nginx", "colour": "blue" }),
            ),
        )
        .await
        .expect("a valid widget is accepted");
    let spec = &created.data["spec"];
    assert_eq!(spec["replicas"], json!(2));
    assert_eq!(spec["image"], json!("nginx"));
    assert!(
        spec.get("colour").is_none(),
        "unknown field not pruned: {spec}"
    );
    let stored = widgets.get("ok").await.expect("get widget");
    assert!(
        stored.data["spec"].get("colour").is_none(),
        "unknown field stored: {}",
        stored.data
    );
}

#[tokio::test]
async fn kubeconfig_user_and_service_account_clients_authenticate() {
    let assets = require_assets!();
    let plane = ControlPlane::start().await.expect("control plane starts");
    assert!(
        plane.server_url().starts_with("https://127.0.0.1:"),
        "{}",
        plane.server_url()
    );

    // the kubeconfig works for kubectl too
    let kubectl = assets.join("kubectl");
    if kubectl.exists() {
        let output = std::process::Command::new(&kubectl)
            .arg("--kubeconfig")
            .arg(plane.kubeconfig())
            .args(["get", "--raw", "/readyz"])
            .output()
            .expect("run kubectl");
        assert!(
            output.status.success(),
            "kubectl failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "ok");
    }

    let client = plane.client();
    apply_namespace(&client, "team").await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.list(&Default::default())
        .await
        .expect("the admin may list CRDs");

    // an impersonated user and a service account are subject to RBAC: forbidden by default
    let alice = plane
        .client_for_user("alice", &["devs"])
        .expect("client for alice");
    let error = Api::<CustomResourceDefinition>::all(alice)
        .list(&Default::default())
        .await
        .expect_err("alice has no RBAC grants");
    let kube::Error::Api(status) = error else {
        panic!("expected an API error, got {error}")
    };
    assert_eq!(status.code, 403, "{status:?}");
    assert!(
        status.message.contains("User \"alice\""),
        "{}",
        status.message
    );

    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "team");
    let account: ServiceAccount = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": { "name": "operator", "namespace": "team" }
    }))
    .expect("service account literal");
    accounts
        .create(&PostParams::default(), &account)
        .await
        .expect("create service account");
    let operator = plane
        .client_for_service_account("team", "operator")
        .await
        .expect("client for the service account");
    let error = Api::<ServiceAccount>::namespaced(operator, "team")
        .list(&Default::default())
        .await
        .expect_err("the service account has no RBAC grants");
    let kube::Error::Api(status) = error else {
        panic!("expected an API error, got {error}")
    };
    assert_eq!(status.code, 403, "{status:?}");
    assert!(
        status
            .message
            .contains("system:serviceaccount:team:operator"),
        "{}",
        status.message
    );

    let missing = plane
        .client_for_service_account("team", "nobody")
        .await
        .err()
        .expect("no such account");
    assert!(
        missing
            .to_string()
            .starts_with("cannot request a token for service account team/nobody"),
        "{missing}"
    );
}

#[tokio::test]
async fn a_panicking_test_still_tears_the_control_plane_down() {
    require_assets!();
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let plane = ControlPlane::start().await.expect("control plane starts");
        let address = plane.server_url().trim_start_matches("https://").to_owned();
        sender
            .send((plane.dir().to_path_buf(), address))
            .expect("send");
        panic!("a test failing while the control plane runs");
    });
    let error = task.await.expect_err("the task panicked");
    assert!(error.is_panic());
    let (dir, address) = receiver.await.expect("the control plane had started");
    assert!(!dir.exists(), "{} not removed", dir.display());
    assert!(
        std::net::TcpStream::connect(&address).is_err(),
        "kube-apiserver still listening on {address}"
    );
}

#[tokio::test]
async fn a_stopped_apiserver_starts_again_on_its_address_with_its_data() {
    require_assets!();
    let mut plane = ControlPlane::start().await.expect("control plane starts");
    let url = plane.server_url().to_owned();
    let address = url.trim_start_matches("https://").to_owned();
    let namespaces: Api<Namespace> = Api::all(plane.client());
    let namespace: Namespace =
        serde_json::from_value(json!({ "metadata": { "name": "kept" } })).expect("namespace");
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .expect("create a namespace");

    plane.stop_apiserver();
    assert!(
        std::net::TcpStream::connect(&address).is_err(),
        "kube-apiserver still listening on {address}"
    );
    assert!(
        namespaces.get("kept").await.is_err(),
        "a stopped apiserver answered"
    );

    let first_run = std::fs::read_to_string(plane.apiserver_log()).expect("the apiserver log");
    assert!(!first_run.is_empty(), "the first run logged nothing");
    plane
        .start_apiserver()
        .await
        .expect("the apiserver starts again");
    assert_eq!(plane.server_url(), url);
    let kept = namespaces
        .get("kept")
        .await
        .expect("the same client reads the namespace from the same etcd");
    assert_eq!(kept.metadata.name.as_deref(), Some("kept"));
    let log = std::fs::read_to_string(plane.apiserver_log()).expect("the apiserver log");
    assert!(
        log.len() > first_run.len() && log.starts_with(&first_run),
        "the second run's lines follow the first run's in {}",
        plane.apiserver_log().display()
    );
}
