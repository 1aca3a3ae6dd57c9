//! `version` and `completion`: what they print, for every shell.

use operator_gen_tests::cli;

fn args(line: &str) -> Vec<String> {
    cli::split_args(line)
}

#[test]
fn version_names_the_cli_and_the_crates_it_scaffolds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = cli::run(dir.path(), &args("version"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    for needle in [
        "operator-gen 0.1.0",
        "kube 5.0.0",
        "k8s-openapi 0.29.0",
        "default 1.37",
    ] {
        assert!(
            out.stdout.contains(needle),
            "version output lacks {needle}: {}",
            out.stdout
        );
    }
}

#[test]
fn completion_scripts_for_every_shell() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (shell, needle) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef operator-gen"),
        ("fish", "complete -c operator-gen"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = cli::run(dir.path(), &args(&format!("completion {shell}")));
        assert_eq!(out.code, 0, "{shell}: {}", out.stderr);
        assert!(out.stdout.contains(needle), "{shell} script lacks {needle}");
        assert!(
            out.stdout.contains("multigroup"),
            "{shell} script does not complete init flags"
        );
    }
}
