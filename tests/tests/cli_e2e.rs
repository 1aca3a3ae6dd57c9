//! End to end: `init`, `create api` for two kinds of one group (one cluster-scoped),
//! `make manifests` with this checkout's `operator-gen`, `cargo build` and `cargo test` of the
//! generated project, then `kubectl kustomize config/default`, checking kinds, names and the
//! restricted security settings it yields.
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
    // Includes the generated crd_matches_make_manifests tests: derive output == make manifests.
    let tests = shell(&dir, &cargo, &["test"]);
    for test in [
        "captain::tests::crd_matches_make_manifests",
        "first_mate::tests::crd_matches_make_manifests",
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
