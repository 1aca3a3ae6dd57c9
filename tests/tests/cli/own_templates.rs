//! Templates of the project's own (`.operator-gen/templates/`) and of the user's
//! (`$XDG_CONFIG_HOME/operator-gen/templates/`): a file there replaces operator-gen's template of
//! the same path, or adds one; `PROJECT` lists the project's; `alpha generate` and `alpha update`
//! copy them and render with them; a template that does not render is a one-line error naming
//! its file and line, with nothing written.

use std::path::Path;
use std::process::{Command, Stdio};

use operator_gen_tests::cli::{self, git};

const CONTROLLER: &str = "api/src/controller/{{controller_file}}.rs.tera";
const ADDED: &str = "api/docs/{{kind_lower}}.md.tera";
const TODO: &str = "// TODO(user): make the cluster match `obj.spec` here.";
const HOUSE: &str = "// HOUSE RULE: every change goes through the change board.";

fn ok(dir: &Path, line: &str) -> cli::Output {
    let out = cli::run(dir, &cli::split_args(line));
    assert_eq!(out.code, 0, "`{line}` failed: {}", out.stderr);
    out
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write");
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// The project's override of the controller template: operator-gen's own with the TODO line
/// replaced by the house rule.
fn house_controller() -> String {
    let ours = read(&cli::workspace_root().join("templates"), CONTROLLER);
    assert!(
        ours.contains(TODO),
        "the controller template lost its TODO line"
    );
    ours.replace(TODO, HOUSE)
}

/// A project with an overridden controller template and an added docs template, made by `init`
/// and `create api`.
fn project_with_own_templates(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    write(
        dir,
        &format!(".operator-gen/templates/{CONTROLLER}"),
        &house_controller(),
    );
    write(
        dir,
        &format!(".operator-gen/templates/{ADDED}"),
        "# {{ kind }}\n\nThe {{ kind }} API of group {{ api_group }}.\n",
    );
    ok(dir, "init --domain example.com");
    ok(dir, "create api --group crew --version v1 --kind Captain");
}

#[test]
fn own_templates_are_used_by_create_api_recorded_and_replayed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    project_with_own_templates(&dir);
    let controller = read(&dir, "src/controller/captain.rs");
    assert!(
        controller.contains(HOUSE) && !controller.contains(TODO),
        "{controller}"
    );
    assert_eq!(
        read(&dir, "docs/captain.md"),
        "# Captain\n\nThe Captain API of group crew.example.com.\n"
    );
    let project = read(&dir, "PROJECT");
    let recorded = "  templates.operator-gen.io/v1-alpha:\n    directory: .operator-gen/templates\n    files:\n    - api/docs/{{kind_lower}}.md.tera\n    - api/src/controller/{{controller_file}}.rs.tera\n";
    assert!(project.contains(recorded), "{project}");

    // alpha generate copies the templates before it replays, and renders with them
    ok(&dir, "alpha generate --output-dir ../out");
    let out = tmp.path().join("out");
    for rel in [
        "src/controller/captain.rs",
        "docs/captain.md",
        "PROJECT",
        &format!(".operator-gen/templates/{CONTROLLER}"),
    ] {
        assert_eq!(read(&out, rel), read(&dir, rel), "{rel}");
    }
}

#[test]
fn alpha_update_keeps_the_projects_own_templates() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("demo");
    project_with_own_templates(&dir);
    git(&dir, &["init", "--quiet", "--initial-branch", "main"]);
    git(&dir, &["config", "user.name", "Crew"]);
    git(&dir, &["config", "user.email", "crew@example.com"]);
    git(&dir, &["config", "commit.gpgsign", "false"]);
    git(&dir, &["add", "--all"]);
    git(&dir, &["commit", "--quiet", "-m", "scaffold"]);
    // this operator-gen stands for the older one too: the ancestor and the upgrade both render
    // with the project's templates, which the replay copies from the committed tree
    let bin = cli::operator_gen_bin().display().to_string();
    ok(
        &dir,
        &format!("alpha update --from-version 0.1.0 --from-binary {bin}"),
    );
    let branch = git(&dir, &["branch", "--show-current"]);
    assert_ne!(
        branch.trim(),
        "main",
        "alpha update left the repository on main"
    );
    let controller = read(&dir, "src/controller/captain.rs");
    assert!(
        controller.contains(HOUSE) && !controller.contains(TODO),
        "{controller}"
    );
    assert!(dir.join("docs/captain.md").is_file());
    assert!(read(&dir, "PROJECT").contains("templates.operator-gen.io/v1-alpha:"));
}

#[test]
fn the_projects_templates_win_over_the_users() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = tmp.path().join("config");
    write(
        &config,
        &format!("operator-gen/templates/{ADDED}"),
        "user: {{ kind }}\n",
    );
    write(
        &config,
        "operator-gen/templates/api/docs/owners.md.tera",
        "owners of {{ group }}\n",
    );
    let dir = tmp.path().join("demo");
    std::fs::create_dir_all(&dir).expect("mkdir");
    write(
        &dir,
        &format!(".operator-gen/templates/{ADDED}"),
        "project: {{ kind }}\n",
    );
    for line in [
        "init --domain example.com",
        "create api --group crew --version v1 --kind Captain",
    ] {
        let out = Command::new(cli::operator_gen_bin())
            .args(cli::split_args(line))
            .current_dir(&dir)
            .env("XDG_CONFIG_HOME", &config)
            .stdin(Stdio::null())
            .output()
            .expect("run operator-gen");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "`{line}` failed: {stderr}");
    }
    assert_eq!(read(&dir, "docs/captain.md"), "project: Captain\n");
    assert_eq!(read(&dir, "docs/owners.md"), "owners of crew\n");
    // PROJECT lists the project's templates only: the user's are not part of the project
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("    - api/docs/{{kind_lower}}.md.tera\n"),
        "{project}"
    );
    assert!(!project.contains("owners.md"), "{project}");
}

#[test]
fn a_template_that_does_not_render_is_one_line_naming_file_and_line_and_nothing_is_written() {
    let cases = [
        (
            "{{ kind }}\nline two\n{{ no_such_variable }}\n",
            ":3: Variable `no_such_variable` is not defined",
        ),
        ("# {{ kind }\n", ":1: Found `}` but expected }}"),
        ("text\n{% if %}\n", ":2: Found `%}` but expected one of"),
    ];
    for (text, expected) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("demo");
        std::fs::create_dir_all(&dir).expect("mkdir");
        ok(&dir, "init --domain example.com");
        write(&dir, &format!(".operator-gen/templates/{ADDED}"), text);
        let before = cli::tree_hash(&dir);
        let out = cli::run(
            &dir,
            &cli::split_args("create api --group crew --version v1 --kind Captain"),
        );
        assert_eq!(out.code, 1, "{text:?}: {}", out.stderr);
        let lines: Vec<&str> = out.stderr.lines().collect();
        let wanted = format!("error: .operator-gen/templates/{ADDED}{expected}");
        assert!(
            lines.len() == 1 && lines[0].starts_with(&wanted),
            "{text:?}: wanted one line starting {wanted:?}, got:\n{}",
            out.stderr
        );
        assert!(lines[0].ends_with("fix the template, or remove it to use operator-gen's own"));
        assert_eq!(
            cli::tree_hash(&dir),
            before,
            "{text:?}: the project changed"
        );
    }
}
