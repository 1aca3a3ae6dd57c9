//! The template variables page: the fields of each command's context, with their doc comments,
//! read from the structs the commands serialize into their templates (their one home).

use super::page::{cell, generated_note};

/// Each context: the command, its templates' directory, the source file and the struct.
const CONTEXTS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "init",
        "init/",
        "cli/src/scaffolding/init.rs",
        include_str!("../scaffolding/init.rs"),
        "InitContext",
    ),
    (
        "create api",
        "api/, deploy-image/",
        "cli/src/scaffolding/api.rs",
        include_str!("../scaffolding/api.rs"),
        "ApiContext",
    ),
    (
        "create api --image: deploy_image.*",
        "deploy-image/",
        "cli/src/scaffolding/deploy_image.rs",
        include_str!("../scaffolding/deploy_image.rs"),
        "DeployImageContext",
    ),
    (
        "create webhook",
        "webhook/, fragments/webhook/",
        "cli/src/scaffolding/webhook.rs",
        include_str!("../scaffolding/webhook.rs"),
        "WebhookContext",
    ),
];

/// The fields of struct `name` in `source`, each with its doc comment.
fn fields(source: &str, name: &str) -> Vec<(String, String)> {
    let Ok(file) = syn::parse_file(source) else {
        return Vec::new();
    };
    let found = file.items.into_iter().find_map(|item| match item {
        syn::Item::Struct(s) if s.ident == name => Some(s),
        _ => None,
    });
    let Some(s) = found else {
        return Vec::new();
    };
    s.fields
        .iter()
        .filter_map(|f| {
            let ident = f.ident.as_ref()?.to_string();
            let doc: Vec<String> = f.attrs.iter().filter_map(doc_line).collect();
            Some((ident, doc.join("\n")))
        })
        .collect()
}

fn doc_line(attr: &syn::Attribute) -> Option<String> {
    let syn::Meta::NameValue(nv) = &attr.meta else {
        return None;
    };
    if !nv.path.is_ident("doc") {
        return None;
    }
    match &nv.value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value().trim().to_owned()),
        _ => None,
    }
}

/// The page: a table of variables per command.
pub fn variables_page() -> String {
    let sources: Vec<&str> = CONTEXTS.iter().map(|c| c.2).collect();
    let mut out = String::from("# Template variables\n\n");
    out.push_str(&generated_note(&sources.join(", ")));
    out.push_str(
        "\nWhat a template sees, by the command that renders it: every template of a command has \
         the same variables, and `markers` (the scaffold markers by key, `{{ markers.modules }}`). \
         A template of your own ([Templates of your own](../plugins/templates.md)) sees the same.\n",
    );
    for (command, dirs, path, source, name) in CONTEXTS {
        out.push_str(&format!(
            "\n## `{command}`\n\nTemplates under {}; from `{name}` in `{path}`.\n\n| variable | what it holds |\n|---|---|\n",
            dirs.split(", ")
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        ));
        for (field, doc) in fields(source, name) {
            out.push_str(&format!("| `{field}` | {} |\n", cell(&doc)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_context_has_its_fields() {
        for (_, _, path, source, name) in CONTEXTS {
            let names: Vec<String> = fields(source, name).into_iter().map(|f| f.0).collect();
            assert!(
                names.iter().any(|n| n == "header" || n == "image"),
                "{path}: {names:?}"
            );
        }
        let page = variables_page();
        assert!(page.contains("| `kind_module` | The kind's Rust module name (`frigate_ship`). |"));
        assert!(page.contains("| `image_env` |"));
    }
}
