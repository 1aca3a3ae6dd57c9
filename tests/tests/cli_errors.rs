//! Bad input, table-driven: each row sets a directory up, runs one command that must fail, and
//! checks the exit code, the one-line error text, and that the directory tree hash is the same
//! before and after (nothing on disk changed).

use std::path::Path;

use operator_gen_tests::cli;

/// How the directory looks before the failing command.
#[derive(Clone, Copy, Debug)]
enum Setup {
    /// Empty.
    Empty,
    /// `init`.
    Init,
    /// `init`, then `create api` for crew/v1 Captain.
    WithCaptain,
    /// `init`, then the controllers marker removed from `src/main.rs`.
    NoMarker,
    /// `init`, then `src/main.rs` deleted.
    NoMain,
    /// A `Makefile` of the user's own.
    Makefile,
    /// `init --namespaced`.
    InitNamespaced,
}

struct Row {
    setup: Setup,
    args: &'static str,
    /// Expected substring of stderr.
    error: &'static str,
    code: i32,
}

const fn row(setup: Setup, args: &'static str, error: &'static str, code: i32) -> Row {
    Row {
        setup,
        args,
        error,
        code,
    }
}

const CAPTAIN: &str = "create api --group crew --version v1 --kind Captain";

fn rows() -> Vec<Row> {
    use Setup::*;
    vec![
        // init
        row(
            Init,
            "init",
            "target directory is already initialized: PROJECT exists",
            1,
        ),
        row(
            Empty,
            "init --project-name Bad_Name",
            "project name \"Bad_Name\" is invalid",
            1,
        ),
        row(Empty, "init --project-name -lead", "", 2),
        row(
            Empty,
            "init --project-name self",
            "cannot name a rust crate",
            1,
        ),
        row(
            Empty,
            "init --project-name 9lives",
            "must start with a letter",
            1,
        ),
        row(
            Empty,
            "init --domain my..domain",
            "domain \"my..domain\" is invalid",
            1,
        ),
        row(
            Empty,
            "init --project-name null",
            "project name \"null\" reads as a boolean or null in YAML manifests",
            1,
        ),
        row(
            Empty,
            "init --domain yes",
            "domain \"yes\" reads as a boolean or null in YAML manifests",
            1,
        ),
        row(
            Empty,
            "init --k8s-version 1.20",
            "kubernetes version \"1.20\" is not supported",
            1,
        ),
        row(Empty, "init --license mit", "invalid value 'mit'", 2),
        row(
            Empty,
            "init --runtime-path /nonexistent/operator-gen",
            "--runtime-path /nonexistent/operator-gen holds no Cargo.toml",
            1,
        ),
        row(
            Empty,
            "init --runtime-path /tmp --runtime-git x",
            "cannot be used with",
            2,
        ),
        row(
            Makefile,
            "init",
            "init would overwrite Makefile; move it out of the directory",
            1,
        ),
        // create api: project state
        row(Empty, CAPTAIN, "no PROJECT file", 1),
        row(WithCaptain, CAPTAIN, "API resource already exists", 1),
        row(
            WithCaptain,
            "create api --group ship --version v1 --kind Frigate",
            "--multigroup",
            1,
        ),
        row(
            NoMarker,
            CAPTAIN,
            "src/main.rs has no `// +operator-gen:scaffold:controllers` line",
            1,
        ),
        row(NoMain, CAPTAIN, "src/main.rs is missing", 1),
        row(
            WithCaptain,
            "create api --group crew --version v2 --kind Captain --force",
            "the controller module `captain` already belongs to crew/v1 Captain",
            1,
        ),
        row(
            InitNamespaced,
            "create api --group crew --version v1 --kind Fleet --namespaced=false",
            "a namespace-scoped manager",
            1,
        ),
        row(
            InitNamespaced,
            "create api --group core --version v1 --kind Node --resource=false",
            "kind Node is cluster-scoped",
            1,
        ),
        // create api: names
        row(
            Init,
            "create api --group crew --version v1 --kind captain",
            "must start with an uppercase character",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Cap_tain",
            "invalid kind \"Cap_tain\"",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Option",
            "shadow a rust prelude",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Manager",
            "shadow a rust prelude or generated name",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Type",
            "module name `type` is a rust keyword",
            1,
        ),
        row(
            Init,
            "create api --group crew --version V1 --kind Captain",
            "version \"V1\" is invalid",
            1,
        ),
        row(
            Init,
            "create api --group crew --version 1beta1 --kind Captain",
            "must start with a letter",
            1,
        ),
        row(
            Init,
            "create api --group Crew --version v1 --kind Captain",
            "must be a DNS-1123 subdomain",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Captain --plural Captains",
            "plural \"Captains\" is invalid",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Captain --resource=false --controller=false",
            "nothing to scaffold",
            1,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Captain --resource=false",
            "--resource=false needs an existing type",
            1,
        ),
        row(
            Init,
            "create api --group apps --version v1 --kind Deploymnet --resource=false",
            "did you mean --kind Deployment",
            1,
        ),
        row(
            Init,
            "create api --group apps --version v7 --kind Deployment --resource=false",
            "has no version \"v7\"",
            1,
        ),
        row(
            Init,
            "create api --version v1 --kind Captain",
            "--group <GROUP>",
            2,
        ),
        row(
            Init,
            "create api --group crew --version v1 --kind Captain --namespaced=maybe",
            "invalid value 'maybe'",
            2,
        ),
        // other commands
        row(Empty, "completion nosh", "invalid value 'nosh'", 2),
        row(Empty, "frobnicate", "unrecognized subcommand", 2),
    ]
}

fn set_up(dir: &Path, setup: Setup) {
    let ok = |args: &str| {
        let out = cli::run(dir, &cli::split_args(args));
        assert_eq!(out.code, 0, "setup `{args}` failed: {}", out.stderr);
    };
    match setup {
        Setup::Empty => {}
        Setup::Init => ok("init"),
        Setup::WithCaptain => {
            ok("init");
            ok(CAPTAIN);
        }
        Setup::NoMarker => {
            ok("init");
            let main = dir.join("src/main.rs");
            let text = std::fs::read_to_string(&main).expect("read main.rs");
            let text = text.replace("// +operator-gen:scaffold:controllers", "");
            std::fs::write(&main, text).expect("write main.rs");
        }
        Setup::InitNamespaced => ok("init --namespaced"),
        Setup::Makefile => std::fs::write(dir.join("Makefile"), "all:\n").expect("write Makefile"),
        Setup::NoMain => {
            ok("init");
            std::fs::remove_file(dir.join("src/main.rs")).expect("remove main.rs");
        }
    }
}

#[test]
fn bad_input_fails_cleanly_and_changes_nothing() {
    let mut failures = Vec::new();
    for row in rows() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("demo");
        std::fs::create_dir_all(&dir).expect("mkdir");
        set_up(&dir, row.setup);
        let before = cli::tree_hash(&dir);
        let out = cli::run(&dir, &cli::split_args(row.args));
        let after = cli::tree_hash(&dir);
        let what = format!("`operator-gen {}` ({:?})", row.args, row.setup);
        if out.code != row.code {
            failures.push(format!(
                "{what}: exit code {} instead of {}; stderr: {}",
                out.code, row.code, out.stderr
            ));
        }
        if !out.stderr.contains(row.error) {
            failures.push(format!(
                "{what}: stderr lacks {:?}: {}",
                row.error, out.stderr
            ));
        }
        if out.stderr.contains("panicked") {
            failures.push(format!("{what}: panicked: {}", out.stderr));
        }
        if before != after {
            failures.push(format!("{what}: the directory changed"));
        }
        if row.code == 1 {
            let lines: Vec<&str> = out.stderr.lines().collect();
            let error_line = lines.iter().find(|l| l.starts_with("error: "));
            match error_line {
                None => failures.push(format!("{what}: no `error: ` line in {:?}", out.stderr)),
                Some(line) => {
                    let message = &line["error: ".len()..];
                    if lines.len() != 1 {
                        failures.push(format!(
                            "{what}: more than one line on stderr: {:?}",
                            out.stderr
                        ));
                    }
                    // Lower case, except for a leading acronym such as kubebuilder's "API resource ...".
                    let mut chars = message.chars();
                    let capitalised = chars.next().is_some_and(char::is_uppercase)
                        && chars.next().is_some_and(char::is_lowercase);
                    if message.ends_with('.') || capitalised {
                        failures.push(format!(
                            "{what}: not lower case without trailing period: {message}"
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
