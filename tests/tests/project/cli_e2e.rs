//! End to end: `init`, `create api` for two kinds of one group (one cluster-scoped), `edit
//! --plugins autoupdate,grafana`, `make manifests` with this checkout's `operator-gen`, `cargo
//! build` and `cargo test` of the generated project, then `kubectl kustomize config/default`,
//! checking kinds, names and the restricted security settings it yields.
//!
//! Generated projects share `target/generated-projects` so kube is compiled once. Without
//! `make` or `kubectl` the test reports the skip of those steps (see `tools::skip_or_fail`); in CI it fails instead.

use operator_gen_tests::operator::shell;
use std::path::Path;

use operator_gen_tests::cli;
use serde_json::Value;

fn ok(dir: &Path, args: &str) {
    let out = cli::run(dir, &cli::split_args(args));
    assert_eq!(out.code, 0, "`operator-gen {args}` failed: {}", out.stderr);
}

fn get<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.')
        .fold(v, |v, key| match key.parse::<usize>() {
            Ok(i) => &v[i],
            Err(_) => &v[key],
        })
}

/// The documents of `kubectl kustomize config/default`; `None` when kubectl is missing outside CI.
fn kustomize_default(dir: &Path) -> Option<Vec<Value>> {
    if !cli::require_tool("kubectl", &["version", "--client"], cli::INSTALL_KUBECTL) {
        return None;
    }
    let yaml = shell(dir, "kubectl", &["kustomize", "config/default"]);
    Some(serde_saphyr::from_multiple::<Value>(&yaml).expect("kustomize output is YAML"))
}

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| {
            get(d, "kind").as_str() == Some(kind) && get(d, "metadata.name").as_str() == Some(name)
        })
        .unwrap_or_else(|| panic!("kustomize output has no {kind} {name}"))
}

#[test]
fn init_create_manifests_build_test_kustomize() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("e2e");
    std::fs::create_dir_all(&dir).expect("mkdir");
    ok(&dir, "init --domain my.domain");
    ok(&dir, "create api --group crew --version v1 --kind Captain");
    ok(
        &dir,
        "create api --group crew --version v1 --kind FirstMate --namespaced=false",
    );
    ok(&dir, "edit --plugins autoupdate,grafana");
    for rel in [
        ".github/workflows/auto_update.yml",
        "grafana/controller-runtime-metrics.json",
        "grafana/custom-metrics/config.yaml",
    ] {
        assert!(dir.join(rel).is_file(), "edit --plugins wrote no {rel}");
    }
    // the workflow's script is bash that parses
    shell(&dir, "bash", &["-n", "hack/auto-update.sh"]);

    if !cli::require_tool("make", &["--version"], cli::INSTALL_MAKE) {
        return;
    }
    let operator_gen = format!("OPERATOR_GEN={}", cli::operator_gen_bin().display());
    shell(&dir, "make", &["manifests", &operator_gen]);
    for crd in [
        "crew.my.domain_captains.yaml",
        "crew.my.domain_firstmates.yaml",
    ] {
        assert!(
            dir.join("config/crd/bases").join(crd).is_file(),
            "make manifests wrote no {crd}"
        );
    }
    let role = std::fs::read_to_string(dir.join("config/rbac/role.yaml")).expect("role.yaml");
    for needle in [
        "kind: ClusterRole",
        "name: manager-role",
        "captains/finalizers",
        "firstmates/status",
        "events.k8s.io",
    ] {
        assert!(role.contains(needle), "role.yaml lacks {needle}:\n{role}");
    }

    let cargo = cli::cargo();
    shell(&dir, &cargo, &["build", "--all-targets"]);
    // Includes the generated crd_matches_make_manifests tests: derive output == make manifests,
    // and each controller's unit test on operator-gen-runtime's fake API.
    let tests = shell(&dir, &cargo, &["test"]);
    for test in [
        "captain::tests::crd_matches_make_manifests",
        "first_mate::tests::crd_matches_make_manifests",
        "controller::captain::tests::reconcile_adds_the_finalizer_reports_ready_and_cleans_up",
        "controller::first_mate::tests::reconcile_adds_the_finalizer_reports_ready_and_cleans_up",
    ] {
        assert!(
            tests.contains(&format!("{test} ... ok")),
            "{test} did not pass:\n{tests}"
        );
    }

    let Some(docs) = kustomize_default(&dir) else {
        return;
    };

    let ns = find(&docs, "Namespace", "e2e-system");
    assert_eq!(
        ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"].as_str(),
        Some("restricted")
    );
    for (kind, name) in [
        ("CustomResourceDefinition", "captains.crew.my.domain"),
        ("CustomResourceDefinition", "firstmates.crew.my.domain"),
        ("ServiceAccount", "e2e-controller-manager"),
        ("ClusterRole", "e2e-manager-role"),
        ("ClusterRoleBinding", "e2e-manager-rolebinding"),
        ("Role", "e2e-leader-election-role"),
        ("RoleBinding", "e2e-leader-election-rolebinding"),
        ("ClusterRole", "e2e-captain-editor-role"),
        ("ClusterRole", "e2e-firstmate-viewer-role"),
        ("Service", "e2e-controller-manager-metrics-service"),
    ] {
        find(&docs, kind, name);
    }
    let captains = find(&docs, "CustomResourceDefinition", "captains.crew.my.domain");
    assert_eq!(get(captains, "spec.scope").as_str(), Some("Namespaced"));
    let firstmates = find(
        &docs,
        "CustomResourceDefinition",
        "firstmates.crew.my.domain",
    );
    assert_eq!(get(firstmates, "spec.scope").as_str(), Some("Cluster"));

    let deploy = find(&docs, "Deployment", "e2e-controller-manager");
    assert_eq!(
        get(deploy, "metadata.namespace").as_str(),
        Some("e2e-system")
    );
    let pod = get(deploy, "spec.template.spec");
    assert_eq!(
        get(pod, "securityContext.runAsNonRoot").as_bool(),
        Some(true)
    );
    assert_eq!(
        get(pod, "securityContext.seccompProfile.type").as_str(),
        Some("RuntimeDefault")
    );
    assert_eq!(
        get(pod, "serviceAccountName").as_str(),
        Some("e2e-controller-manager")
    );
    let container = get(pod, "containers.0");
    assert_eq!(
        get(container, "securityContext.allowPrivilegeEscalation").as_bool(),
        Some(false)
    );
    assert_eq!(
        get(container, "securityContext.readOnlyRootFilesystem").as_bool(),
        Some(true)
    );
    assert_eq!(
        get(container, "securityContext.capabilities.drop.0").as_str(),
        Some("ALL")
    );
    assert!(get(container, "livenessProbe.httpGet").is_object());
    assert!(get(container, "readinessProbe.httpGet").is_object());
    assert!(get(container, "resources.limits.memory").is_string());
    let args: Vec<&str> = get(container, "args")
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(args.contains(&"--leader-elect"), "{args:?}");
    assert!(args.contains(&"--metrics-bind-address=:8443"), "{args:?}");
    for doc in &docs {
        let namespaced_kind = !matches!(
            get(doc, "kind").as_str(),
            Some("Namespace" | "CustomResourceDefinition" | "ClusterRole" | "ClusterRoleBinding")
        );
        if namespaced_kind {
            assert_eq!(
                get(doc, "metadata.namespace").as_str(),
                Some("e2e-system"),
                "{doc:?}"
            );
        }
    }
}

/// A namespace-scoped manager (`init --namespaced`): the controllers' RBAC markers carry
/// `namespace=`, so `make manifests` writes a Role, bound by a RoleBinding, and the manager
/// watches `WATCH_NAMESPACE`.
#[test]
fn namespaced_manager_gets_role_and_watch_namespace() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("e2e-ns");
    std::fs::create_dir_all(&dir).expect("mkdir");
    ok(&dir, "init --namespaced");
    ok(&dir, "create api --group crew --version v1 --kind Captain");

    if !cli::require_tool("make", &["--version"], cli::INSTALL_MAKE) {
        return;
    }
    let operator_gen = format!("OPERATOR_GEN={}", cli::operator_gen_bin().display());
    shell(&dir, "make", &["manifests", &operator_gen]);
    let role = std::fs::read_to_string(dir.join("config/rbac/role.yaml")).expect("role.yaml");
    assert!(role.contains("kind: Role\n"), "{role}");
    assert!(role.contains("namespace: e2e-ns-system"), "{role}");
    let cargo = cli::cargo();
    let tests = shell(&dir, &cargo, &["test"]);
    assert!(
        tests.contains("captain::tests::crd_matches_make_manifests ... ok"),
        "{tests}"
    );

    let Some(docs) = kustomize_default(&dir) else {
        return;
    };
    let role = find(&docs, "Role", "e2e-ns-manager-role");
    assert_eq!(
        get(role, "metadata.namespace").as_str(),
        Some("e2e-ns-system")
    );
    let binding = find(&docs, "RoleBinding", "e2e-ns-manager-rolebinding");
    assert_eq!(get(binding, "roleRef.kind").as_str(), Some("Role"));
    assert_eq!(
        get(binding, "roleRef.name").as_str(),
        Some("e2e-ns-manager-role")
    );
    assert!(
        !docs.iter().any(
            |d| get(d, "metadata.name").as_str() == Some("e2e-ns-manager-role")
                && get(d, "kind").as_str() == Some("ClusterRole")
        ),
        "a namespaced manager must not get a manager ClusterRole"
    );
    let deploy = find(&docs, "Deployment", "e2e-ns-controller-manager");
    let env = get(deploy, "spec.template.spec.containers.0.env")
        .as_array()
        .expect("env");
    let watch = env
        .iter()
        .find(|e| get(e, "name").as_str() == Some("WATCH_NAMESPACE"))
        .expect("WATCH_NAMESPACE env");
    assert_eq!(
        get(watch, "valueFrom.fieldRef.fieldPath").as_str(),
        Some("metadata.namespace")
    );
}

/// `create webhook` for a custom kind (defaulting, then validation added to the same module, then
/// v1 made the conversion hub of a v2) and for a built-in one (Deployment, validation): `make
/// manifests` writes both webhook configurations, `cargo fmt --check` passes, the project builds and its tests pass, and
/// `kubectl kustomize config/default` yields the webhook
/// Service, the cert-manager Issuer and Certificate and the manager's webhook port and
/// certificate volume, consistent with one another: the configurations call the Service by its
/// name and namespace on the paths the runtime serves, the Service targets the manager's
/// webhook port, the Certificate names the Service's DNS names and is the one whose CA
/// cert-manager injects (into the CRD too, whose conversion calls the Service on `/convert`),
/// and its Secret is the volume the manager reads its certificate from.
#[test]
fn webhooks_build_and_kustomize_consistently() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("hooks");
    std::fs::create_dir_all(&dir).expect("mkdir");
    ok(&dir, "init --domain my.domain");
    ok(&dir, "create api --group crew --version v1 --kind Captain");
    ok(
        &dir,
        "create webhook --group crew --version v1 --kind Captain --defaulting",
    );
    ok(
        &dir,
        "create webhook --group crew --version v1 --kind Captain --programmatic-validation",
    );
    ok(
        &dir,
        "create webhook --group apps --version v1 --kind Deployment --programmatic-validation",
    );
    ok(&dir, "create api --group crew --version v2 --kind Captain");
    ok(
        &dir,
        "create webhook --group crew --version v1 --kind Captain --conversion --spoke v2",
    );

    if !cli::require_tool("make", &["--version"], cli::INSTALL_MAKE) {
        return;
    }
    let operator_gen = format!("OPERATOR_GEN={}", cli::operator_gen_bin().display());
    shell(&dir, "make", &["manifests", &operator_gen]);
    assert!(
        dir.join("config/webhook/manifests.yaml").is_file(),
        "make manifests wrote no config/webhook/manifests.yaml"
    );
    let cargo = cli::cargo();
    // what init, create api and create webhook wrote is as rustfmt writes it, so the
    // project's own lint workflow (`cargo fmt --check`) passes from the start
    shell(&dir, &cargo, &["fmt", "--check"]);
    shell(&dir, &cargo, &["build", "--all-targets"]);
    // both versions' CRD checks pass on the CRD of two versions, v1 stored
    let tests = shell(&dir, &cargo, &["test"]);
    for test in [
        "api::v1::captain::tests::crd_matches_make_manifests",
        "api::v2::captain::tests::crd_matches_make_manifests",
    ] {
        assert!(
            tests.contains(&format!("{test} ... ok")),
            "{test} did not pass:\n{tests}"
        );
    }

    let Some(docs) = kustomize_default(&dir) else {
        return;
    };
    let ns = "hooks-system";
    let service = find(&docs, "Service", "hooks-webhook-service");
    assert_eq!(get(service, "metadata.namespace").as_str(), Some(ns));
    assert_eq!(get(service, "spec.ports.0.port").as_i64(), Some(443));
    assert_eq!(get(service, "spec.ports.0.targetPort").as_i64(), Some(9443));

    let deploy = find(&docs, "Deployment", "hooks-controller-manager");
    let labels = get(deploy, "spec.template.metadata.labels");
    for (key, value) in get(service, "spec.selector")
        .as_object()
        .expect("service selector")
    {
        assert_eq!(&labels[key], value, "the webhook Service selects {key}");
    }
    let pod = get(deploy, "spec.template.spec");
    let container = get(pod, "containers.0");
    let args: Vec<&str> = get(container, "args")
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let cert_dir = "/tmp/k8s-webhook-server/serving-certs";
    assert!(
        args.contains(&format!("--webhook-cert-path={cert_dir}").as_str()),
        "{args:?}"
    );
    let port = get(container, "ports")
        .as_array()
        .expect("ports")
        .iter()
        .find(|p| get(p, "name").as_str() == Some("webhook-server"))
        .expect("the manager has a webhook-server port");
    assert_eq!(get(port, "containerPort").as_i64(), Some(9443));
    let mount = get(container, "volumeMounts")
        .as_array()
        .expect("volumeMounts")
        .iter()
        .find(|m| get(m, "mountPath").as_str() == Some(cert_dir))
        .expect("the certificate directory is mounted");
    let volume_name = get(mount, "name").as_str().expect("mount name");
    let volume = get(pod, "volumes")
        .as_array()
        .expect("volumes")
        .iter()
        .find(|v| get(v, "name").as_str() == Some(volume_name))
        .expect("the mounted volume exists");
    let secret = get(volume, "secret.secretName").as_str().expect("secret");

    let cert = find(&docs, "Certificate", "hooks-serving-cert");
    assert_eq!(get(cert, "metadata.namespace").as_str(), Some(ns));
    assert_eq!(get(cert, "spec.secretName").as_str(), Some(secret));
    assert_eq!(
        get(cert, "spec.dnsNames"),
        &serde_json::json!([
            "hooks-webhook-service.hooks-system.svc",
            "hooks-webhook-service.hooks-system.svc.cluster.local"
        ])
    );
    let issuer = get(cert, "spec.issuerRef.name").as_str().expect("issuer");
    assert_eq!(
        get(find(&docs, "Issuer", issuer), "metadata.namespace").as_str(),
        Some(ns)
    );

    // the CRD's conversion goes to the webhook Service on /convert, with the CA injected
    let crd = find(&docs, "CustomResourceDefinition", "captains.crew.my.domain");
    assert_eq!(
        crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"].as_str(),
        Some("hooks-system/hooks-serving-cert")
    );
    assert_eq!(
        get(crd, "spec.conversion.strategy").as_str(),
        Some("Webhook")
    );
    let conversion = get(crd, "spec.conversion.webhook.clientConfig.service");
    assert_eq!(
        get(conversion, "name").as_str(),
        Some("hooks-webhook-service")
    );
    assert_eq!(get(conversion, "namespace").as_str(), Some(ns));
    assert_eq!(get(conversion, "path").as_str(), Some("/convert"));
    let stored: Vec<&str> = get(crd, "spec.versions")
        .as_array()
        .expect("versions")
        .iter()
        .filter(|v| get(v, "storage").as_bool() == Some(true))
        .filter_map(|v| get(v, "name").as_str())
        .collect();
    assert_eq!(stored, ["v1"], "the hub is the storage version");

    for (kind, name, paths) in [
        (
            "MutatingWebhookConfiguration",
            "hooks-mutating-webhook-configuration",
            &["/mutate-crew-my-domain-v1-captain"][..],
        ),
        (
            "ValidatingWebhookConfiguration",
            "hooks-validating-webhook-configuration",
            &[
                "/validate-apps-v1-deployment",
                "/validate-crew-my-domain-v1-captain",
            ][..],
        ),
    ] {
        let config = find(&docs, kind, name);
        assert_eq!(
            config["metadata"]["annotations"]["cert-manager.io/inject-ca-from"].as_str(),
            Some("hooks-system/hooks-serving-cert"),
            "{kind} gets the serving certificate's CA"
        );
        let hooks = get(config, "webhooks").as_array().expect("webhooks");
        let mut served: Vec<&str> = hooks
            .iter()
            .map(|h| get(h, "clientConfig.service.path").as_str().expect("path"))
            .collect();
        served.sort_unstable();
        assert_eq!(served, paths, "{kind} paths");
        for hook in hooks {
            assert_eq!(
                get(hook, "clientConfig.service.name").as_str(),
                Some("hooks-webhook-service")
            );
            assert_eq!(
                get(hook, "clientConfig.service.namespace").as_str(),
                Some(ns)
            );
        }
    }
}

/// A conversion webhook alone (no defaulting or validation, so `make manifests` writes no
/// config/webhook/manifests.yaml): `kubectl kustomize config/default` still renders, with the
/// webhook Service and certificate, the CRD converting through that Service, and no webhook
/// configuration.
#[test]
fn a_conversion_webhook_alone_kustomizes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("convert");
    std::fs::create_dir_all(&dir).expect("mkdir");
    ok(&dir, "init --domain my.domain");
    ok(&dir, "create api --group crew --version v1 --kind Captain");
    ok(&dir, "create api --group crew --version v2 --kind Captain");
    ok(
        &dir,
        "create webhook --group crew --version v1 --kind Captain --conversion --spoke v2",
    );
    ok(&dir, "manifests");
    assert!(
        !dir.join("config/webhook/manifests.yaml").exists(),
        "no admission webhook, so no webhook configurations"
    );
    let Some(docs) = kustomize_default(&dir) else {
        return;
    };
    find(&docs, "Service", "convert-webhook-service");
    find(&docs, "Certificate", "convert-serving-cert");
    let crd = find(&docs, "CustomResourceDefinition", "captains.crew.my.domain");
    assert_eq!(
        get(crd, "spec.conversion.webhook.clientConfig.service.name").as_str(),
        Some("convert-webhook-service")
    );
    assert_eq!(
        crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"].as_str(),
        Some("convert-system/convert-serving-cert")
    );
    assert!(
        !docs.iter().any(|d| matches!(
            get(d, "kind").as_str(),
            Some("MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration")
        )),
        "no webhook configuration is rendered"
    );
}
