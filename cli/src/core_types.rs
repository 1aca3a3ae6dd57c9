//! The Kubernetes built-in kinds `create api --resource=false` can write a controller for: the
//! listable kinds of the generated table of Kubernetes types (`operator_gen_codegen::known`),
//! those k8s-openapi has under `k8s_openapi::api`.

/// One built-in kind: k8s-openapi module, API group, version, kind, plural, namespaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreType {
    /// The module under `k8s_openapi::api`.
    pub module: &'static str,
    /// The API group (`""` for the core group).
    pub group: &'static str,
    /// The API version.
    pub version: &'static str,
    /// The kind.
    pub kind: &'static str,
    /// The resource name (plural).
    pub plural: &'static str,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
}

/// Every built-in listable kind under `k8s_openapi::api`, sorted by group, version and kind.
pub fn core_types() -> Vec<CoreType> {
    operator_gen_codegen::known::kinds()
        .iter()
        .filter_map(|k| {
            let module = k.type_path.strip_prefix("api::")?.split("::").next()?;
            Some(CoreType {
                module,
                group: &k.group,
                version: &k.version,
                kind: &k.kind,
                plural: &k.plural,
                namespaced: k.namespaced,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_kinds_come_from_the_table() {
        let all = core_types();
        let find = |group: &str, version: &str, kind: &str| {
            all.iter()
                .find(|c| c.group == group && c.version == version && c.kind == kind)
                .copied()
        };
        assert_eq!(
            find("apps", "v1", "Deployment"),
            Some(CoreType {
                module: "apps",
                group: "apps",
                version: "v1",
                kind: "Deployment",
                plural: "deployments",
                namespaced: true,
            })
        );
        assert_eq!(
            find("", "v1", "Namespace").map(|c| (c.module, c.namespaced)),
            Some(("core", false))
        );
        assert_eq!(
            find("networking.k8s.io", "v1", "Ingress").map(|c| c.plural),
            Some("ingresses")
        );
        // kinds outside k8s_openapi::api (CustomResourceDefinition, APIService) are not offered
        assert_eq!(
            find("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            None
        );
    }
}
